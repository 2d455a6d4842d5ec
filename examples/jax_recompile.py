#!/usr/bin/env python3
"""A plain JAX training loop whose shapes drift in chosen ways.

Nothing in it talks to xlaunch: no report lines, no compile logging, no
step lines a pattern is told about; what recompiles is seen from outside
only (XLA's dump).  One jitted step of a small linear model, SGD, on
synthetic data; each step takes about --step-ms milliseconds.

    python examples/jax_recompile.py MODE [STEPS] [--every K] [--step-ms MS]
                                     [--exit-sleep S]

Modes:
  drift    the batch has one row more at every step: a new program each
           step (a storm)
  steady   one batch shape: the step compiles once
  sparse   one row more every K steps (--every, default 8): a recompilation
           every so often, all through the run (the slow form of a storm)
  beside   train_step keeps its shape while eval_step, run every step,
           gets one row more each time: a storm in one function beside a
           steady one
  ones     drift, with each batch built by jnp.ones((rows, 64)) and
           jnp.arange: JAX compiles its own programs (broadcast_in_dim,
           iota, ...) for every new shape, in the same steps as train_step
  normal   drift, with each batch drawn by jax.random.normal (JAX's own
           _normal and threefry programs storm beside train_step)
  model    steady, after a model's start: its parameters made by jnp.zeros
           and jax.random.normal in several shapes, so that JAX compiles
           its own programs a few times at start (a healthy job)
  rates    two functions of the user's storming at different rates:
           train_step gets one row more every step, eval_step every
           --every steps
--exit-sleep S sleeps S seconds after the last step (a slow exit).
"""

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

IN_DIM, OUT_DIM = 64, 8


def loss_fn(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


@jax.jit
def train_step(w, x, y):
    loss, grad = jax.value_and_grad(loss_fn)(w, x, y)
    return w - 0.01 * grad, loss


@jax.jit
def eval_step(w, x, y):
    return loss_fn(w, x, y)


def rows_at(mode, step, every, base):
    if mode in ("drift", "ones", "normal", "rates"):
        return base + step
    if mode == "sparse":
        return base + step // every
    return base


def batch(mode, rng, key, rows):
    """The step's input: from NumPy, or built by JAX's own programs."""
    if mode == "ones":
        x = jnp.ones((rows, IN_DIM), jnp.float32) * jnp.arange(rows, dtype=jnp.float32)[:, None] / rows
        return x, key
    if mode == "normal":
        key, sub = jax.random.split(key)
        return jax.random.normal(sub, (rows, IN_DIM), jnp.float32), key
    return rng.standard_normal((rows, IN_DIM)).astype(np.float32), key


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=("drift", "steady", "sparse", "beside", "ones", "normal", "rates", "model"))
    ap.add_argument("steps", nargs="?", type=int, default=40)
    ap.add_argument("--every", type=int, default=8, help="sparse: steps between new shapes")
    ap.add_argument("--step-ms", type=float, default=30.0, help="the time a step takes, at least")
    ap.add_argument("--exit-sleep", type=float, default=0.0, help="seconds to sleep at the end")
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    teacher = rng.standard_normal((IN_DIM, OUT_DIM)).astype(np.float32)
    w = jnp.zeros((IN_DIM, OUT_DIM), jnp.float32)
    # (the other modes compile nothing of JAX's random at start)
    key = jax.random.PRNGKey(0) if args.mode in ("normal", "model") else None
    base = 100
    if args.mode == "model":
        # a model's parameters, in several shapes, made by JAX's own programs
        params = []
        for shape in ((IN_DIM, 32), (32,), (32, 16), (16,), (16, OUT_DIM), (OUT_DIM,)):
            key, sub = jax.random.split(key)
            params.append(jax.random.normal(sub, shape, jnp.float32) * 0.01 + jnp.zeros(shape, jnp.float32))
        print("model: %d parameters" % sum(p.size for p in params), flush=True)
    for i in range(args.steps):
        t0 = time.perf_counter()
        rows = rows_at(args.mode, i, args.every, base)
        x, key = batch(args.mode, rng, key, rows)
        w, loss = train_step(w, x, x @ teacher)
        if args.mode == "beside" or (args.mode == "rates" and i % args.every == 0):
            erows = base + (i if args.mode == "beside" else i // args.every)
            xe = rng.standard_normal((erows, IN_DIM)).astype(np.float32)
            loss = eval_step(w, xe, xe @ teacher)
        loss = float(loss)
        left = args.step_ms / 1000.0 - (time.perf_counter() - t0)
        if left > 0:
            time.sleep(left)
    print("done: %d steps, last loss %.6f" % (args.steps, loss), flush=True)
    if args.exit_sleep > 0:
        time.sleep(args.exit_sleep)


if __name__ == "__main__":
    main()
