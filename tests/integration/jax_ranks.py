"""jax_ranks.py - one rank of a two-process JAX job on the CPU, joined by
jax.distributed (coordinator XL_COORD), for tests/integration/run_ranks.sh.

The candidate's ALLOC_MB is what each rank allocates after the ranks have
exchanged data.  FAIL_RANK names a rank that runs with an address-space cap
of CAP_MB (a host with less memory) or, with FAIL_EXIT, exits with that
status.  HANG_RANK names a rank that sleeps instead of reaching a
coordination barrier at which the others then wait (run_peers.sh: a rank
lost in the middle of a job).

Every rank ends the same way, the failing one included: a final barrier
(multihost_utils.sync_global_devices), then jax.distributed.shutdown(), then
the line "rank R: distributed runtime shut down" (the tests look for it on
every rank), then its own status.  A rank that fails leaves last: it waits (300 s at most)
until the other ranks' processes on this host are gone, so a launcher that
stops the whole job when one rank fails (torchrun) finds the others already
ended, their lines printed.  Without the barrier, the rank that hosts
the coordination service (rank 0) may exit while another rank's agent still
talks to it, and that rank's JAX aborts ("Terminating process because the JAX
distributed service detected fatal errors ... Socket closed"): which rank
the scheduler lets finish first would decide the test.

XL_NO_BARRIER=R leaves the barrier and the shutdown out on purpose: rank R
exits as soon as its work is done, and the other ranks wait XL_LINGER_S
seconds (default 60) before their own end, so R's exit leaves them behind.
With R=0 (the rank that hosts the coordination service) the others' JAX
aborts; with R=1 and no wait, rank 0's final barrier fails; with R=1 and a
wait past JAX's heartbeat timeout (100 s), the service ends rank 0.
tools/runtime-output.sh captures what JAX prints then
(tests/data/runtime-output/jax-ranks-*.txt).
"""
import os
import resource
import sys
import time

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
fail_rank = int(os.environ.get("FAIL_RANK", "-1"))

import jax  # noqa: E402

# the limits here guard against a hang only (a busy host may be slow)
jax.distributed.initialize(coordinator_address=os.environ["XL_COORD"],
                           num_processes=world, process_id=rank,
                           initialization_timeout=300)
import jax.numpy as jnp  # noqa: E402
from jax.experimental import multihost_utils  # noqa: E402


pids = []  # every rank's process id, from the first exchange


def gone(pid):
    """True when pid has exited (a zombie counts: it has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def finish(status):
    """Ends this rank with status, after every rank has reached the end."""
    leaver = os.environ.get("XL_NO_BARRIER")
    if leaver == str(rank):
        print(f"rank {rank}: exiting without the barrier and the shutdown",
              flush=True)
        os._exit(status)
    if leaver:
        linger = float(os.environ.get("XL_LINGER_S", "60"))
        time.sleep(linger)
        print(f"rank {rank}: still running {linger:g} s after rank {leaver} left",
              flush=True)
    try:
        multihost_utils.sync_global_devices("jax_ranks: the end")
        jax.distributed.shutdown()
    except BaseException as e:  # noqa: B902
        print(f"rank {rank}: the orderly end failed: {type(e).__name__}: {e}",
              file=sys.stderr, flush=True)
        os._exit(status or 1)
    print(f"rank {rank}: distributed runtime shut down", flush=True)
    if status:
        others = [p for r, p in enumerate(pids) if r != rank]
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not all(map(gone, others)):
            time.sleep(0.02)
    # os._exit: the runtime is already down, nothing is left to wait for
    os._exit(status)


status = 0
try:
    x = jnp.arange(4.0) + rank
    got = multihost_utils.process_allgather(x)
    assert got.shape == (world, 4), got.shape
    pids = [int(p) for p in multihost_utils.process_allgather(
        jnp.array(os.getpid(), dtype=jnp.int32))]
    print(f"rank {rank}: gathered {float(got.sum())}", flush=True)
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
        finish(int(os.environ["FAIL_EXIT"]))
    mb = int(os.environ.get("ALLOC_MB", "1"))
    n = (mb << 20) // 4
    # compiled before any cap: under it, only the buffer is allocated
    ones = jax.jit(lambda: jnp.ones(n, dtype=jnp.float32)).lower().compile()
    total_of = jax.jit(jnp.sum).lower(
        jax.ShapeDtypeStruct((n,), jnp.float32)).compile()
    limit = resource.getrlimit(resource.RLIMIT_AS)
    if rank == fail_rank and os.environ.get("CAP_MB"):
        # the soft limit only: the cap is lifted again for the barrier and
        # the shutdown, as a rank that ran out of memory still ends cleanly
        cap = int(os.environ["CAP_MB"]) << 20
        resource.setrlimit(resource.RLIMIT_AS, (cap, limit[1]))
    try:
        y = ones()
        total = float(total_of(y))
        del y
    finally:
        resource.setrlimit(resource.RLIMIT_AS, limit)
    print(f"rank {rank}: allocated {mb} MiB, sum {total}", flush=True)
except BaseException as e:  # noqa: B902
    print(f"rank {rank}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
    status = 1
finish(status)
