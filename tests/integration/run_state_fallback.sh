# run_state_fallback.sh - a host whose state directory cannot keep a run
# (it cannot be created, it is read-only, it is full, it fills up during
# the run): `run` keeps the run directory and record in a private
# directory under $TMPDIR, says so once, launches, and the next run whose
# state directory works records them; with nothing writable at all it
# launches only with --no-record.  And compile caches follow
# XDG_CACHE_HOME.
. "$(dirname "$0")/lib.sh"
export TMPDIR="$T/tmp"
mkdir -p "$TMPDIR"
unset XLAUNCH_CACHE_ROOT XDG_CACHE_HOME
FB="$TMPDIR/xlaunch-$(id -un)"
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P"
printf 'description: a plain job\nenv: {XLT_JOB: 1}\n' >"$P/plain.yaml"

# the fallback's records reach the store at the next run that works
settle() {  # settle DESCRIPTION: a run with a working state directory records what was kept
	run "$XL" run plain -- true
	expect_rc 0 "$1: a later run with a working state directory"
	run "$XL" calib history --json
	for id in $(ls "$FB/runs"); do
		expect_out "\"id\": \"$id\"" "$1: the kept attempt $id reached the store"
		[ -f "$FB/runs/$id/settled" ] || fail "$1: the kept run directory $id is not settled"
	done
	[ -z "$(ls "$FB/pending")" ] || fail "$1: records are left in $FB/pending"
	ok "$1: nothing is left waiting"
	rm -rf "$FB"
}

