# compile_cache.sh - what a warm persistent compile cache saves, per runtime:
# time to the first training step (the job's own "time to first step" line)
# and the whole process, cold cache against warm, median of 3, in the same
# run.  Uses .venv (JAX) and build/venv-torch (torch, torch_xla) when
# tools/venv.sh has made them; says so and goes on when not.
#   sh tests/bench/compile_cache.sh [XLAUNCH]   (the binary is not used)
set -eu
T=$(mktemp -d "${TMPDIR:-/tmp}/xlbench.XXXXXX"); trap 'rm -rf "$T"' EXIT
N=3

# once LABEL CACHE-SETUP VAR=VALUE... PYTHON ARGS...: one run; appends
# "first wall" to $T/LABEL
once() {
	label=$1; shift
	s=$(date +%s.%N)
	env "$@" >"$T/out" 2>&1 || { tail -20 "$T/out"; echo "compile_cache: $label failed" >&2; exit 1; }
	e=$(date +%s.%N)
	first=$(sed -n 's/^time to first step: \([0-9.]*\) s$/\1/p' "$T/out")
	awk -v a="$s" -v b="$e" -v f="$first" 'BEGIN { printf "%s %.3f\n", f, b - a }' >>"$T/$label"
}
median() { sort -n | sed -n "$(( (N + 1) / 2 ))p"; }
row() {  # row NAME: prints cold and warm medians and the warm/cold ratios
	cf=$(cut -d' ' -f1 "$T/$1.cold" | median); cw=$(cut -d' ' -f2 "$T/$1.cold" | median)
	wf=$(cut -d' ' -f1 "$T/$1.warm" | median); ww=$(cut -d' ' -f2 "$T/$1.warm" | median)
	awk -v n="$1" -v cf="$cf" -v wf="$wf" -v cw="$cw" -v ww="$ww" 'BEGIN {
		printf "  %-28s first step %7.3f -> %7.3f s (%.2fx)   process %7.2f -> %7.2f s (%.2fx)\n",
			n, cf, wf, wf / cf, cw, ww, ww / cw }'
}

echo "cold -> warm persistent cache (median of $N; ratio warm/cold)"
if [ -x .venv/bin/python ]; then
	jax="JAX_PLATFORMS=cpu JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0 JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES=0"
	for mode in steady drift; do
		args=40; [ $mode = steady ] && args="40 --steady"
		for i in $(seq $N); do
			# shellcheck disable=SC2086
			once jax-$mode.cold $jax JAX_COMPILATION_CACHE_DIR="$T/jax-$mode-$i" .venv/bin/python examples/jax_shape_drift.py $args
			# shellcheck disable=SC2086
			once jax-$mode.warm $jax JAX_COMPILATION_CACHE_DIR="$T/jax-$mode-$i" .venv/bin/python examples/jax_shape_drift.py $args
		done
		row jax-$mode
	done
else
	echo "  jax: skipped (no .venv; tools/venv.sh demo makes it)"
fi
if [ -x build/venv-torch/bin/python ]; then
	for i in $(seq $N); do
		once torch_xla.cold PJRT_DEVICE=CPU XLA_PERSISTENT_CACHE_PATH="$T/ptxla-$i" build/venv-torch/bin/python examples/train_torch_xla.py 10
		once torch_xla.warm PJRT_DEVICE=CPU XLA_PERSISTENT_CACHE_PATH="$T/ptxla-$i" build/venv-torch/bin/python examples/train_torch_xla.py 10
	done
	row torch_xla
	echo "    (on PJRT_DEVICE=CPU the entry is written but cannot be loaded: no saving is expected)"
	for mode in steady drift-static; do
		for i in $(seq $N); do
			# Cold: a fresh TMPDIR too, for Inductor's precompiled headers
			# live under it whatever TORCHINDUCTOR_CACHE_DIR says.
			mkdir -p "$T/tmp-$mode-$i"
			c="TORCHINDUCTOR_CACHE_DIR=$T/inductor-$mode-$i TRITON_CACHE_DIR=$T/triton-$mode-$i TMPDIR=$T/tmp-$mode-$i"
			# shellcheck disable=SC2086
			once torch-compile-$mode.cold $c build/venv-torch/bin/python examples/train_torch_compile.py --mode $mode
			# shellcheck disable=SC2086
			once torch-compile-$mode.warm $c build/venv-torch/bin/python examples/train_torch_compile.py --mode $mode
		done
		row torch-compile-$mode
	done
else
	echo "  torch_xla, torch.compile: skipped (no build/venv-torch; tools/venv.sh torch makes it)"
fi
