#!/usr/bin/env python3
"""A small JAX regression whose batch shape can change every step.

One jitted training step (a linear model, SGD) on synthetic data.  By
default the batch has one row more at every step, so each step traces and
compiles the step function again (a recompilation storm); --steady keeps
the shape, so the step compiles once.  Every step prints
"step N batch B loss X"; the end prints the compilations and persistent
cache hits counted through jax.monitoring, and reports them (and each step)
through xlaunch_report.

    python examples/jax_shape_drift.py [STEPS] [--steady] [--batch N]

With JAX_LOG_COMPILES=1 JAX logs one "Finished XLA compilation of jit(step)"
line per compilation; with a JAX_COMPILATION_CACHE_DIR the second run of the
same command loads every program from the cache.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "etc", "report"))
if os.environ.get("XLAUNCH_REPORT_HELPER"):
    sys.path.insert(0, os.path.dirname(os.path.abspath(os.environ["XLAUNCH_REPORT_HELPER"])))
import xlaunch_report as xr  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

IN_DIM, OUT_DIM = 8, 2


def positive_int(text):
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("not a positive integer: %r" % text)
    return value


def loss_fn(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


@jax.jit
def step(w, x, y):
    loss, grad = jax.value_and_grad(loss_fn)(w, x, y)
    return w - 0.1 * grad, loss


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("steps", nargs="?", type=positive_int, default=40,
                    help="training steps (default 40)")
    ap.add_argument("--steady", action="store_true",
                    help="the same batch shape every step (one compilation)")
    ap.add_argument("--batch", type=positive_int, default=16,
                    help="rows in the first batch (default 16)")
    args = ap.parse_args()

    counter = xr.CompileCounter().start()
    rng = np.random.default_rng(0)
    teacher = rng.standard_normal((IN_DIM, OUT_DIM)).astype(np.float32)
    w = jnp.zeros((IN_DIM, OUT_DIM), jnp.float32)

    t_start = time.perf_counter()
    for i in range(args.steps):
        t0 = time.perf_counter()
        rows = args.batch if args.steady else args.batch + i
        x = rng.standard_normal((rows, IN_DIM)).astype(np.float32)
        y = x @ teacher
        w, loss = step(w, x, y)
        loss = float(loss)
        dt = time.perf_counter() - t0
        if i == 0:
            print("time to first step: %.3f s" % (time.perf_counter() - t_start), flush=True)
        print("step %d batch %d loss %.6f" % (i, rows, loss), flush=True)
        xr.report_step(i, loss, dt)

    counter.report()
    print("compiles: %d, persistent cache hits: %d" % (counter.compiles, counter.cache_hits),
          flush=True)


if __name__ == "__main__":
    main()