# 1. a state directory that cannot be created
XDG_STATE_HOME=/proc/nope run "$XL" run plain -- sh -c 'touch "$XLAUNCH_RUN_DIR/ran"'
expect_rc 0 "state directory that cannot be created: launched"
expect_err "state directory '/proc/nope/xlaunch' cannot keep run directories" "the reason is said"
expect_err "kept in '$FB' instead" "the fallback is named"
expect_err "launching anyway: the record is kept in '$FB/pending' until the store works" "the store warning says where the record is"
expect_err "ok (exited 0)" "the attempt ran"
[ "$(grep -c 'cannot keep run directories' "$T/err")" -eq 1 ] || fail "said more than once"
ok "said once"
ls "$FB"/runs/*/ran >/dev/null 2>&1 || fail "the child did not run in a run directory under $FB"
ok "the run directory is under the fallback"
[ "$(stat -c %a "$FB")" = 700 ] || fail "the fallback is not 0700"
ok "the fallback is private"
ls "$FB"/pending/*.json >/dev/null 2>&1 || fail "no record kept in $FB/pending"
ok "the record is kept"
if grep -q "No such file or directory" "$T/err" && grep -q "run directory '/proc" "$T/err"; then
	fail "a run directory under /proc was tried after the fallback"
fi
settle "cannot be created"

# 2. nothing writable at all: only --no-record launches
XDG_STATE_HOME=/proc/nope TMPDIR=/proc/nope2 run "$XL" run plain -- touch "$T/launched"
expect_rc 73 "nothing writable: refused"
expect_err "run: nowhere to keep this launch's run directory and record" "one clear message"
expect_err "(--no-record launches without them)" "the way out named"
[ ! -e "$T/launched" ] || fail "the job was launched"
! grep -q "launching anyway" "$T/err" || fail "'launching anyway' was said and nothing launched"
ok "no launching anyway"
XDG_STATE_HOME=/proc/nope TMPDIR=/proc/nope2 run "$XL" run --no-record plain -- touch "$T/launched"
expect_rc 0 "nothing writable, --no-record: launched"
expect_err "launching without a run directory" "says it runs without one"
expect_err "ok (exited 0)" "the outcome is still named"
[ -e "$T/launched" ] || fail "the job did not run"
ok "the job ran"

# a fallback that is not the user's own private directory is never used
mkdir -p "$T/elsewhere"
ln -s "$T/elsewhere" "$FB"
XDG_STATE_HOME=/proc/nope run "$XL" run plain -- touch "$T/launched2"
expect_rc 73 "a symbolic link in place of the fallback: refused"
expect_err "'$FB' is not a directory" "the link is named"
[ -z "$(ls "$T/elsewhere")" ] || fail "something was written through the link"
[ ! -e "$T/launched2" ] || fail "the job was launched"
ok "nothing written through the link"
rm "$FB"
if [ "$(id -u)" -eq 0 ]; then
	mkdir -m 0700 "$FB"
	chown 65534 "$FB"
	XDG_STATE_HOME=/proc/nope run "$XL" run plain -- true
	expect_rc 73 "a fallback owned by another user: refused"
	expect_err "'$FB' belongs to another user" "the owner is the reason"
	rm -rf "$FB"
else
	echo "SKIP part: a fallback owned by another user needs root to make (chown)"
fi

# 3-5 need mounts of their own: a read-only and a small tmpfs
if ! unshare -rm true 2>/dev/null; then
	skip "cannot make a mount namespace here (unshare -rm) for the read-only and full cases"
fi
cat >"$T/ns.sh" <<'NS'
set -e
T=$1; XL=$2
mkdir -p "$T/ro" "$T/full" "$T/fills"
mount -t tmpfs -o size=1m tmpfs "$T/ro"
mkdir -p "$T/ro/xlaunch"
# the size again: without it a user namespace's remount fails ("bad option")
mount -o remount,ro,size=1m tmpfs "$T/ro"
mount -t tmpfs -o size=64k tmpfs "$T/full"
dd if=/dev/zero of="$T/full/fill" bs=4k 2>/dev/null || true
mount -t tmpfs -o size=256k tmpfs "$T/fills"
echo "== read-only"
XDG_STATE_HOME="$T/ro" "$XL" run plain -- true 2>&1 || echo "exit $?"
echo "== full"
XDG_STATE_HOME="$T/full" "$XL" run plain -- true 2>&1 || echo "exit $?"
echo "== fills up during the run"
# (its store is elsewhere and unreachable, so that this run replays nothing)
XLAUNCH_STORE=/proc/nope/calib.db XDG_STATE_HOME="$T/fills" XLT_FILL="$T/fills/fill" "$XL" run plain -- \
	sh -c 'dd if=/dev/zero of="$XLT_FILL" bs=4k 2>/dev/null; true' 2>&1 || echo "exit $?"
NS
unshare -rm sh "$T/ns.sh" "$T" "$XL" >"$T/ns.out" 2>&1 || { cat "$T/ns.out"; fail "the mount namespace script failed"; }
# unshare -r makes the user root in the namespace: xlaunch there keeps its
# files in root's fallback, which for another user only a run in such a
# namespace reads (the settling run below)
FB_HOST=$FB XL_HOST=$XL
FB="$TMPDIR/xlaunch-$(unshare -r id -un)"
if [ "$FB" != "$FB_HOST" ]; then
	printf '#!/bin/sh\nexec unshare -r "%s" "$@"\n' "$XL" >"$T/xl-ns"
	chmod +x "$T/xl-ns"
	XL="$T/xl-ns"
fi
cp "$T/ns.out" "$T/err"
sed -n '/== read-only/,/== full/p' "$T/ns.out" >"$T/err"
expect_err "cannot keep run directories" "read-only: the reason is said"
expect_err "Read-only file system" "read-only: in the system's words"
expect_err "ok (exited 0)" "read-only: launched"
sed -n '/== full/,/== fills/p' "$T/ns.out" >"$T/err"
expect_err "No space left on device" "full: the reason is said"
expect_err "kept in '$FB' instead" "full: the fallback is named"
expect_err "ok (exited 0)" "full: launched"
sed -n '/== fills up/,$p' "$T/ns.out" >"$T/err"
expect_err "ok (exited 0)" "fills during the run: the attempt ran"
expect_err "keeping this launch's files in '$FB' from now on" "fills during the run: the record falls back"
! grep -q "exit " "$T/err" || fail "a launch exited non-zero"
n=$(ls "$FB/pending" | wc -l)
[ "$n" -eq 3 ] || fail "expected 3 records kept in $FB/pending, found $n"
ok "three records kept"
settle "read-only, full, filled"
FB=$FB_HOST XL=$XL_HOST

# XDG_CACHE_HOME: the shipped profiles' compile caches live under it
export XDG_CACHE_HOME="$T/xdgcache"
unset XLAUNCH_PROFILE_PATH
run "$XL" env cpu-jax
expect_rc 0 "env cpu-jax"
expect_out "JAX_COMPILATION_CACHE_DIR='$T/xdgcache/xlaunch/jax'" "the JAX cache under XDG_CACHE_HOME"
expect_out "XLA_PERSISTENT_CACHE_PATH='$T/xdgcache/xlaunch/torch_xla'" "the torch_xla cache under XDG_CACHE_HOME"
run "$XL" profile show cpu-jax --explain
expect_out '${XLAUNCH_CACHE_ROOT} not set, ${XDG_CACHE_HOME} from the launching environment' "--explain says which variable chose the path"
run "$XL" run cpu-jax -c mb256 -- true
expect_rc 0 "run cpu-jax"
[ -d "$T/xdgcache/xlaunch/jax" ] || fail "run did not make the cache directory under XDG_CACHE_HOME"
[ ! -e "$HOME/.cache/xlaunch" ] || fail "a cache directory was made under HOME"
ok "nothing under HOME/.cache"
XLAUNCH_CACHE_ROOT="$T/root" run "$XL" profile show cpu-jax --explain
expect_out "JAX_COMPILATION_CACHE_DIR=$T/root/jax" "XLAUNCH_CACHE_ROOT wins"
expect_out '${XLAUNCH_CACHE_ROOT} from the launching environment' "and --explain says so"
unset XDG_CACHE_HOME
run "$XL" env cpu-jax
expect_out "JAX_COMPILATION_CACHE_DIR='$HOME/.cache/xlaunch/jax'" "without either, under HOME/.cache"
done_ok
