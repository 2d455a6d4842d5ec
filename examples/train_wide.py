#!/usr/bin/env python3
"""A memory-bound JAX training job: many features, each through its own
learned nonlinearity, then a linear readout, trained with SGD on synthetic
data.

Its activations grow with the micro batch (rows x features floats, several
times over for the backward pass) while a step costs few operations per
byte, so a ladder of micro batches climbs from hundreds of megabytes to
gigabytes in seconds on a CPU: the job the memory-frontier benchmark and the
learned-prediction test run.

    python examples/train_wide.py [STEPS] [--micro-batch N] [--features N]

MICRO_BATCH and FEATURES in the environment stand in for absent options, so
a profile's candidates can change the job's size.  It prints the rows per
step, each step's loss and time, and its compile count.
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("steps", nargs="?", type=positive_int, default=2,
                    help="training steps (default 2)")
    ap.add_argument("--micro-batch", type=positive_int,
                    help="rows per step (env MICRO_BATCH, default 4096)")
    ap.add_argument("--features", type=positive_int,
                    help="features per row (env FEATURES, default 1024)")
    args = ap.parse_args()
    rows = setting(args.micro_batch, "MICRO_BATCH", 4096)
    features = setting(args.features, "FEATURES", 1024)

    compiles = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, duration, **kw: compiles.append(event)
        if event == "/jax/core/compile/backend_compile_duration" else None)
    print("platform: %s, rows per step: %d, features: %d"
          % (jax.devices()[0].platform, rows, features), flush=True)

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
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
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
