# lib.sh - helpers for integration tests; sourced by tests/integration/*.sh.
# Each test runs in its own temporary HOME/XDG dirs and exits non-zero on
# the first failed check.  Exit 77 with a "SKIP: why" line means skipped.
set -u
XL=${XLAUNCH_BIN:-$(pwd)/xlaunch}
SRC=${XLAUNCH_SRC:-$(pwd)}
T=$(mktemp -d "${TMPDIR:-/tmp}/xlt.XXXXXX")
trap 'rm -rf "$T"' EXIT
export HOME="$T/home" XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
mkdir -p "$HOME" "$XDG_STATE_HOME" "$XDG_CONFIG_HOME"
unset XLAUNCH_STORE XLAUNCH_PROFILE_PATH XLA_FLAGS LIBTPU_INIT_ARGS TF_XLA_FLAGS
export NO_COLOR=1
nchecks=0

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
ok() { nchecks=$((nchecks + 1)); [ -n "${VERBOSE:-}" ] && echo "ok: $*"; return 0; }

# run CMD...: runs, capturing stdout in $T/out, stderr in $T/err, status in $rc
run() {
	set +e
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
}
expect_rc() {  # expect_rc N description
	[ "$rc" -eq "$1" ] || { echo "--- stdout"; cat "$T/out"; echo "--- stderr"; cat "$T/err"; fail "$2: exit $rc, expected $1"; }
	ok "$2"
}
expect_out() {  # expect_out FIXED-STRING description
	grep -qF -- "$1" "$T/out" || { echo "--- stdout"; cat "$T/out"; fail "$2: stdout lacks '$1'"; }
	ok "$2"
}
expect_err() {
	grep -qF -- "$1" "$T/err" || { echo "--- stderr"; cat "$T/err"; fail "$2: stderr lacks '$1'"; }
	ok "$2"
}
expect_no_out() {
	! grep -qF -- "$1" "$T/out" || { echo "--- stdout"; cat "$T/out"; fail "$2: stdout has '$1'"; }
	ok "$2"
}
expect_eq() {  # expect_eq ACTUAL EXPECTED description
	[ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"
	ok "$3"
}
done_ok() { echo "ok ($nchecks checks)"; exit 0; }

# announced_id: the id of the last run `xlaunch run` announced in $T/err
# ("... run ID"); announced_manifest: its manifest.json; jget FILE KEY: a
# field of a JSON file, KEY dotted (compile.functions.0.name)
announced_id() { grep -o ' run [0-9]\{8\}T[^ ]*' "$T/err" | tail -1 | sed 's/^ run //'; }
announced_manifest() {
	id=$(announced_id)
	m="$XDG_STATE_HOME/xlaunch/runs/$id/manifest.json"
	[ -n "$id" ] && [ -f "$m" ] || fail "no run announced"
	echo "$m"
}
jget() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): v=v[k] if not k.isdigit() else v[int(k)]
print(v)' "$1" "$2"; }

# Limits that guard against a hang only, never against slowness: the suite
# also runs on a 2-core host with both cores busy beside it (make test-load)
# and other work on top.  With a load average of 450 here (another test's
# hundreds of launches), twelve launches at once took over 60 s to start
# their children.  HANG_S: seconds for a wait (wait_until) or a `timeout`;
# PROBE_LIMIT: --timeout of a probe the test expects to finish (the probe's
# default 10 s is no hang guard on a busy host: with a load average of 7 the
# cpu backend took 1 to 2 s, PoCL's two OpenCL devices 10 to 16 s).
HANG_S=300
PROBE_LIMIT=${HANG_S}s

# now_s: the time in seconds with fractions; secs_since T0: seconds since a
# now_s; below A B: A < B (numbers with fractions)
now_s() { date +%s.%N; }
secs_since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
below() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

# wait_until SECONDS CMD...: runs CMD every 0.05 s until it succeeds (status
# 0) or SECONDS have passed (status 1).  Tests wait for what they need this
# way, never for a fixed time; SECONDS is a hang guard ($HANG_S).
wait_until() {
	_wu_end=$(( $(date +%s) + $1 ))
	shift
	while ! "$@"; do
		[ "$(date +%s)" -lt "$_wu_end" ] || return 1
		sleep 0.05
	done
}

