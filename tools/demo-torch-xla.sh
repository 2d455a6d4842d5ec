#!/bin/sh
# make demo-torch-xla: PyTorch/XLA on the CPU under the shipped
# cpu-torch-xla profile (PJRT_DEVICE=CPU, compile analysis on, a local
# XLA_PERSISTENT_CACHE_PATH): the profile's environment reaching the runtime,
# compilations counted from torch_xla's own output, a recompilation caught
# and named, what the second launch finds in the persistent cache, and a
# recompilation storm.  torch and torch_xla come from PyPI into
# build/venv-torch (tools/venv.sh torch; about 4.2 GB the first time).  It
# uses your normal store and cache ($XLAUNCH_CACHE_ROOT, else ~/.cache/xlaunch).
#   tools/demo-torch-xla.sh XLAUNCH
set -e
XL=${1:-./xlaunch}
case "$XL" in /*) ;; *) XL="$(pwd)/$XL" ;; esac
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# torch_xla's "Compilation Analysis" blocks are counted by xlaunch; here they
# are left out of the screen (the run directories' stderr.log has them)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
launch() {
	rc=0
	"$XL" "$@" >"$out" 2>&1 || rc=$?
	grep -v -e 'Compilation Analysis:' -e '^Computation hash:' -e '^$' "$out" || true
	return 0
}

step "0. torch and torch_xla from PyPI (build/venv-torch)"
start=$(date +%s)
venv=$(tools/venv.sh torch) || {
	echo "demo-torch-xla: cannot set up build/venv-torch (see above); it needs PyPI once" >&2
	exit 1
}
echo "   $venv ready after $(( $(date +%s) - start )) s"
PY="$(pwd)/$venv/bin/python"

step "1. the profile: xlaunch profile show cpu-torch-xla --explain"
"$XL" profile show cpu-torch-xla --explain

step "2. first launch: a batch with one row more from step 7 on (one recompilation)"
launch run cpu-torch-xla -- "$PY" examples/train_torch_xla.py 10 --shape-change-at 7
echo "   'device: ... (PJRT_DEVICE=CPU)' and 'persistent cache: ...' are the job's own"
echo "   words: the profile's environment reached torch_xla before it started."
echo "   'compiles: 2' is torch_xla's CompileTime metric; xlaunch counted 2 from the"
echo "   ~20 'Compilation Analysis' lines each compilation prints, and named the"
echo "   frame that compiled again."

step "3. second launch, same job: what happened to the persistent cache"
launch run cpu-torch-xla -- "$PY" examples/train_torch_xla.py 10 --shape-change-at 7
echo "   On PJRT_DEVICE=CPU torch_xla 2.9.0 writes its cache but cannot read it"
echo "   back: xlaunch said so before the start (etc/cachekeys.yaml) and after,"
echo "   with torch_xla's reason."

step "4. a storm: one row more every step"
launch run cpu-torch-xla --fail-on=compile-storm -- "$PY" examples/train_torch_xla.py 20 --shape-every-step
echo "   exit status with --fail-on=compile-storm: $rc (see 'xlaunch help exit-codes')"
