#!/usr/bin/env python3
"""A small data-parallel MLP trained on synthetic data with JAX.

The global batch is split over every local device along a "data" mesh axis;
the parameters are replicated.  The script prints the devices it sees, the
loss at a few steps and the mean step time, and reports predicted memory,
observed peak memory and compile counts through xlaunch_report (to the file
named by XLAUNCH_REPORT, when xlaunch supervises the run).

    python examples/train_mlp.py [STEPS] [--micro-batch N] [--hidden N]

MICRO_BATCH and HIDDEN in the environment stand in for absent options, so a
profile's candidates can change the job's size.
"""

import argparse
import os
import sys
import time

# The report helper: where xlaunch says it is (XLAUNCH_REPORT_HELPER, the
# path of xlaunch_report.py), else next to this example in the source tree.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "etc", "report"))
if os.environ.get("XLAUNCH_REPORT_HELPER"):
    sys.path.insert(0, os.path.dirname(os.path.abspath(os.environ["XLAUNCH_REPORT_HELPER"])))
import xlaunch_report as xr  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

IN_DIM, OUT_DIM = 16, 4


def positive_int(text):
    value = int(text)
    if value <= 0:
        raise ValueError(text)
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
    except ValueError:
        sys.exit("train_mlp.py: %s=%r: not a positive integer" % (env_name, text))


def init_params(key, hidden):
    sizes = [IN_DIM, hidden, hidden, OUT_DIM]
    keys = jax.random.split(key, len(sizes) - 1)
    return [(jax.random.normal(k, (m, n)) / jnp.sqrt(m), jnp.zeros(n))
            for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def predict(params, x):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss_fn(params, x, y):
    return jnp.mean((predict(params, x) - y) ** 2)


def train_step(params, x, y, lr=0.05):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    params = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
    return params, loss


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("steps", nargs="?", type=positive_int, default=20,
                    help="training steps (default 20)")
    ap.add_argument("--micro-batch", type=positive_int,
                    help="examples per device per step (env MICRO_BATCH, default 256)")
    ap.add_argument("--hidden", type=positive_int,
                    help="width of the two hidden layers (env HIDDEN, default 512)")
    args = ap.parse_args()
    micro_batch = setting(args.micro_batch, "MICRO_BATCH", 256)
    hidden = setting(args.hidden, "HIDDEN", 512)

    counter = xr.CompileCounter().start()  # before anything is compiled

    devices = jax.devices()
    print("devices: %d" % len(devices), flush=True)
    print("platform: %s" % devices[0].platform)
    global_batch = micro_batch * len(devices)
    print("micro batch: %d per device, global batch %d, hidden %d"
          % (micro_batch, global_batch, hidden), flush=True)

    mesh = Mesh(devices, ("data",))
    batch_sharding = NamedSharding(mesh, P("data"))   # rows split over devices
    replicated = NamedSharding(mesh, P())             # every device has a copy

    # Synthetic regression data from a fixed random "teacher" network and the
    # model's initial parameters, created directly on the devices: the batch
    # split along "data", the parameters replicated.
    def setup(key):
        k_data, k_teacher, k_params = jax.random.split(key, 3)
        x = jax.random.normal(k_data, (global_batch, IN_DIM))
        y = predict(init_params(k_teacher, 32), x)
        return init_params(k_params, hidden), x, y

    try:
        # An "rbg" key: its generator compiles faster on CPU than threefry's.
        key = jax.random.key(0, impl="rbg")
        shardings = (replicated, batch_sharding, batch_sharding)
        params, x, y = jax.jit(setup, out_shardings=shardings)(key)

        step = jax.jit(train_step, donate_argnums=0)
        compiled = step.lower(params, x, y).compile()
        predicted = xr.report_predicted_from_jax(compiled, jax.local_devices())
        if predicted is not None:
            print("predicted memory: %d bytes (XLA memory analysis)" % predicted)

        times = []
        report_at = {0, args.steps - 1} | set(range(0, args.steps, max(args.steps // 4, 1)))
        for i in range(args.steps):
            t0 = time.perf_counter()
            params, loss = compiled(params, x, y)
            loss = float(loss)  # waits for the step to finish
            dt = time.perf_counter() - t0
            times.append(dt)
            xr.report_step(i, loss, dt)
            if i in report_at:
                print("step %d loss %.6f" % (i, loss), flush=True)

        steady = times[1:] or times
        print("mean step time: %.6f s" % (sum(steady) / len(steady)))
    finally:
        # Reported even when a step fails (out of memory, say), so that every
        # attempt has its observed memory and compile count on record.
        peak = xr.report_peak_from_jax(jax.local_devices())
        counter.report()
        if peak is not None:
            print("peak memory: %d bytes" % peak)
        print("compiles: %d, persistent cache hits: %d" % (counter.compiles, counter.cache_hits),
              flush=True)


if __name__ == "__main__":
    main()
