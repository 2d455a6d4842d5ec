#!/bin/sh
# Runs the example jobs under the runtimes' own compile logging and keeps
# what they print in tests/data/runtime-output/, one file per scenario.  The
# first line of each file names the exact command (run from the source tree,
# in an otherwise empty environment), the versions and the date.
#   tools/runtime-output.sh [jax] [torch_xla] [torch_compile] [dynamo] [ranks]   (default: all)
# Needs .venv (tools/venv.sh demo) and build/venv-torch (tools/venv.sh torch).
# The caches live under $TMPDIR/xlaunch-runtime-output and are emptied first,
# so "cold" means cold.
set -eu
OUT=tests/data/runtime-output
W=${TMPDIR:-/tmp}/xlaunch-runtime-output
JAXPY=.venv/bin/python
TORCHPY=build/venv-torch/bin/python
DATE=$(date -u +%Y-%m-%d)
mkdir -p "$OUT"
rm -rf "$W"
mkdir -p "$W/home"

platform() {
	"$1" -c 'import platform, os; print("CPython %s, %s %s, %d CPUs" % (platform.python_version(), platform.system(), platform.machine(), os.cpu_count()))'
}

# capture FILE VERSIONS VAR=VALUE... PYTHON SCRIPT ARGS...
capture() {
	file=$1 versions=$2
	shift 2
	echo "== $file"
	{
		echo "# env -i PATH=/usr/bin:/bin HOME=$W/home $* | $versions | $DATE"
		env -i PATH=/usr/bin:/bin HOME="$W/home" "$@" 2>&1 || echo "(exit status $?)"
	} >"$OUT/$file"
}

jax_outputs() {
	v="jax $($JAXPY -c 'import jax; print(jax.__version__)'), jaxlib $($JAXPY -c 'import jaxlib; print(jaxlib.__version__)'), $(platform $JAXPY)"
	base="JAX_PLATFORMS=cpu JAX_LOG_COMPILES=1"
	cache="JAX_EXPLAIN_CACHE_MISSES=1 JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0 JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES=0"
	# shellcheck disable=SC2086
	{
		capture jax-drift-nocache.txt "$v" $base $JAXPY examples/jax_shape_drift.py 40
		capture jax-steady-cold.txt "$v" $base $cache JAX_COMPILATION_CACHE_DIR=$W/jax-steady $JAXPY examples/jax_shape_drift.py 40 --steady
		capture jax-steady-warm.txt "$v" $base $cache JAX_COMPILATION_CACHE_DIR=$W/jax-steady $JAXPY examples/jax_shape_drift.py 40 --steady
		capture jax-drift-cold.txt "$v" $base $cache JAX_COMPILATION_CACHE_DIR=$W/jax-drift $JAXPY examples/jax_shape_drift.py 40
		capture jax-drift-warm.txt "$v" $base $cache JAX_COMPILATION_CACHE_DIR=$W/jax-drift $JAXPY examples/jax_shape_drift.py 40
		# JAX's default minimum compile time (1 s): nothing this small is written
		capture jax-steady-not-written.txt "$v" $base JAX_EXPLAIN_CACHE_MISSES=1 JAX_COMPILATION_CACHE_DIR=$W/jax-default $JAXPY examples/jax_shape_drift.py 5 --steady
	}
}

torch_xla_outputs() {
	v="torch $($TORCHPY -c 'import torch; print(torch.__version__)'), torch_xla 2.9.0, $(platform $TORCHPY)"
	base="PJRT_DEVICE=CPU"
	# shellcheck disable=SC2086
	{
		capture ptxla-debug1-steady.txt "$v" $base PT_XLA_DEBUG_LEVEL=1 XLA_PERSISTENT_CACHE_PATH=$W/ptxla-steady $TORCHPY examples/train_torch_xla.py 10
		capture ptxla-debug1-late-recompile.txt "$v" $base PT_XLA_DEBUG_LEVEL=1 XLA_PERSISTENT_CACHE_PATH=$W/ptxla-late $TORCHPY examples/train_torch_xla.py 10 --shape-change-at 7
		capture ptxla-debug2-late-recompile.txt "$v" $base PT_XLA_DEBUG_LEVEL=2 XLA_PERSISTENT_CACHE_PATH=$W/ptxla-late2 $TORCHPY examples/train_torch_xla.py 10 --shape-change-at 7
		capture ptxla-debug1-storm.txt "$v" $base PT_XLA_DEBUG_LEVEL=1 XLA_PERSISTENT_CACHE_PATH=$W/ptxla-storm $TORCHPY examples/train_torch_xla.py 20 --shape-every-step --metrics
		capture ptxla-cache-first-launch.txt "$v" $base XLA_PERSISTENT_CACHE_PATH=$W/ptxla-cache $TORCHPY examples/train_torch_xla.py 10 --metrics
		capture ptxla-cache-second-launch.txt "$v" $base XLA_PERSISTENT_CACHE_PATH=$W/ptxla-cache $TORCHPY examples/train_torch_xla.py 10 --metrics
		capture ptxla-cache-third-launch-debug1.txt "$v" $base PT_XLA_DEBUG_LEVEL=1 XLA_PERSISTENT_CACHE_PATH=$W/ptxla-cache $TORCHPY examples/train_torch_xla.py 10
	}
}

