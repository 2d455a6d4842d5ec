"""jax_ranks.py - one rank of a two-process JAX job on the CPU, joined by
jax.distributed (coordinator XL_COORD), for tests/integration/run_ranks.sh.

The candidate's ALLOC_MB is what each rank allocates after the ranks have
exchanged data.  FAIL_RANK names a rank that runs with an address-space cap
of CAP_MB (a host with less memory) or, with FAIL_EXIT, exits with that
status.  HANG_RANK names a rank that sleeps instead of reaching a
coordination barrier at which the others then wait (run_peers.sh: a rank
lost in the middle of a job).
"""
import os
import resource
import sys
import time

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
fail_rank = int(os.environ.get("FAIL_RANK", "-1"))

import jax  # noqa: E402

jax.distributed.initialize(coordinator_address=os.environ["XL_COORD"],
                           num_processes=world, process_id=rank,
                           initialization_timeout=60)
import jax.numpy as jnp  # noqa: E402
from jax.experimental import multihost_utils  # noqa: E402

# os._exit throughout: a rank never waits in the runtime's shutdown barrier
# for a peer that is gone
try:
    x = jnp.arange(4.0) + rank
    got = multihost_utils.process_allgather(x)
    assert got.shape == (world, 4), got.shape
    print(f"rank {rank}/{world}: gathered {float(got.sum())}", flush=True)
    hang_rank = int(os.environ.get("HANG_RANK", "-1"))
    if hang_rank >= 0:
        if rank == hang_rank:
            print(f"rank {rank}: sleeping instead of the barrier", flush=True)
            time.sleep(3600)
        print(f"rank {rank}: at the barrier", flush=True)
        # the coordination service's barrier (not a collective): a peer
        # that is gone is seen only when its heartbeats stop
        from jax._src import distributed
        distributed.global_state.client.wait_at_barrier("xlaunch-barrier", 600_000)
        print(f"rank {rank}: past the barrier", flush=True)
    if rank == fail_rank and os.environ.get("FAIL_EXIT"):
        os._exit(int(os.environ["FAIL_EXIT"]))
    if rank == fail_rank and os.environ.get("CAP_MB"):
        cap = int(os.environ["CAP_MB"]) << 20
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    mb = int(os.environ.get("ALLOC_MB", "1"))
    y = jnp.ones((mb << 20) // 4, dtype=jnp.float32)
    print(f"rank {rank}: allocated {mb} MiB, sum {float(y.sum())}", flush=True)
except BaseException as e:  # noqa: B902
    print(f"rank {rank}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
    os._exit(1)
os._exit(0)