# libtpu_lock: waits until no other test of this host runs libtpu, then
# holds that until this test exits.  libtpu allows one process a host (its
# /tmp/libtpu_lockfile): a second one aborts, so tests that start libtpu
# take this lock first, and tests run side by side (tools/run-tests.sh)
# never start two.  A process outside the suite may hold libtpu too (a
# user's notebook, another checkout's tests): once the suite's lock is
# taken, the test waits for that one as well, LIBTPU_WAIT_S at most
# (default 120), saying who holds it, and then fails naming it rather than
# meeting libtpu's own "Internal error when accessing libtpu multi-process
# lockfile".
LIBTPU_LOCKFILE=${LIBTPU_LOCKFILE:-/tmp/libtpu_lockfile}
libtpu_lock() {
	command -v flock >/dev/null || fail "flock is not installed (util-linux; tools/deps.sh installs it)"
	exec 8>>/tmp/xlaunch-tests-libtpu.lock
	flock -w "$HANG_S" 8 || fail "another test held libtpu for $HANG_S s"
	libtpu_wait_outside "${LIBTPU_WAIT_S:-120}"
}
# libtpu_wait_outside SECONDS: waits until no live process holds
# $LIBTPU_LOCKFILE, SECONDS at most; fails naming the holder after that
libtpu_wait_outside() {
	_lw_end=$(( $(date +%s) + $1 )) _lw_said=
	while :; do
		_lw_who=$(python3 "$SRC/tests/integration/lock_holder.py" "$LIBTPU_LOCKFILE" | tr '\n' ' ')
		[ -n "$_lw_who" ] || return 0
		if [ "$(date +%s)" -ge "$_lw_end" ]; then
			fail "libtpu is held outside the test suite by ${_lw_who% } ($LIBTPU_LOCKFILE) for $1 s: end it, or raise LIBTPU_WAIT_S"
		fi
		[ -n "$_lw_said" ] || echo "waiting for libtpu: ${_lw_who% } holds $LIBTPU_LOCKFILE (at most $1 s)"
		_lw_said=1
		sleep 0.2
	done
}

# slurm_setup: a private single-node Slurm cluster (tools/slurm.sh) for
# this test, SLURM_CONF set to it, removed on exit whatever the test did;
# skips, saying why, when it cannot be had.  SD is its directory.
slurm_setup() {
	"$SRC/tools/slurm.sh" available 2>"$T/slurm.err" ||
		skip "$(sed -n 's/^slurm.sh: //p' "$T/slurm.err" | tail -1)"
	SD=$("$SRC/tools/slurm.sh" new 2>"$T/slurm.err") ||
		{ cat "$T/slurm.err"; skip "no Slurm cluster: $(sed -n 's/^slurm.sh: //p' "$T/slurm.err" | head -1)"; }
	trap 'rm -rf "$T"; "$SRC/tools/slurm.sh" destroy "$SD"' EXIT
	trap 'exit 143' INT TERM HUP
	# shellcheck disable=SC2046
	export $("$SRC/tools/slurm.sh" env "$SD")
}

# PostgreSQL stores.  pg_setup: the test runner's server (XLAUNCH_TEST_PG),
# else a private one started here (tools/pg.sh) and removed on exit; skips
# when the server programs are not installed.  pg_store NAME: the location
# of a new, empty store in schema NAME of that server.  pg_sql LOCATION
# ARG...: psql on a store (-c SQL), unaligned and quiet.
pg_setup() {
	PG_URL=${XLAUNCH_TEST_PG:-}
	"$SRC/tools/pg.sh" available 2>/dev/null || skip "no PostgreSQL server programs (tools/deps.sh installs them)"
	PSQL="$("$SRC/tools/pg.sh" bindir)/psql"
	if [ -z "$PG_URL" ]; then
		PGD=$("$SRC/tools/pg.sh" new) || fail "tools/pg.sh could not start a server"
		trap 'rm -rf "$T"; "$SRC/tools/pg.sh" destroy "$PGD"' EXIT
		PG_URL=$("$SRC/tools/pg.sh" url "$PGD")
	fi
}
pg_sql() {
	"$PSQL" -X -q -At -v ON_ERROR_STOP=1 "$@"
}
pg_store() {
	pg_sql "$PG_URL" -c "DROP SCHEMA IF EXISTS $1 CASCADE" -c "CREATE SCHEMA $1" >/dev/null 2>&1 ||
		fail "cannot make schema $1 on $PG_URL"
	echo "$PG_URL&options=-csearch_path%3D$1"
}
set -e