torch_compile_outputs() {
	v="torch $($TORCHPY -c 'import torch; print(torch.__version__)'), $(platform $TORCHPY), $(g++ --version | head -1)"
	for mode in steady drift-static graph-break dynamic; do
		caches="TORCHINDUCTOR_CACHE_DIR=$W/inductor-$mode TRITON_CACHE_DIR=$W/triton-$mode"
		# shellcheck disable=SC2086
		capture torch-compile-$mode.txt "$v" $caches $TORCHPY examples/train_torch_compile.py --mode $mode
		# shellcheck disable=SC2086
		capture torch-compile-$mode-logs.txt "$v" TORCH_LOGS=recompiles,graph_breaks $caches $TORCHPY examples/train_torch_compile.py --mode $mode
	done
}

# Dynamo's INFO log: a "Step 2: calling compiler function" line per graph
# handed to the backend, so per compilation, the first one included.
dynamo_outputs() {
	v="torch $($TORCHPY -c 'import torch; print(torch.__version__)'), $(platform $TORCHPY), $(g++ --version | head -1)"
	# shellcheck disable=SC2086
	capture torch-compile-drift-static-dynamo.txt "$v" TORCH_LOGS=dynamo TORCHINDUCTOR_CACHE_DIR=$W/inductor-dynamo TRITON_CACHE_DIR=$W/triton-dynamo $TORCHPY examples/train_torch_compile.py --mode drift-static
}

# A two-process JAX job (tests/integration/jax_ranks.py) that ends in order
# (a final barrier, then jax.distributed.shutdown()), and the same job with
# one rank leaving without them on purpose: what the other rank's JAX prints
# when the leaver's exit takes the coordination service or the collective's
# connection away (etc/outcomes.yaml, peer_exit).  One file per rank: FILE
# less .txt, then -rankN.txt.
# capture_ranks FILE VERSIONS VAR=VALUE...
capture_ranks() {
	file=$1 versions=$2
	shift 2
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	echo "== $file"
	for r in 0 1; do
		(
			echo "# env -i PATH=/usr/bin:/bin HOME=$W/home JAX_PLATFORMS=cpu RANK=$r WORLD_SIZE=2 XL_COORD=127.0.0.1:PORT $* $JAXPY tests/integration/jax_ranks.py | $versions | $DATE"
			env -i PATH=/usr/bin:/bin HOME="$W/home" JAX_PLATFORMS=cpu RANK=$r WORLD_SIZE=2 \
				XL_COORD="127.0.0.1:$port" "$@" $JAXPY tests/integration/jax_ranks.py 2>&1 ||
				echo "(exit status $?)"
		) >"$OUT/${file%.txt}-rank$r.txt" &
	done
	wait
}

ranks_outputs() {
	v="jax $($JAXPY -c 'import jax; print(jax.__version__)'), jaxlib $($JAXPY -c 'import jaxlib; print(jaxlib.__version__)'), $(platform $JAXPY)"
	capture_ranks jax-ranks-clean.txt "$v" ALLOC_MB=8
	# rank 0 hosts the coordination service: rank 1's JAX aborts
	capture_ranks jax-ranks-no-barrier-rank0-leaves.txt "$v" ALLOC_MB=8 XL_NO_BARRIER=0 XL_LINGER_S=60
	# rank 1 leaves: rank 0's final barrier (a Gloo collective) fails
	capture_ranks jax-ranks-no-barrier-rank1-leaves.txt "$v" ALLOC_MB=8 XL_NO_BARRIER=1 XL_LINGER_S=0
	# rank 0 waits past the heartbeat timeout: the service ends it
	capture_ranks jax-ranks-no-barrier-rank1-leaves-wait.txt "$v" ALLOC_MB=8 XL_NO_BARRIER=1 XL_LINGER_S=150
}

[ $# -eq 0 ] && set -- jax torch_xla torch_compile dynamo ranks
for what in "$@"; do
	case "$what" in
	jax) jax_outputs ;;
	torch_xla) torch_xla_outputs ;;
	torch_compile) torch_compile_outputs ;;
	dynamo) dynamo_outputs ;;
	ranks) ranks_outputs ;;
	*) echo "usage: tools/runtime-output.sh [jax] [torch_xla] [torch_compile] [dynamo] [ranks]" >&2; exit 64 ;;
	esac
done
