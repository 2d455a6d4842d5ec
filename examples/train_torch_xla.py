#!/usr/bin/env python3
"""A small MLP trained with PyTorch/XLA on synthetic data.

Meant for PJRT_DEVICE=CPU (the default here when PJRT_DEVICE is unset), with
the persistent compile cache where XLA_PERSISTENT_CACHE_PATH says.  Every
step prints "step N batch B loss X"; the end prints what torch_xla's own
metrics counted (compilations, persistent-cache hits, misses and failed
loads) and reports them, with each step, through xlaunch_report.

    python examples/train_torch_xla.py [STEPS] [--batch N] [--metrics]
                                       [--shape-change-at K | --shape-every-step]

--shape-change-at K   from step K on, the batch has one row more: one new
                      graph late in the run (one recompilation)
--shape-every-step    the batch grows by one row every step: a new graph each
                      step (a recompilation storm)
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

# torch_xla picks its device when first imported; CPU unless told otherwise.
os.environ.setdefault("PJRT_DEVICE", "CPU")

import torch  # noqa: E402
import torch_xla  # noqa: E402
import torch_xla.debug.metrics as met  # noqa: E402

IN_DIM, HIDDEN, OUT_DIM = 16, 64, 4


def positive_int(text):
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("not a positive integer: %r" % text)
    return value


def batch_rows(args, step):
    if args.shape_every_step:
        return args.batch + step
    if args.shape_change_at is not None and step >= args.shape_change_at:
        return args.batch + 1
    return args.batch


def counter(name):
    value = met.counter_value(name)
    return int(value) if value is not None else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("steps", nargs="?", type=positive_int, default=10,
                    help="training steps (default 10)")
    ap.add_argument("--batch", type=positive_int, default=32, help="rows per step (default 32)")
    ap.add_argument("--metrics", action="store_true",
                    help="print torch_xla's short metrics report at the end")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--shape-change-at", type=int, metavar="K",
                      help="one more row from step K on: one late recompilation")
    mode.add_argument("--shape-every-step", action="store_true",
                      help="one more row every step: a recompilation each step")
    args = ap.parse_args()
    if args.shape_change_at is not None and not 0 <= args.shape_change_at < args.steps:
        ap.error("--shape-change-at must be a step in 0..%d" % (args.steps - 1))

    torch.manual_seed(0)
    device = torch_xla.device()
    print("device: %s (PJRT_DEVICE=%s)" % (device, os.environ.get("PJRT_DEVICE")), flush=True)
    print("persistent cache: %s" % (os.environ.get("XLA_PERSISTENT_CACHE_PATH") or "off"), flush=True)

    model = torch.nn.Sequential(
        torch.nn.Linear(IN_DIM, HIDDEN), torch.nn.Tanh(),
        torch.nn.Linear(HIDDEN, OUT_DIM)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    teacher = torch.randn(IN_DIM, OUT_DIM)
    gen = torch.Generator().manual_seed(1)

    t_start = time.perf_counter()
    for step in range(args.steps):
        t0 = time.perf_counter()
        rows = batch_rows(args, step)
        x = torch.randn(rows, IN_DIM, generator=gen)
        y = torch.tanh(x @ teacher)
        x, y = x.to(device), y.to(device)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        torch_xla.sync()            # cut the graph: compile (or reuse) and run it
        value = loss.item()
        dt = time.perf_counter() - t0
        if step == 0:
            print("time to first step: %.3f s" % (time.perf_counter() - t_start), flush=True)
        print("step %d batch %d loss %.6f" % (step, rows, value), flush=True)
        xr.report_step(step, value, dt)

    # torch_xla's own counts: CompileTime is sampled once per real XLA
    # compilation; the persistent-cache counters exist once the cache is used.
    compiles = met.metric_data("CompileTime")
    compiles = compiles[0] if compiles else 0
    hits = counter("PersistentCacheHit")
    print("compiles: %d, persistent cache hits: %d, misses: %d, failed loads: %d"
          % (compiles, hits, counter("PersistentCacheMiss"),
             counter("PersistentCacheDeserializeFailure")), flush=True)
    xr.report_compiles(compiles, hits)
    if args.metrics:
        print(met.short_metrics_report(), end="", flush=True)


if __name__ == "__main__":
    main()
