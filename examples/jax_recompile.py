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
    if mode == "drift":
        return base + step
    if mode == "sparse":
        return base + step // every
    return base


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=("drift", "steady", "sparse", "beside"))
    ap.add_argument("steps", nargs="?", type=int, default=40)
    ap.add_argument("--every", type=int, default=8, help="sparse: steps between new shapes")
    ap.add_argument("--step-ms", type=float, default=30.0, help="the time a step takes, at least")
    ap.add_argument("--exit-sleep", type=float, default=0.0, help="seconds to sleep at the end")
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    teacher = rng.standard_normal((IN_DIM, OUT_DIM)).astype(np.float32)
    w = jnp.zeros((IN_DIM, OUT_DIM), jnp.float32)
    base = 100
    for i in range(args.steps):
        t0 = time.perf_counter()
        rows = rows_at(args.mode, i, args.every, base)
        x = rng.standard_normal((rows, IN_DIM)).astype(np.float32)
        w, loss = train_step(w, x, x @ teacher)
        if args.mode == "beside":
            xe = rng.standard_normal((base + i, IN_DIM)).astype(np.float32)
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
