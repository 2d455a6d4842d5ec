# sdist_install.sh - the source archive as a user with a compiler gets it:
# `make sdist`, then `pip install xlaunch-VERSION.tar.gz` into a fresh venv
# of Debian's /usr/bin/python3 (pip fetches the pinned hatchling from PyPI,
# the build hook runs `make` with this host's compiler and Debian's -dev
# packages), the installed tool used from outside the checkout; and on a
# host where pkg-config finds none of the -dev packages, a message that
# names them.
real_home=$HOME
. "$(dirname "$0")/lib.sh"
case "$XL" in */build/san/*) skip "the sdist builds the release binary, not the sanitizer build: the release suite tests it" ;; esac
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3 (the distribution's Python)"
unset XLAUNCH_DATADIR
VER=$(sed -n 's/^#define XLAUNCH_VERSION "\(.*\)"$/\1/p' "$SRC/common/common.h")
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_CACHE_DIR="$real_home/.cache/pip"

run env QUIET=1 WHEEL_DIST="$T/dist" "$SRC/tools/wheel.sh" sdist
[ "$rc" -eq 77 ] && skip "$(grep '^SKIP' "$T/err" | tail -1 | sed 's/^SKIP: //')"
expect_rc 0 "tools/wheel.sh sdist"
SD=$(cat "$T/out")
expect_eq "$SD" "$T/dist/xlaunch-$VER.tar.gz" "the sdist's name"
tar tzf "$SD" >"$T/list"
for f in Makefile pyproject.toml tools/hatch_build.py common/common.h profiles/cpu-jax.yaml \
	etc/outcomes.yaml kernels/opencl/triad.cl man/00-head.man; do
	grep -qx "xlaunch-$VER/$f" "$T/list" || fail "the sdist lacks $f"
done
ok "the sdist holds what make needs"
! grep -q "^xlaunch-$VER/\(tests\|build\|dist\|\.venv\)/" "$T/list" || fail "the sdist holds tests/, build/, dist/ or .venv/"
ok "and nothing of tests/ or build/"

V="$T/venv"
/usr/bin/python3 -m venv "$V" || fail "/usr/bin/python3 -m venv"
# no -dev package found: the build says which ones are missing
mkdir -p "$T/no-pc"
run env PKG_CONFIG_LIBDIR="$T/no-pc" PKG_CONFIG_PATH= "$V/bin/pip" install "$SD"
if grep -q "No matching distribution found for hatchling" "$T/out" "$T/err"; then
	skip "pip could not fetch hatchling, the sdist's build backend (is PyPI reachable?)"
fi
[ "$rc" -ne 0 ] || fail "pip install built the sdist without any -dev package"
cat "$T/out" "$T/err" >"$T/all"
grep -qF "xlaunch: build: missing Debian packages: libyaml-dev libjansson-dev libsqlite3-dev libpq-dev" "$T/all" ||
	{ cat "$T/all"; fail "the failed build does not name the missing Debian packages"; }
ok "a host without the -dev packages is told which ones to install"

run "$V/bin/pip" install "$SD"
expect_rc 0 "pip install xlaunch-$VER.tar.gz"
grep -qx "Tag: py3-none-linux_x86_64" "$V"/lib/python3*/site-packages/xlaunch-"$VER".dist-info/WHEEL ||
	fail "a wheel built here is not tagged for this host only (linux_x86_64)"
ok "built here, tagged linux_x86_64"
mkdir -p "$T/work" && cd "$T/work"
run env PATH="$V/bin:/usr/bin:/bin" xlaunch version --json
expect_rc 0 "version"
expect_out "\"data_dir\": \"$V/share/xlaunch\"" "the data beside the binary"
run env PATH="$V/bin:/usr/bin:/bin" xlaunch env cpu-jax
expect_rc 0 "env cpu-jax"
expect_out "XLA_FLAGS='--xla_force_host_platform_device_count=4'" "the shipped profile resolves"
run "$V/bin/pip" uninstall -y xlaunch
expect_rc 0 "pip uninstall"
[ ! -e "$V/bin/xlaunch" ] && [ ! -e "$V/share/xlaunch" ] || fail "pip uninstall left files"
ok "nothing left"
done_ok
