# install_relocate.sh - an installed tree finds its data wherever it is:
# `make install DESTDIR=...` into a temporary prefix, the tree moved
# elsewhere, then version, profile list, env, run from /.  And no command
# crashes on an empty profile path or a missing data directory: each says
# where it looked.
. "$(dirname "$0")/lib.sh"
san=0
case "$XL" in */build/san/*) san=1 ;; esac
# built in a copy of the build directory: another PREFIX rebuilds what
# names the data directory, and the suite's own binary must stay as it is
bdir=rel
[ $san = 1 ] && bdir=san
mkdir -p "$T/build"
[ -d "$SRC/build/$bdir" ] && cp -a "$SRC/build/$bdir/." "$T/build/"
make -s -C "$SRC" install SAN=$san BUILD="$T/build" BIN="$T/build/xlaunch" \
	DESTDIR="$T/dest" PREFIX=/opt/xl >"$T/make.log" 2>&1 ||
	{ cat "$T/make.log"; fail "make install DESTDIR=... PREFIX=/opt/xl"; }
[ -x "$T/dest/opt/xl/bin/xlaunch" ] || fail "no installed binary"
[ -f "$T/dest/opt/xl/share/xlaunch/profiles/cpu-jax.yaml" ] || fail "no installed profiles"
[ -f "$T/dest/opt/xl/share/man/man1/xlaunch.1" ] || fail "no installed man page"
ok "installed under DESTDIR"
mv "$T/dest/opt/xl" "$T/moved"
IX="$T/moved/bin/xlaunch"
unset XLAUNCH_DATADIR
cd /
run "$IX" version --json
expect_rc 0 "version --json"
expect_out "\"data_dir\": \"$T/moved/share/xlaunch\"" "the moved tree's data directory"
expect_out '"data_dir_from": "beside the binary: ../share/xlaunch"' "found beside the binary"
run "$IX" profile list
expect_rc 0 "profile list"
expect_out "cpu-jax" "the shipped profiles are listed"
run "$IX" env cpu-jax
expect_rc 0 "env cpu-jax"
expect_out "XLA_FLAGS='--xla_force_host_platform_device_count=4'" "the shipped profile resolves"
run "$IX" run cpu-jax -c mb256 -- true
expect_rc 0 "run cpu-jax -- true"
expect_err "ok (exited 0)" "the run ends ok"
run "$IX" calib history --json
expect_rc 0 "calib history"
expect_out '"profile": "cpu-jax"' "the run was recorded"

# an empty profile path and a missing data directory: messages, not crashes
mkdir -p "$T/empty"
cd "$T/empty"
export XLAUNCH_DATADIR="$T/nonexistent"
for c in "env cpu-jax" "exec cpu-jax -- true" "run cpu-jax -- true" "profile show cpu-jax" \
	"profile diff cpu-jax xla-base" "calib order cpu-jax" "calib predict cpu-jax"; do
	# shellcheck disable=SC2086
	run "$XL" $c
	expect_rc 66 "$c with no profile anywhere"
	expect_err "profile 'cpu-jax': not found: the profile path holds no profile at all" "$c says the path is empty"
	expect_err "$T/nonexistent (from XLAUNCH_DATADIR) has none in profiles/" "$c names the data directory"
done
run "$XL" profile list
expect_rc 0 "profile list with nothing to list"
expect_err "no profile on the profile path (./profiles:$XDG_CONFIG_HOME/xlaunch/profiles:$T/nonexistent/profiles" "profile list says where it looked"
run "$XL" profile check
expect_rc 0 "profile check with nothing to check"
expect_err "no profile on the profile path" "profile check says where it looked"
run "$XL" --store "$T/nope/calib.db" calib history
expect_rc 0 "a query on a store that does not exist"
expect_err "no store at $T/nope/calib.db" "the query says there is no store"
expect_err "no attempts recorded" "and answers empty"
[ ! -e "$T/nope" ] || fail "the query created the store's directory"
ok "the query created nothing"
done_ok
