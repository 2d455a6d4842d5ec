#!/bin/sh
# Runs every unit test binary and every integration test script, JOBS at a
# time, then prints one closing line: "N passed, N failed, N skipped".
#   tools/run-tests.sh BUILD_DIR XLAUNCH_BINARY
#
# JOBS (default: the number of CPUs, at most one per 3 GiB of memory; `make
# test JOBS=1` runs one at a time) tests run side by side, as `ctest -j` and
# `prove -j` do.  No two can meet:
# each runs in its own process group and session, with its own TMPDIR (so
# its temporary, state and cache directories, made under TMPDIR by
# tests/integration/lib.sh and tests/unit/unit.c, are its own), its own
# database on the run's PostgreSQL server (XLAUNCH_TEST_PG names it), and
# ports it picks free.  A script with a line `# test: alone (why)` runs with
# nothing else beside it (a benchmark ratio, a test that loads the whole
# machine), after the others.  Tests that start libtpu take the lock
# tests/integration/lib.sh gives them (libtpu_lock): libtpu allows one
# process a host.
#
# Output: one line per test, in a stable order (unit tests, then integration
# tests, by name), each printed as soon as it and every test before it have
# ended; a failed test's log follows its line.  While the next line waits
# on a long test, a line beginning "... " every two minutes names what is
# still running.  The long tests start first: each test's time is kept
# in BUILD_DIR/test-times (and read from tests/test-times, the times of
# a whole run on a 2-core host, where that file is missing).  TESTS (names,
# separated by spaces or newlines) narrows the integration tests.

# one test, in the background: tools/run-tests.sh --job LOGDIR KIND NAME PATH
if [ "${1:-}" = --job ]; then
	log=$2 kind=$3 name=$4 path=$5
	tmp="$log/tmp/$name"
	mkdir -p "$tmp" && chmod 1777 "$tmp"
	export TMPDIR="$tmp"
	if [ -n "${XLT_PG_DIR:-}" ]; then
		# a database of its own on the run's server
		db="t_$name"
		tools/pg.sh createdb "$XLT_PG_DIR" "$db" >"$log/$name.log" 2>&1
		XLAUNCH_TEST_PG=$(tools/pg.sh url "$XLT_PG_DIR" "$db")
		export XLAUNCH_TEST_PG
	fi
	: >>"$log/$name.log"
	start=$(date +%s)
	if [ "$kind" = unit ]; then
		mkdir -p "$tmp/home"
		HOME="$tmp/home" XDG_STATE_HOME="$tmp/state" XDG_CONFIG_HOME="$tmp/config" \
			XDG_CACHE_HOME="$tmp/cache" "$path" >>"$log/$name.log" 2>&1
	else
		sh "$path" >>"$log/$name.log" 2>&1
	fi
	rc=$?
	echo $(( $(date +%s) - start )) >"$log/$name.secs"
	if [ -n "${XLT_PG_DIR:-}" ]; then
		tools/pg.sh dropdb "$XLT_PG_DIR" "$db" >/dev/null 2>&1
	fi
	rm -rf "$tmp"
	# the status file last: the runner takes its presence as the end
	echo $rc >"$log/$name.rc.new" && mv "$log/$name.rc.new" "$log/$name.rc"
	exit 0
fi

