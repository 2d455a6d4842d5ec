"""A job that compiles its step ahead of time, then sets up before it runs it.

    python aot_setup.py GIB SETUP_S STAMPS

The step, jit(train_step), takes a small batch and returns an activation of
GIB GiB (an outer product of two vectors, written out whole): compiling it
allocates nothing, running it allocates GIB GiB.  The job writes
"compiling EPOCH" to STAMPS, compiles the step with
jax.jit(f).lower(...).compile(), writes "compiled EPOCH", sets up for
SETUP_S seconds (sleeps, in short naps), writes "setup EPOCH", then runs the
step once and writes "ran EPOCH".  Under a limit below GIB GiB the run
fails when it allocates; the compile, long before, already told how much
the step needs (XLA's memory-usage report, in the dump).
"""
import sys
import time

import jax
import jax.numpy as jnp

gib, setup_s, stamps = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
n = int((gib * (1 << 30) / 4) ** 0.5)


def stamp(what):
    with open(stamps, "a") as f:
        f.write("%s %.3f\n" % (what, time.time()))


def train_step(a, b):
    return jnp.outer(jnp.tanh(a), jnp.tanh(b)) + 1.0


vec = jax.ShapeDtypeStruct((n,), jnp.float32)
stamp("compiling")
compiled = jax.jit(train_step).lower(vec, vec).compile()
stamp("compiled")
print("compiled train_step: %d x %d" % (n, n), flush=True)
end = time.time() + setup_s
while time.time() < end:
    time.sleep(0.2)
stamp("setup")
out = compiled(jnp.ones((n,), jnp.float32), jnp.ones((n,), jnp.float32))
out.block_until_ready()
stamp("ran")
print("ran: %g" % float(out[0, 0]), flush=True)
