#!/bin/sh
# make demo: probe this host, then train a real JAX job on the CPU under the
# shipped cpu-jax profile, and show what the store learned.  It uses your
# normal store and compile cache, so a second `make demo` shows what the
# first one taught it.
#   tools/demo.sh XLAUNCH
set -e
XL=${1:-./xlaunch}
case "$XL" in /*) ;; *) XL="$(pwd)/$XL" ;; esac
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
venv=$(tools/venv.sh demo) || {
	echo "demo: cannot set up .venv with jax (see above); the demo needs PyPI once" >&2
	exit 1
}
PY="$(pwd)/$venv/bin/python"

step "1. xlaunch probe: which backends are alive on this host?"
"$XL" probe || echo "(exit $?: a backend that is installed is not alive; see its error above)"

step "2. the job without xlaunch sees the host as one device"
"$PY" examples/train_mlp.py 1 --micro-batch 8 2>/dev/null | head -1

step "3. xlaunch run cpu-jax -- python examples/train_mlp.py"
echo "   (cpu-jax: XLA_FLAGS gives 4 host devices, a local JAX compile cache,"
echo "    an 8 GiB address-space cap, candidates mb2m (too big) then mb256)"
"$XL" profile show cpu-jax
echo
"$XL" run cpu-jax -- "$PY" examples/train_mlp.py

step "4. xlaunch calib history --profile cpu-jax"
"$XL" calib history --profile cpu-jax --limit 8

step "5. xlaunch calib order cpu-jax: what the next launch will try first"
"$XL" calib order cpu-jax

step "6. xlaunch calib report: what the store knows, as one HTML page"
"$XL" calib report -o build/calib-report.html
echo "   wrote build/calib-report.html (open it in a browser; no network needed)"
echo
echo "Run 'make demo' again: the known-bad candidate goes last, the first attempt"
echo "succeeds, and its programs come from the persistent compile cache."
