#!/usr/bin/env python3
"""Prints etc/outcomes.yaml's compile_internal section for JAX.

JAX compiles a program of its own for an operation run outside jit: a
primitive (jit(broadcast_in_dim), jit(convert_element_type), jit(iota)),
a jax.numpy or jax.lax function that is jitted itself (jit(matmul),
jit(unstack)), or a private helper (jit(_normal), jit(_threefry_split)).
The names are read from the installed release: every primitive JAX
defines, and the public functions of jax.numpy, jax.lax, jax.random,
jax.nn, jax.numpy.linalg and jax.numpy.fft.  A leading underscore marks a
private function (the prefix).

    .venv/bin/python tools/gen-jax-internal.py >names.yaml
"""
import gc
import sys
import textwrap

import jax
import jax.lax
import jax.nn
import jax.numpy
import jax.random
from jax._src import core


def names():
    found = set()
    for o in gc.get_objects():
        try:
            if isinstance(o, core.Primitive):
                found.add(o.name)
        except Exception:  # objects that refuse isinstance
            pass
    for m in (jax.numpy, jax.lax, jax.random, jax.nn, jax.numpy.linalg, jax.numpy.fft):
        for n in dir(m):
            f = getattr(m, n, None)
            if not n.startswith("_") and callable(f) and not isinstance(f, type):
                found.add(n)
    return sorted(n for n in found if n.replace("_", "a").isalnum())


def main():
    body = ", ".join(names())
    sys.stdout.write("compile_internal:\n  jax:  # generated from jax %s by tools/gen-jax-internal.py\n"
                     "    prefix: _\n    names: [\n" % jax.__version__)
    sys.stdout.write(textwrap.fill(body, width=96, initial_indent="      ",
                                   subsequent_indent="      ", break_on_hyphens=False))
    sys.stdout.write("]\n")


if __name__ == "__main__":
    main()
