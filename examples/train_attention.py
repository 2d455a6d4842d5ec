#!/usr/bin/env python3
"""A small transformer trained with JAX on synthetic tokens, its attention
written out as it is without a fused kernel: the score matrix of every layer
is micro batch x heads x seq x seq, kept for the backward pass.

Its memory grows with the square of the sequence length once the scores
outweigh the rest (the weights and the activations that grow with seq
alone), so a ladder of sequence lengths shows a curve, not a line: the job
the memory-frontier benchmark and the curve-prediction test run.

    python examples/train_attention.py [STEPS] [--seq N] [--micro-batch N]
                                       [--layers N] [--heads N] [--dim N]
                                       [--memory-analysis]

SEQ, MICRO_BATCH, LAYERS, HEADS and DIM in the environment stand in for
absent options, so a profile's candidates can change the job's size.  It
prints the shape, each step's loss and time, and its compile count.  With
--memory-analysis it compiles the training step for its shapes without
running it (nothing of that size is allocated) and prints what XLA says the
program's buffers take.
"""

import argparse
import os
import sys
import time

import jax
import jax.numpy as jnp

BLOCK = 256


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
        sys.exit("train_attention.py: %s=%r: not a positive integer" % (env_name, text))


def attention(p, x, heads):
    b, s, d = x.shape
    hd = d // heads

    def split(t):
        return t.reshape(b, s, heads, hd).transpose(0, 2, 1, 3)

    q, k, v = split(x @ p["wq"]), split(x @ p["wk"]), split(x @ p["wv"])
    # the whole score matrix, batch x heads x seq x seq, as unfused code has it
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(hd).astype(x.dtype)
    causal = jnp.tril(jnp.ones((s, s), dtype=bool))
    scores = jnp.where(causal, scores, -1e9)
    probs = jax.nn.softmax(scores, axis=-1)
    out = jnp.einsum("bhqk,bhkd->bhqd", probs, v).transpose(0, 2, 1, 3).reshape(b, s, d)
    return out @ p["wo"]


def layer_norm(x):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-5)


def forward(params, x, heads):
    for p in params["layers"]:
        x = x + attention(p, layer_norm(x), heads)
        x = x + jax.nn.gelu(layer_norm(x) @ p["w1"]) @ p["w2"]
    return layer_norm(x) @ params["readout"]


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
    ap.add_argument("--memory-analysis", action="store_true",
                    help="compile the step without running it and print XLA's buffer sizes")
    args = ap.parse_args()
    seq = setting(args.seq, "SEQ", 1024)
    batch = setting(args.micro_batch, "MICRO_BATCH", 1)
    layers = setting(args.layers, "LAYERS", 2)
    heads = setting(args.heads, "HEADS", 8)
    dim = setting(args.dim, "DIM", 256)
    if dim % heads:
        sys.exit("train_attention.py: the width %d is not a multiple of %d heads" % (dim, heads))

    compiles = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, duration, **kw: compiles.append(event)
        if event == "/jax/core/compile/backend_compile_duration" else None)
    print("platform: %s, micro batch %d, seq %d, layers %d, heads %d, width %d"
          % (jax.devices()[0].platform, batch, seq, layers, heads, dim), flush=True)

    def init(key):
        keys = jax.random.split(key, layers + 1)

        def dense(k, n_in, n_out):
            return jax.random.normal(k, (n_in, n_out)) / jnp.sqrt(n_in)

        ls = []
        for k in keys[:layers]:
            kq, kk, kv, ko, k1, k2 = jax.random.split(k, 6)
            ls.append({"wq": dense(kq, dim, dim), "wk": dense(kk, dim, dim),
                       "wv": dense(kv, dim, dim), "wo": dense(ko, dim, dim),
                       "w1": dense(k1, dim, 4 * dim), "w2": dense(k2, 4 * dim, dim)})
        return {"layers": ls, "readout": dense(keys[-1], dim, dim)}

    def make_batch(key):
        # a small random block repeated: the data costs copies, not random draws
        base = jax.random.normal(key, (batch, BLOCK, dim))
        reps = -(-seq // BLOCK)
        x = jnp.tile(base, (1, reps, 1))[:, :seq]
        return x, jnp.sin(x)

    def loss_fn(params, x, y):
        return jnp.mean((forward(params, x, heads) - y) ** 2)

    @jax.jit
    def train_step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads), loss

    key = jax.random.key(0, impl="rbg")   # compiles faster on a CPU than threefry
    if args.memory_analysis:
        shapes = jax.eval_shape(init, key)
        data = jax.ShapeDtypeStruct((batch, seq, dim), jnp.float32)
        m = train_step.lower(shapes, data, data).compile().memory_analysis()
        total = (m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
                 - m.alias_size_in_bytes)
        print("xla buffers: arguments %d, outputs %d, temporaries %d, aliased %d, total %d bytes"
              % (m.argument_size_in_bytes, m.output_size_in_bytes, m.temp_size_in_bytes,
                 m.alias_size_in_bytes, total), flush=True)
        return
    params = jax.jit(init)(key)
    batches = jax.jit(make_batch)
    try:
        for i in range(args.steps):
            x, y = batches(jax.random.fold_in(key, i))
            t0 = time.perf_counter()
            params, loss = train_step(params, x, y)
            loss = float(loss)  # waits for the step
            print("step %d loss %.5f time %.3f s" % (i, loss, time.perf_counter() - t0), flush=True)
    finally:
        print("compiles: %d" % len(compiles), flush=True)


if __name__ == "__main__":
    main()
