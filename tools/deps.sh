#!/bin/sh
# Installs the Debian packages that building and testing xlaunch need, when
# any is missing.  Uses sudo when not run as root.  python3-dev: Inductor
# (torch.compile on the CPU) builds each kernel module with g++ against
# Python.h of the interpreter the torch venv was made from.  libpq-dev: the
# PostgreSQL store backend's header (libpq5 comes with it and is loaded at
# run time); postgresql: the server the store tests start privately
# (tools/pg.sh), never a system-wide one.  chromium: the integration test
# of `calib report` renders the page headless to a PNG.  tcl and dpkg-dev:
# `make wheel` compiles sqlite3 from Debian's source package (its
# amalgamation is made by a tclsh script; dpkg-source unpacks it).
# slurm-wlm and munge: the tests of ranks under srun and sbatch start a
# private single-node cluster (tools/slurm.sh), never a system-wide one.
#   tools/deps.sh          everything: the build, the tests, make wheel (make test, CI)
#   tools/deps.sh demo     only what `make demo` needs: a compiler, pkg-config,
#                          the four libraries' headers and Python with venv
#                          and pip (the demo's venv takes jax from PyPI)
set -e
DEMO_PKGS="build-essential pkg-config libyaml-dev libjansson-dev libsqlite3-dev libpq-dev
python3 python3-venv python3-pip"
PKGS="build-essential pkg-config libyaml-dev libjansson-dev libsqlite3-dev libcmocka-dev
clang llvm libclang-rt-dev sqlite3 python3 python3-venv python3-pip python3-dev python3-yaml
ocl-icd-libopencl1 pocl-opencl-icd ocl-icd-opencl-dev valgrind util-linux libpq-dev postgresql
chromium tcl dpkg-dev stress-ng slurm-wlm munge"
case "${1:-all}" in
demo) PKGS=$DEMO_PKGS ;;
all) ;;
*) echo "usage: tools/deps.sh [demo|all]" >&2; exit 64 ;;
esac
missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0
echo "xlaunch deps: installing:$missing"
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# Debian's server package makes and starts a cluster of its own unless told
# not to; the tests need only the programs (tools/pg.sh runs its own server).
# The file is the package's own conffile: --force-confold keeps this one.
case "$missing" in
*" postgresql"*)
	if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
		$SUDO mkdir -p /etc/postgresql-common
		echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.conf >/dev/null
	fi
	;;
esac
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-confold $missing
