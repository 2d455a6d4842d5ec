# wheel_install.sh - the wheel as a user gets it: `make wheel` (cached under
# build/wheel), auditwheel's tag and the glibc floor the README states, then
# one `pip install` into a fresh venv of Debian's /usr/bin/python3 and one
# `uv pip install` into a fresh uv venv, and from a directory outside the
# checkout, with the venv's bin/ first on PATH: version, probe, profile
# list, a JAX job run through the shipped cpu-jax profile by the venv's own
# interpreter; the binary on a host that has nothing but glibc (no libpq:
# a PostgreSQL store says so); then uninstalled, leaving nothing behind.
real_home=$HOME
. "$(dirname "$0")/lib.sh"
case "$XL" in */build/san/*) skip "the wheel holds the release binary, not the sanitizer build: the release suite tests it" ;; esac
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3 (the distribution's Python)"
FLOOR=2.17	# the glibc floor README.md states; tools/wheel.sh builds for it
JAX=0.10.2
unset XLAUNCH_DATADIR	# the installed binary finds its data itself
VER=$(sed -n 's/^#define XLAUNCH_VERSION "\(.*\)"$/\1/p' "$SRC/common/common.h")

run env QUIET=1 WHEEL_DIST="$SRC/build/wheel/dist" "$SRC/tools/wheel.sh" wheel
[ "$rc" -eq 77 ] && skip "$(grep '^SKIP' "$T/err" | tail -1 | sed 's/^SKIP: //')"
expect_rc 0 "tools/wheel.sh wheel"
WHL=$(cat "$T/out")
case "$(basename "$WHL")" in
"xlaunch-$VER-py3-none-"*manylinux_*_x86_64.whl) ok "the wheel's name: $(basename "$WHL")" ;;
*) fail "unexpected wheel name $WHL" ;;
esac
AW="$SRC/build/venv-wheel/bin/auditwheel"
run "$AW" show "$WHL"
expect_rc 0 "auditwheel show"
tag=$(tr '\n' ' ' <"$T/out" | sed -n 's/.*following platform tag: *"\([^"]*\)".*/\1/p')
expect_eq "$tag" "manylinux_$(echo $FLOOR | tr . _)_x86_64" "auditwheel's tag is the stated glibc floor"
case "$(basename "$WHL")" in *"$tag"*) ok "the wheel carries auditwheel's tag" ;; *) fail "$WHL lacks $tag" ;; esac
# the binary inside: only glibc's libraries are linked, nothing else
mkdir -p "$T/unz"
python3 -m zipfile -e "$WHL" "$T/unz"
WB="$T/unz/xlaunch-$VER.data/scripts/xlaunch"
[ -f "$WB" ] || fail "no xlaunch in the wheel's scripts"
needed=$(readelf -d "$WB" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
expect_eq "$needed" "libc.so.6 libdl.so.2 libpthread.so.0 " "the binary links glibc only (libm is opened on first use)"
for f in share/xlaunch/etc/outcomes.yaml share/xlaunch/profiles/cpu-jax.yaml \
	share/xlaunch/kernels/opencl/triad.cl share/man/man1/xlaunch.1; do
	[ -f "$T/unz/xlaunch-$VER.data/data/$f" ] || fail "the wheel lacks $f"
done
ok "the wheel holds the data and the man page"
# the same program as `make`'s binary: the same help, command by command
for c in "help" "help exit-codes" "help run" "help calib"; do
	# shellcheck disable=SC2086
	"$XL" $c >"$T/a" 2>&1 || true
	chmod +x "$WB"
	# shellcheck disable=SC2086
	"$WB" $c >"$T/b" 2>&1 || true
	# but for the manual page each names: its own (checked per venv below)
	for f in a b; do grep -v '^The manual page: ' "$T/$f" >"$T/$f.n" || true; mv "$T/$f.n" "$T/$f"; done
	cmp -s "$T/a" "$T/b" || { diff "$T/a" "$T/b" | head; fail "'xlaunch $c' differs from make's binary"; }
done
ok "the wheel's binary says what make's says"

# jax and jaxlib for the job: downloaded once into build/ (PyPI), then
# installed from there into each venv
WH="$SRC/build/wheel/wheelhouse-jax-$JAX"
if [ ! -f "$WH/.complete" ]; then
	/usr/bin/python3 -m venv "$T/dl" || fail "python3 -m venv"
	rm -rf "$WH"
	PIP_CACHE_DIR="$real_home/.cache/pip" "$T/dl/bin/pip" download -q --disable-pip-version-check \
		-d "$WH" "jax==$JAX" "jaxlib==$JAX" >"$T/dl.log" 2>&1 ||
		{ cat "$T/dl.log"; skip "pip could not download jax and jaxlib $JAX (is PyPI reachable?)"; }
	touch "$WH/.complete"
fi
UV=$("$SRC/tools/venv.sh" uv 2>"$T/uv.log") || { cat "$T/uv.log"; skip "no uv (tools/venv.sh uv: is PyPI reachable?)"; }
UV="$SRC/$UV/bin/uv"
export UV_PYTHON_DOWNLOADS=never UV_CACHE_DIR="$T/uv-cache" PIP_DISABLE_PIP_VERSION_CHECK=1

cat >"$T/job.py" <<'EOF'
import sys
import jax
import jax.numpy as jnp
print("devices:", jax.device_count())
print("prefix:", sys.prefix)
print("sum:", float(jnp.sum(jnp.arange(8.0) * 2)))
EOF
# only glibc, as on a bare manylinux host: a private root for the libraries
# (libm among them: the math of calib and report opens it)
mkdir -p "$T/glibc"
for l in libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 ld-linux-x86-64.so.2; do
	cp -L "/usr/lib/x86_64-linux-gnu/$l" "$T/glibc/"
done
pyver=$(/usr/bin/python3 -c 'import platform; print(platform.python_version())')

# check_venv NAME VENV: the installed tool, used from outside the checkout
check_venv() {
	name=$1 V=$2
	mkdir -p "$T/work-$name"
	cd "$T/work-$name"
	P="$V/bin:/usr/bin:/bin"
	run env PATH="$P" sh -c 'command -v xlaunch'
	expect_out "$V/bin/xlaunch" "$name: xlaunch is on the venv's PATH"
	run env PATH="$P" xlaunch version --json
	expect_rc 0 "$name: version"
	expect_out "\"data_dir\": \"$V/share/xlaunch\"" "$name: the data beside the binary"
	expect_out '"data_dir_from": "beside the binary: ../share/xlaunch"' "$name: found relative to itself"
	run env PATH="$P" xlaunch help
	expect_out "The manual page: man -l $(cd "$V" && pwd -P)/share/man/man1/xlaunch.1" "$name: help names the venv's manual page"
	run env PATH="$P" xlaunch probe --backend cpu
	expect_rc 0 "$name: probe --backend cpu"
	expect_out "verified" "$name: the CPU kernel ran and was checked"
	run env PATH="$P" xlaunch profile list
	expect_rc 0 "$name: profile list"
	expect_out "cpu-jax" "$name: the shipped profiles"
	run env PATH="$P" VIRTUAL_ENV="$V" xlaunch run cpu-jax -- python "$T/job.py"
	expect_rc 0 "$name: run cpu-jax -- python job.py"
	expect_out "devices: 4" "$name: the profile's XLA_FLAGS reached JAX"
	expect_out "prefix: $V" "$name: the venv's own interpreter ran the job"
	expect_out "sum: 56.0" "$name: the job computed"
	expect_err "ok (exited 0)" "$name: the run ended ok"
	m=$(ls "$XDG_STATE_HOME"/xlaunch/runs/*/manifest.json | tail -1)
	tr -d ' \n' <"$m" >"$T/m"
	grep -q "\"python\":\"$pyver\",\"packages\":{\"jax\":\"$JAX\",\"jaxlib\":\"$JAX\"" "$T/m" ||
		fail "$name: the manifest lacks the venv's bundle (python $pyver, jax $JAX)"
	ok "$name: the signature holds the venv's bundle"
	rm -rf "$XDG_STATE_HOME/xlaunch/runs"
	# nothing but glibc: the binary runs, and libpq is missing only when used
	if unshare -rm true 2>/dev/null; then
		run unshare -rm sh -c 'mount --bind "$1" /usr/lib/x86_64-linux-gnu && shift && exec "$@"' \
			sh "$T/glibc" "$V/bin/xlaunch" --store "postgresql:///xl?host=$T" calib history
		expect_rc 73 "$name: a PostgreSQL store without libpq"
		expect_err "PostgreSQL stores need libpq (libpq.so.5: cannot open shared object file" \
			"$name: the missing libpq is named"
		run unshare -rm sh -c 'mount --bind "$1" /usr/lib/x86_64-linux-gnu && shift && exec "$@"' \
			sh "$T/glibc" "$V/bin/xlaunch" profile list
		expect_rc 0 "$name: profile list with glibc alone"
		run unshare -rm sh -c 'mount --bind "$1" /usr/lib/x86_64-linux-gnu && shift && exec "$@"' \
			sh "$T/glibc" "$V/bin/xlaunch" probe --backend cpu,opencl,cuda --no-record
		expect_rc 0 "$name: probe with glibc alone (absent backends are no failure)"
		expect_out "libOpenCL.so.1: cannot open shared object file" "$name: the missing OpenCL loader is named"
		expect_out "libcuda.so.1: cannot open shared object file" "$name: the missing CUDA driver is named"
	else
		echo "note: no user namespaces here (unshare -rm): the glibc-only host is not simulated"
	fi
	cd "$T"
}

# check_gone VENV [files]: nothing of the wheel is left; with "files", no
# file is left but emptied directories may be (uv 0.13.9 removes the files
# of a wheel's data and leaves their directories)
check_gone() {
	for f in bin/xlaunch share/man/man1/xlaunch.1; do
		[ ! -e "$1/$f" ] || fail "$1/$f is left after uninstall"
	done
	if [ "${2:-}" = files ]; then
		left=$(find "$1/share/xlaunch" ! -type d 2>/dev/null | head -3)
		[ -z "$left" ] || fail "files left after uninstall: $left"
	else
		[ ! -e "$1/share/xlaunch" ] || fail "$1/share/xlaunch is left after uninstall"
	fi
	ls -d "$1"/lib/python3*/site-packages/xlaunch-* >/dev/null 2>&1 && fail "the dist-info is left"
	ok "uninstalled: nothing left in $1"
}

# 1. a venv of Debian's Python, pip
V="$T/venv-debian"
/usr/bin/python3 -m venv "$V" || fail "/usr/bin/python3 -m venv"
run "$V/bin/pip" install --no-index "$WHL"
expect_rc 0 "pip install the wheel"
run "$V/bin/pip" install --no-index --find-links "$WH" "jax==$JAX" "jaxlib==$JAX"
expect_rc 0 "pip install jax and jaxlib"
check_venv pip "$V"
run "$V/bin/pip" uninstall -y xlaunch
expect_rc 0 "pip uninstall -y xlaunch"
check_gone "$V"

# 2. a venv made by uv, uv pip
V="$T/venv-uv"
run "$UV" venv -q --python /usr/bin/python3 "$V"
expect_rc 0 "uv venv"
run "$UV" pip install -q --python "$V/bin/python" --offline "$WHL"
expect_rc 0 "uv pip install the wheel"
run "$UV" pip install -q --python "$V/bin/python" --offline --no-index --find-links "$WH" \
	"jax==$JAX" "jaxlib==$JAX"
expect_rc 0 "uv pip install jax and jaxlib"
check_venv uv "$V"
run "$UV" pip uninstall -q --python "$V/bin/python" xlaunch
expect_rc 0 "uv pip uninstall xlaunch"
check_gone "$V" files
done_ok