# a server of an outer run (this runner run by a test) is not this run's
unset XLT_PG_DIR
BUILD=${1:-build/rel}
XL=${2:-./xlaunch}
case "$XL" in /*) ;; *) XL="$(pwd)/$XL" ;; esac
export XLAUNCH_BIN="$XL"
export XLAUNCH_SRC="$(pwd)"
export XLAUNCH_DATADIR="$(pwd)"
TESTS=${TESTS:-}

# JOBS by default: the CPUs, and no more tests at once than the memory
# holds.  A test's largest process keeps up to 2.5 GiB resident (the JAX
# jobs of calib_curves and report_helper; most take far less), so one test
# per 3 GiB of the host's memory.
if [ -z "${JOBS:-}" ]; then
	JOBS=$(nproc 2>/dev/null || echo 2)
	mem_gib=$(awk '/^MemTotal:/ { print int($2 / 1048576) }' /proc/meminfo 2>/dev/null)
	if [ -n "$mem_gib" ] && [ $((mem_gib / 3)) -lt "$JOBS" ]; then
		JOBS=$((mem_gib / 3))
		[ "$JOBS" -ge 1 ] || JOBS=1
		echo "JOBS=$JOBS: $(nproc) CPUs, but $mem_gib GiB of memory, 3 GiB a test (JOBS=N sets it)"
	fi
fi
case "$JOBS" in '' | *[!0-9]* | 0) echo "run-tests: JOBS='$JOBS': not a positive number" >&2; exit 64 ;; esac
pass=0 fail=0 skip=0 failed=""
log=$(mktemp -d "${TMPDIR:-/tmp}/xlaunch-tests.XXXXXX") || exit 70
# the PostgreSQL server's user must reach each test's TMPDIR
chmod 0755 "$log"
mkdir -p "$log/tmp" && chmod 0755 "$log/tmp"
TIMES="$BUILD/test-times"

# The store tests run on both backends: a private PostgreSQL server
# (tools/pg.sh, on a Unix socket in a temporary directory) for the whole
# run, stopped and removed at the end whatever happens; each test gets a
# database of its own there.  A server of the caller's (XLAUNCH_TEST_PG set)
# is used as it is, shared by the tests.
pgdir=""
running=""
# stop_jobs: TERM to every running test's process group, KILL to what is
# left of them after 5 s
stop_jobs() {
	[ -n "$running" ] || return 0
	for p in $running; do kill -TERM "-${p#*:}" 2>/dev/null; done
	i=0
	while [ $i -lt 50 ]; do
		left=""
		for p in $running; do kill -0 "-${p#*:}" 2>/dev/null && left="$left $p"; done
		[ -n "$left" ] || break
		sleep 0.1; i=$((i + 1))
	done
	for p in $running; do kill -KILL "-${p#*:}" 2>/dev/null; done
	running=""
}
cleanup() {
	stop_jobs
	rm -rf "$log"
	if [ -n "$pgdir" ]; then tools/pg.sh destroy "$pgdir"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP
if [ -z "${XLAUNCH_TEST_PG:-}" ]; then
	if ! tools/pg.sh available; then
		echo "SKIP PostgreSQL: no server programs (tools/deps.sh installs them); the store tests run on SQLite only"
	elif pgdir=$(tools/pg.sh new 2>"$log/pg.log"); then
		XLT_PG_DIR=$pgdir
		export XLT_PG_DIR
		echo "PostgreSQL test server: $(tools/pg.sh url "$pgdir" 't_NAME') (a database per test)"
	else
		pgdir=""
		fail=$((fail + 1)); failed="$failed postgresql-server"; echo "FAIL postgresql-server"
		sed 's/^/    /' "$log/pg.log" | tail -20
	fi
fi

# The list, in output order: "KIND NAME PATH ALONE" per line.
: >"$log/list"
for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	echo "unit $(basename "$t") $t 0" >>"$log/list"
done
for t in tests/integration/*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	[ "$name" = lib ] && continue
	if [ -n "$TESTS" ] && ! echo " $TESTS " | tr '\n\t' '  ' | grep -q " $name "; then continue; fi
	alone=0
	grep -q '^# test: alone' "$t" && alone=1
	echo "integration $name $t $alone" >>"$log/list"
done
total=$(wc -l <"$log/list")
# a name in TESTS that is no test is a failure: a list gone stale would
# otherwise leave tests out without a word
for n in $TESTS; do
	if ! awk -v n="$n" '$1 == "integration" && $2 == n { f = 1 } END { exit !f }' "$log/list"; then
		fail=$((fail + 1)); failed="$failed TESTS:$n"
		echo "FAIL TESTS: '$n' is no test in tests/integration"
	fi
done

# Start order: the unit tests (short, and first in the output), then the
# integration tests that took 30 s or more last time, longest first
# (unknown ones first of all: they may be long), then the shorter ones in
# the output's order (so that the lines flow while they run), then the ones
# that run alone.
times=$TIMES
[ -f "$times" ] || times=tests/test-times
awk -v times="$times" '
BEGIN { while ((getline l < times) > 0) { split(l, f, " "); secs[f[1]] = f[2] } }
{
	s = ($2 in secs) ? secs[$2] + 0 : 1000000
	if (s < 30) s = 0
	print ($1 == "unit") ? 0 : ($4 == 1) ? 2 : 1, s, NR, $4, $2
}' "$log/list" | sort -k1,1n -k2,2nr -k3,3n | awk '{ print $4, $5 }' >"$log/order"

# report NAME KIND: its line (and its log when it failed)
report() {
	rc=$(cat "$log/$1.rc")
	secs=$(cat "$log/$1.secs" 2>/dev/null || echo 0)
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1)); echo "PASS $2/$1 (${secs}s)"
	elif [ "$2" = integration ] && [ "$rc" -eq 77 ]; then
		skip=$((skip + 1)); echo "SKIP $2/$1: $(grep '^SKIP' "$log/$1.log" | tail -1)"
	else
		fail=$((fail + 1)); failed="$failed $2/$1"
		echo "FAIL $2/$1 (${secs}s)"
		if [ "$2" = unit ]; then sed 's/^/    /' "$log/$1.log" | tail -40
		else sed 's/^/    /' "$log/$1.log" | tail -60; fi
	fi
	echo "$1 $secs" >>"$log/times"
}

# start NAME: in the background, in a session of its own (its process group
# is ended with it if the run is stopped)
start() {
	set -- $(awk -v n="$1" '$2 == n' "$log/list")
	setsid "$0" --job "$log" "$1" "$2" "$3" </dev/null &
	running="$running $2:$!"
}

# reap: forget the tests that have ended; nrun: how many still run
reap() {
	r=""
	for p in $running; do
		if [ -e "$log/${p%%:*}.rc" ]; then wait "${p#*:}" 2>/dev/null; else r="$r $p"; fi
	done
	running=$r
	set -- $running
	nrun=$#
}

# flush: the lines of every test, in list order, that has ended and has
# nothing unprinted before it
printed=0
flush() {
	while [ $printed -lt $total ]; do
		set -- $(sed -n "$((printed + 1))p" "$log/list")
		[ -e "$log/$2.rc" ] || return 0
		report "$2" "$1"
		printed=$((printed + 1))
	done
}

last_print=$(date +%s)
waiting() {
	now=$(date +%s)
	if [ $((now - last_print)) -ge 120 ]; then
		echo "... running:$(for p in $running; do printf ' %s' "${p%%:*}"; done) ($printed of $total reported)"
		last_print=$now
	fi
}

exec 3<"$log/order"
while read -r alone name <&3; do
	if [ "$alone" = 1 ]; then
		# nothing else may run beside it
		while reap; [ "$nrun" -gt 0 ]; do p0=$printed; flush; [ $printed -eq $p0 ] || last_print=$(date +%s); waiting; sleep 0.2; done
	else
		while reap; [ "$nrun" -ge "$JOBS" ]; do p0=$printed; flush; [ $printed -eq $p0 ] || last_print=$(date +%s); waiting; sleep 0.2; done
	fi
	start "$name"
	if [ "$alone" = 1 ]; then
		while reap; [ "$nrun" -gt 0 ]; do p0=$printed; flush; [ $printed -eq $p0 ] || last_print=$(date +%s); waiting; sleep 0.2; done
	fi
done
exec 3<&-
while reap; [ "$nrun" -gt 0 ]; do p0=$printed; flush; [ $printed -eq $p0 ] || last_print=$(date +%s); waiting; sleep 0.2; done
flush

# keep this run's times for the next run's order (the tests it did not run
# keep theirs)
if [ -s "$log/times" ]; then
	{ cat "$log/times"; [ -f "$TIMES" ] && awk 'NR == FNR { seen[$1] = 1; next } !($1 in seen)' "$log/times" "$TIMES"; } |
		sort >"$log/times.all" && mv "$log/times.all" "$TIMES" 2>/dev/null
fi
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
