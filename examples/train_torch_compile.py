#!/usr/bin/env python3
"""A small MLP trained through torch.compile (TorchDynamo + Inductor) on the CPU.

The model's forward runs compiled; backward and the optimizer step run as
autograd and SGD do.  Every step prints "step N batch B loss X"; the end
prints the compiled frames, recompilations and graph breaks counted by
torch._dynamo's own counters, and reports the steps (and the compiled frame
count) through xlaunch_report.

    python examples/train_torch_compile.py [STEPS] [--mode MODE] [--backend B]

Modes:
  steady        one batch shape: compiled once
  drift-static  a new batch size every step with dynamic=False: one
                recompilation per step until torch._dynamo's recompile limit
                (8) is hit, after which the function runs uncompiled
  graph-break   one batch shape, but the forward checks its activations
                with .item(): the graph breaks there and two graphs are
                compiled
  dynamic       a new batch size every step with automatic dynamic shapes
                (the default): one recompilation marks the batch dimension
                dynamic, then no more

The Inductor and Triton caches go where TORCHINDUCTOR_CACHE_DIR and
TRITON_CACHE_DIR say (Inductor's default is under /tmp).
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

import torch  # noqa: E402

IN_DIM, HIDDEN, OUT_DIM = 16, 32, 4
MODES = ("steady", "drift-static", "graph-break", "dynamic")


def positive_int(text):
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("not a positive integer: %r" % text)
    return value


class MLP(torch.nn.Module):
    def __init__(self, check_finite):
        super().__init__()
        self.fc1 = torch.nn.Linear(IN_DIM, HIDDEN)
        self.fc2 = torch.nn.Linear(HIDDEN, OUT_DIM)
        self.check_finite = check_finite

    def forward(self, x):
        h = torch.tanh(self.fc1(x))
        # A Python value read from a tensor: Dynamo cannot trace past
        # .item(), so the graph breaks here.  The value is always True, so
        # the code after the break is compiled once.
        if self.check_finite and not torch.isfinite(h).all().item():
            raise FloatingPointError("non-finite activations")
        return self.fc2(h)


# (after the model: its lines are quoted by the tests and the notes)
def cpu_seconds():
    """CPU time of this process and of the children it has waited for (the
    C++ compiler Inductor runs), user and system."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("steps", nargs="?", type=positive_int, default=12,
                    help="training steps (default 12)")
    ap.add_argument("--mode", choices=MODES, default="steady",
                    help="what the batch shape and the model do (default steady)")
    ap.add_argument("--batch", type=positive_int, default=8, help="rows in the first batch (default 8)")
    ap.add_argument("--backend", default="inductor",
                    help="torch.compile backend (default inductor; eager skips code generation)")
    args = ap.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    model = MLP(check_finite=args.mode == "graph-break")
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    dynamic = False if args.mode == "drift-static" else None
    compiled = torch.compile(model, backend=args.backend, dynamic=dynamic)
    teacher = torch.randn(IN_DIM, OUT_DIM)
    gen = torch.Generator().manual_seed(1)
    drift = args.mode in ("drift-static", "dynamic")

    t_start = time.perf_counter()
    cpu_start = cpu_seconds()
    for step in range(args.steps):
        t0 = time.perf_counter()
        rows = args.batch + step if drift else args.batch
        x = torch.randn(rows, IN_DIM, generator=gen)
        y = torch.tanh(x @ teacher)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(compiled(x), y)
        loss.backward()
        opt.step()
        value = loss.item()
        dt = time.perf_counter() - t0
        if step == 0:
            print("time to first step: %.3f s" % (time.perf_counter() - t_start), flush=True)
            # the CPU it took (tracing, code generation, the C++ compiler,
            # loading), which a busy host does not stretch as it does time
            print("first step cpu: %.3f s" % (cpu_seconds() - cpu_start), flush=True)
        print("step %d batch %d loss %.6f" % (step, rows, value), flush=True)
        xr.report_step(step, value, dt)

    # torch._dynamo's own counters: frames compiled (one per graph Dynamo
    # hands to the backend, recompilations included) and graph breaks.
    from torch._dynamo.utils import counters
    frames = counters["stats"]["unique_graphs"]
    breaks = sum(counters["graph_break"].values())
    print("compiled graphs: %d, graph breaks: %d" % (frames, breaks), flush=True)
    if args.backend == "inductor":
        # Inductor's FX graph cache (under TORCHINDUCTOR_CACHE_DIR): one
        # lookup per forward or backward graph; a hit skips code generation
        # and the C++ compiler.
        ind = counters["inductor"]
        print("inductor fx graph cache: %d hits, %d misses"
              % (ind["fxgraph_cache_hit"], ind["fxgraph_cache_miss"]), flush=True)
        # a hit is a graph Inductor loaded instead of generating and compiling it
        xr.report_compiles(frames, ind["fxgraph_cache_hit"])
    else:
        xr.report_compiles(frames)


if __name__ == "__main__":
    main()
