#!/usr/bin/env python3
"""A small transformer trained with PyTorch/XLA on synthetic tokens, its
attention written out without a fused kernel: the score matrix of every
layer is micro batch x heads x seq x seq, kept for the backward pass.

Its memory grows with the square of the sequence length once the scores
outweigh the rest, the PyTorch/XLA twin of examples/train_attention.py (the
memory-frontier benchmark runs both).  Meant for PJRT_DEVICE=CPU (the
default here when PJRT_DEVICE is unset).

    python examples/train_torch_attention.py [STEPS] [--seq N] [--micro-batch N]
                                             [--layers N] [--heads N] [--dim N]

SEQ, MICRO_BATCH, LAYERS, HEADS and DIM in the environment stand in for
absent options.  It prints the shape, each step's loss and time, and its
compile count.
"""

import argparse
import math
import os
import sys
import time

# torch_xla picks its device when first imported; CPU unless told otherwise.
os.environ.setdefault("PJRT_DEVICE", "CPU")

import torch  # noqa: E402
import torch_xla  # noqa: E402
import torch_xla.debug.metrics as met  # noqa: E402


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
        sys.exit("train_torch_attention.py: %s=%r: not a positive integer" % (env_name, text))


class Block(torch.nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(dim, 3 * dim, bias=False)
        self.out = torch.nn.Linear(dim, dim, bias=False)
        self.ff1 = torch.nn.Linear(dim, 4 * dim)
        self.ff2 = torch.nn.Linear(4 * dim, dim)
        self.n1 = torch.nn.LayerNorm(dim)
        self.n2 = torch.nn.LayerNorm(dim)

    def attention(self, x):
        b, s, d = x.shape
        hd = d // self.heads
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, hd).permute(2, 0, 3, 1, 4)
        # the whole score matrix, batch x heads x seq x seq, as unfused code has it
        scores = q @ k.transpose(-1, -2) / math.sqrt(hd)
        causal = torch.ones(s, s, dtype=torch.bool, device=x.device).tril()
        scores = scores.masked_fill(~causal, -1e9)
        out = scores.softmax(dim=-1) @ v
        return self.out(out.transpose(1, 2).reshape(b, s, d))

    def forward(self, x):
        x = x + self.attention(self.n1(x))
        return x + self.ff2(torch.nn.functional.gelu(self.ff1(self.n2(x))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("steps", nargs="?", type=positive_int, default=2,
                    help="training steps (default 2)")
    ap.add_argument("--seq", type=positive_int, help="sequence length (env SEQ, default 1024)")
    ap.add_argument("--micro-batch", type=positive_int,
                    help="sequences per step (env MICRO_BATCH, default 1)")
    ap.add_argument("--layers", type=positive_int, help="layers (env LAYERS, default 2)")
    ap.add_argument("--heads", type=positive_int, help="attention heads (env HEADS, default 8)")
    ap.add_argument("--dim", type=positive_int, help="model width (env DIM, default 256)")
    args = ap.parse_args()
    seq = setting(args.seq, "SEQ", 1024)
    batch = setting(args.micro_batch, "MICRO_BATCH", 1)
    layers = setting(args.layers, "LAYERS", 2)
    heads = setting(args.heads, "HEADS", 8)
    dim = setting(args.dim, "DIM", 256)
    if dim % heads:
        sys.exit("train_torch_attention.py: the width %d is not a multiple of %d heads"
                 % (dim, heads))

    torch.manual_seed(0)
    device = torch_xla.device()
    print("device: %s, micro batch %d, seq %d, layers %d, heads %d, width %d"
          % (device, batch, seq, layers, heads, dim), flush=True)
    model = torch.nn.Sequential(*[Block(dim, heads) for _ in range(layers)],
                                torch.nn.Linear(dim, dim)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(1)
    for step in range(args.steps):
        t0 = time.perf_counter()
        x = torch.randn(batch, seq, dim, generator=gen).to(device)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), torch.sin(x))
        loss.backward()
        opt.step()
        torch_xla.sync()            # cut the graph: compile and run it
        print("step %d loss %.5f time %.3f s" % (step, loss.item(), time.perf_counter() - t0),
              flush=True)
    compiles = met.metric_data("CompileTime")
    print("compiles: %d" % (compiles[0] if compiles else 0), flush=True)


if __name__ == "__main__":
    main()
