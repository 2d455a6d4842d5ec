#!/usr/bin/env python3
"""A memory-bound JAX training job: many features, each through its own
learned nonlinearity, then a linear readout, trained with SGD on synthetic
data.

Its activations grow with the micro batch (rows x features floats, several
times over for the backward pass) while a step costs few operations per
byte, so a ladder of micro batches climbs from hundreds of megabytes to
gigabytes in seconds on a CPU: the job the memory-frontier benchmark and the
learned-prediction test run.

With --pass-rows N, a step of more than N rows accumulates its gradients
over passes of N rows: the activations stop growing
at N rows and only the batch itself keeps growing, so memory is piecewise
linear in the micro batch, with a bend at N.

    python examples/train_wide.py [STEPS] [--micro-batch N] [--features N]
                                  [--pass-rows N]

MICRO_BATCH, FEATURES and PASS_ROWS in the environment stand in for absent
options, so a profile's candidates can change the job's size.  It prints the
rows per step, each step's loss and time, and its compile count.
"""

import argparse
import os
import sys
import time

import jax
import jax.numpy as jnp

OUT = 4
BLOCK = 512


def positive_int(text):
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("%r is not a positive integer" % text)
    return value


def setting(option, env_name, default):
    """The option if given, else the environment variable, else DEFAULT."""
    if option is not None:
        return option
    text = os.environ.get(env_name)
    if not text:
        return default
    try:
        return positive_int(text)
    except (ValueError, argparse.ArgumentTypeError):
        sys.exit("train_wide.py: %s=%r: not a positive integer" % (env_name, text))


def predict(params, x):
    # every feature through its own scaled and shifted tanh, then a readout
    h = jnp.tanh(x * params["scale"] + params["shift"])
    return h @ params["readout"]


def loss_fn(params, x, y):
    return jnp.mean((predict(params, x) - y) ** 2)


def pass_loss(params, x, y, w, rows):
    # one pass of an accumulated step: rows another pass covered weigh nothing
    return jnp.sum(w[:, None] * (predict(params, x) - y) ** 2) / (rows * OUT)


def accumulated_grads(params, x, y, per_pass):
    """The loss and gradients of a step of x.shape[0] rows, computed pass by
    pass of per_pass rows (slices of the batch, no copy of it; the last pass
    ends at the last row and counts only the rows no pass had) and summed."""
    rows = x.shape[0]
    passes = -(-rows // per_pass)

    def one(acc, i):
        start = jnp.minimum(i * per_pass, rows - per_pass)
        xb = jax.lax.dynamic_slice_in_dim(x, start, per_pass)
        yb = jax.lax.dynamic_slice_in_dim(y, start, per_pass)
        w = (start + jnp.arange(per_pass) >= i * per_pass).astype(x.dtype)
        loss, grads = jax.value_and_grad(pass_loss)(params, xb, yb, w, rows)
        return jax.tree_util.tree_map(jnp.add, acc, grads), loss

    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    grads, losses = jax.lax.scan(one, zeros, jnp.arange(passes))
    return jnp.sum(losses), grads


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("steps", nargs="?", type=positive_int, default=2,
                    help="training steps (default 2)")
    ap.add_argument("--micro-batch", type=positive_int,
                    help="rows per step (env MICRO_BATCH, default 4096)")
    ap.add_argument("--features", type=positive_int,
                    help="features per row (env FEATURES, default 1024)")
    ap.add_argument("--pass-rows", type=positive_int,
                    help="at most this many rows per forward and backward pass; more are"
                         " accumulated (env PASS_ROWS, default: the whole step at once)")
    args = ap.parse_args()
    rows = setting(args.micro_batch, "MICRO_BATCH", 4096)
    features = setting(args.features, "FEATURES", 1024)
    per_pass = setting(args.pass_rows, "PASS_ROWS", rows)

    compiles = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, duration, **kw: compiles.append(event)
        if event == "/jax/core/compile/backend_compile_duration" else None)
    print("platform: %s, rows per step: %d, features: %d, rows per pass: %d"
          % (jax.devices()[0].platform, rows, features, min(rows, per_pass)), flush=True)

    def init(key):
        k1, k2 = jax.random.split(key)
        return {"scale": jnp.ones(features), "shift": jnp.zeros(features),
                "readout": jax.random.normal(k1, (features, OUT)) / jnp.sqrt(features),
                "teacher": jax.random.normal(k2, (features, OUT)) / jnp.sqrt(features)}

    def batch(key, teacher):
        # a small random block repeated: the data costs copies, not random draws
        base = jax.random.normal(key, (BLOCK, features))
        reps = -(-rows // BLOCK)
        x = jnp.tile(base, (reps, 1))[:rows]
        y = jnp.tile(jnp.sin(base) @ teacher, (reps, 1))[:rows]
        return x, y

    @jax.jit
    def train_step(params, x, y):
        if rows <= per_pass:
            loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        else:
            loss, grads = accumulated_grads(params, x, y, per_pass)
        return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), loss

    key = jax.random.key(0, impl="rbg")   # compiles faster on a CPU than threefry
    state = jax.jit(init)(key)
    teacher = state.pop("teacher")
    params = state
    make_batch = jax.jit(batch)
    try:
        for i in range(args.steps):
            x, y = make_batch(jax.random.fold_in(key, i), teacher)
            t0 = time.perf_counter()
            params, loss = train_step(params, x, y)
            loss = float(loss)  # waits for the step
            print("step %d loss %.5f time %.3f s" % (i, loss, time.perf_counter() - t0), flush=True)
    finally:
        print("compiles: %d" % len(compiles), flush=True)


if __name__ == "__main__":
    main()
