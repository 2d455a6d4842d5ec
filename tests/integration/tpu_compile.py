"""A job that compiles ahead of time for a TPU topology, with the real libtpu,
on a host without a TPU: JAX builds the topology's devices (libtpu's own
description of a v5e slice), and the TPU compiler compiles a program sharded
over them.  Nothing runs on a device.

    python tpu_compile.py [GIB]

GIB (else $XL_TPU_GIB, else 1) sizes the program: a chain of matrix products of an
activation of GIB GiB per device whose intermediates are all kept, so that
the compiler's temporaries grow with it.  Small sizes fit in a v5e's HBM;
large ones make the compiler fail with RESOURCE_EXHAUSTED ("Ran out of
memory on HBM ...").  Prints the compiler's memory analysis when it fits.
"""
import os
import sys

import jax
import jax.numpy as jnp
from jax.experimental import topologies
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

gib = float(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("XL_TPU_GIB", "1"))
topo = topologies.get_topology_desc(platform="tpu", topology_name="v5e:2x2")
devices = topo.devices
mesh = Mesh(devices, ("d",))
rows = int(gib * (1 << 30) / 4 / 1024) * len(devices)
x = jax.ShapeDtypeStruct((rows, 1024), jnp.float32, sharding=NamedSharding(mesh, P("d", None)))
w = jax.ShapeDtypeStruct((1024, 1024), jnp.float32, sharding=NamedSharding(mesh, P(None, None)))


def f(x, w):
    outs = []
    h = x
    for _ in range(4):
        h = jnp.tanh(h @ w)
        outs.append(h)
    return sum(o.sum() for o in outs)


compiled = jax.jit(f).lower(x, w).compile()
ma = compiled.memory_analysis()
print("devices: %d %s" % (len(devices), devices[0].device_kind))
print("temp_size_in_bytes: %d" % ma.temp_size_in_bytes)
print("argument_size_in_bytes: %d" % ma.argument_size_in_bytes)
