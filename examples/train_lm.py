#!/usr/bin/env python3
"""A small causal transformer language model trained with JAX on random tokens.

The job the memory-frontier benchmark and tests climb: its peak memory grows
with the tokens of a step (micro batch x sequence length), the way a real
language model's activations do, while a step stays short enough for a CPU.

    python examples/train_lm.py [STEPS] [--micro-batch N] [--seq N]
                                [--width N] [--layers N] [--heads N]

MICRO_BATCH, SEQ, WIDTH, LAYERS and HEADS in the environment stand in for
absent options, so a profile's candidates can change the job's size.  It
prints the tokens per step, the loss of each step and its time, and the
compile count; nothing else is written.
"""

import argparse
import os
import sys
import time

import jax
import jax.numpy as jnp

VOCAB = 512


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
        sys.exit("train_lm.py: %s=%r: not a positive integer" % (env_name, text))


def init_params(key, width, layers):
    keys = iter(jax.random.split(key, 2 + 4 * layers))

    def dense(n_in, n_out):
        return jax.random.normal(next(keys), (n_in, n_out)) / jnp.sqrt(n_in)

    blocks = []
    for _ in range(layers):
        blocks.append({
            "qkv": dense(width, 3 * width),
            "out": dense(width, width),
            "up": dense(width, 4 * width),
            "down": dense(4 * width, width),
            "ln1": jnp.ones(width), "ln2": jnp.ones(width),
        })
    return {"embed": dense(VOCAB, width), "blocks": blocks, "head": dense(width, VOCAB)}


def layer_norm(x, scale):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * scale


def block(p, x, heads):
    b, s, w = x.shape
    h = layer_norm(x, p["ln1"])
    q, k, v = jnp.split(h @ p["qkv"], 3, axis=-1)
    q, k, v = (t.reshape(b, s, heads, w // heads) for t in (q, k, v))
    att = jax.nn.dot_product_attention(q, k, v, is_causal=True)
    x = x + att.reshape(b, s, w) @ p["out"]
    h = layer_norm(x, p["ln2"])
    return x + jax.nn.gelu(h @ p["up"]) @ p["down"]


def loss_fn(params, tokens, heads):
    x = params["embed"][tokens[:, :-1]]
    for p in params["blocks"]:
        x = block(p, x, heads)
    logits = x @ params["head"]
    logp = jax.nn.log_softmax(logits)
    target = tokens[:, 1:]
    return -jnp.take_along_axis(logp, target[..., None], axis=-1).mean()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("steps", nargs="?", type=positive_int, default=3,
                    help="training steps (default 3)")
    ap.add_argument("--micro-batch", type=positive_int, help="sequences per step (env MICRO_BATCH, default 8)")
    ap.add_argument("--seq", type=positive_int, help="tokens per sequence (env SEQ, default 128)")
    ap.add_argument("--width", type=positive_int, help="model width (env WIDTH, default 64)")
    ap.add_argument("--layers", type=positive_int, help="transformer blocks (env LAYERS, default 2)")
    ap.add_argument("--heads", type=positive_int, help="attention heads (env HEADS, default 4)")
    args = ap.parse_args()
    micro_batch = setting(args.micro_batch, "MICRO_BATCH", 8)
    seq = setting(args.seq, "SEQ", 128)
    width = setting(args.width, "WIDTH", 64)
    layers = setting(args.layers, "LAYERS", 2)
    heads = setting(args.heads, "HEADS", 4)
    if width % heads:
        sys.exit("train_lm.py: width %d is not a multiple of heads %d" % (width, heads))

    compiles = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, duration, **kw: compiles.append(event)
        if event == "/jax/core/compile/backend_compile_duration" else None)

    print("platform: %s, devices: %d" % (jax.devices()[0].platform, len(jax.devices())))
    print("tokens per step: %d (micro batch %d x sequence %d), width %d, layers %d"
          % (micro_batch * seq, micro_batch, seq, width, layers), flush=True)

    # everything runs compiled: a few programs, not one per operation
    k_params, k_data = jax.random.split(jax.random.key(0))
    params = jax.jit(init_params, static_argnums=(1, 2))(k_params, width, layers)
    make_tokens = jax.jit(lambda k, i: jax.random.randint(
        jax.random.fold_in(k, i), (micro_batch, seq + 1), 0, VOCAB))

    @jax.jit
    def train_step(params, tokens):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens, heads)
        params = jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
        return params, loss

    try:
        for i in range(args.steps):
            tokens = make_tokens(k_data, i)
            t0 = time.perf_counter()
            params, loss = train_step(params, tokens)
            loss = float(loss)  # waits for the step
            print("step %d loss %.4f time %.3f s" % (i, loss, time.perf_counter() - t0), flush=True)
    finally:
        print("compiles: %d" % len(compiles), flush=True)


if __name__ == "__main__":
    main()
