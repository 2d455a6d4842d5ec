# ranks_watch.sh - what the ranks of a job watching each other through the
# store cost, and how fast a death ends a big job.
#   sh tests/bench/ranks_watch.sh [XLAUNCH]            (make bench runs it)
#   RANKS=512 sh tests/bench/ranks_watch.sh ./xlaunch   (the default size)
#
# 1. Overhead: `xlaunch run` of a job of fixed work (a shell loop of about a
#    second) as rank 0 of a job of 2 ranks (so it plans through the store,
#    keeps a lease and polls, here every 0.1 s: twenty times the default)
#    against the same `run` without a job, alternating run by run; the
#    ratio of medians of the child's own wall time and of xlaunch's, on
#    SQLite and on PostgreSQL.
# 2. Scale: a simulated job of RANKS ranks on this host (RANKS `xlaunch
#    run` supervisors, each with a sleeping child and a state directory of
#    its own, as on hosts of their own) against a private PostgreSQL server
#    with a stock max_connections of 100 (memory sampling off: 512
#    supervisors on two cores).  While nothing dies: the store's
#    statements (transactions) and new connections per second per rank,
#    and the most connections open at once.  Then one rank's child is
#    killed: how long until every other rank's child has ended, and until
#    every supervisor has exited.
# Bounded: every wait has a limit, and on any exit every process started
# here is ended (SIGTERM, then SIGKILL) and the server removed.
set -eu
XL=$(cd "$(dirname "${1:-./xlaunch}")" && pwd)/$(basename "${1:-./xlaunch}")
SRC=$(pwd)
RANKS=${RANKS:-512}
N=${BENCH_RUNS:-9}
T=$(mktemp -d "${TMPDIR:-/tmp}/xlbench.XXXXXX")
PGD=""
PIDS=""
cleanup() {
	# only what this script started: the supervisors (their guardians end
	# their children), then the server
	if [ -n "$PIDS" ]; then
		kill -TERM $PIDS 2>/dev/null || true
		sleep 3
		kill -KILL $PIDS 2>/dev/null || true
	fi
	[ -n "$PGD" ] && "$SRC/tools/pg.sh" destroy "$PGD" >/dev/null 2>&1 || true
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
export HOME="$T/home" XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config" XLAUNCH_DATADIR="$SRC"
unset XLAUNCH_STORE XLA_FLAGS RANK WORLD_SIZE XLAUNCH_JOB_ID
mkdir -p "$HOME" "$T/p"
export XLAUNCH_PROFILE_PATH="$T/p" XLAUNCH_STORE_WAIT=300
cat >"$T/p/fast.yaml" <<'Y'
ranks: {poll: 0.1s, lease: 3s}
Y
cat >"$T/p/big.yaml" <<'Y'
description: the default ranks section
Y
cat >"$T/work.sh" <<'S'
#!/bin/sh
i=0; while [ $i -lt 200000 ]; do i=$((i + 1)); done
S
chmod +x "$T/work.sh"
"$SRC/tools/pg.sh" available 2>/dev/null || { echo "SKIP: no PostgreSQL server programs (tools/deps.sh installs them)"; exit 77; }
PGD=$("$SRC/tools/pg.sh" new)
PSQL() { "$SRC/tools/pg.sh" psql "$PGD" -At "$@"; }
# a stock server's limit on connections
PSQL -c "ALTER SYSTEM SET max_connections = 100" >/dev/null
"$SRC/tools/pg.sh" stop "$PGD" && "$SRC/tools/pg.sh" start "$PGD"
URL=$("$SRC/tools/pg.sh" url "$PGD")
med() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
now() { python3 -c 'import time; print(time.time())'; }
# one run: "child_wall_s total_wall_s"
one() {
	t0=$(now)
	"$@" -q run fast -- "$T/work.sh" >/dev/null 2>&1 || true
	t1=$(now)
	m=$(ls -td "$XDG_STATE_HOME"/xlaunch/runs/*/ | head -1)
	python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); print(m["wall_s"], float(sys.argv[3]) - float(sys.argv[2]))' \
		"$m/manifest.json" "$t0" "$t1"
}

echo "1. overhead of watching on a job that does not die (median of $N runs each, alternating)"
for store in "sqlite:$T/calib.db" "$URL"; do
	: >"$T/a"; : >"$T/b"
	i=0
	while [ $i -lt $N ]; do
		env XLAUNCH_STORE="$store" "$XL" -q run fast -- true >/dev/null 2>&1 || true
		one env XLAUNCH_STORE="$store" "$XL" >>"$T/a"
		one env XLAUNCH_STORE="$store" RANK=0 WORLD_SIZE=2 XLAUNCH_JOB_ID="ov$i-$$" "$XL" >>"$T/b"
		i=$((i + 1))
	done
	ca=$(awk '{print $1}' "$T/a" | med); cb=$(awk '{print $1}' "$T/b" | med)
	wa=$(awk '{print $2}' "$T/a" | med); wb=$(awk '{print $2}' "$T/b" | med)
	kind=${store%%:*}
	printf '  %-10s child %.3f s alone, %.3f s watched: %sx;  xlaunch %.3f s, %.3f s: %sx\n' \
		"$kind" "$ca" "$cb" "$(ratio "$cb" "$ca")" "$wa" "$wb" "$(ratio "$wb" "$wa")"
done

echo "2. a job of $RANKS ranks on PostgreSQL (max_connections 100)"
export XLAUNCH_STORE="$URL"
# hundreds of supervisors on one host: their memory sampling (ten reads of
# /proc a second each) is off, as it would cost this host, not the store
export XLAUNCH_SAMPLE_MS=0
pgstat() { PSQL -c "SELECT xact_commit + xact_rollback, sessions FROM pg_stat_database WHERE datname = 'xlaunch'"; }
t0=$(now)
r=0
up=0
while [ $r -lt "$RANKS" ]; do
	mkdir -p "$T/s/$r"
	env RANK=$r WORLD_SIZE="$RANKS" XLAUNCH_JOB_ID=bench XDG_STATE_HOME="$T/s/$r" \
		"$XL" -q run big -- sleep 3600 >"$T/s/$r.out" 2>&1 &
	PIDS="$PIDS $!"
	r=$((r + 1))
	# a host at a time (16 ranks), each once the ranks before it are up:
	# a machine of two cores starting 512 processes at once measures
	# nothing but its own overload
	if [ $((r % 16)) -eq 0 ] || [ $r -eq "$RANKS" ]; then
		for _ in $(seq 1 300); do
			up=$(PSQL -c "SELECT count(*) FROM job_ranks WHERE job_id = 'bench' AND ended IS NULL")
			[ "$up" -ge $r ] && break
			sleep 0.5
		done
		[ "$up" -ge $r ] || break
	fi
done
t1=$(now)
[ "$up" -ge "$RANKS" ] || { echo "only $up of $RANKS ranks started"; cat "$T/s/0.out"; exit 1; }
python3 -c 'import sys; print("  all %s ranks up (a lease each) %.0f s after the first was started" % (sys.argv[1], float(sys.argv[3]) - float(sys.argv[2])))' "$RANKS" "$t0" "$t1"
# steady state: what the watching asks of the server
sleep 10
s0=$(pgstat); ts0=$(now)
# the connections open at once, sampled every second for 30 s by one session
peak=$(PSQL -c "DO \$\$ DECLARE m int := 0; c int; BEGIN FOR i IN 1..30 LOOP
	PERFORM pg_stat_clear_snapshot();
	SELECT count(*) INTO c FROM pg_stat_activity WHERE datname = 'xlaunch' AND pid <> pg_backend_pid();
	m := greatest(m, c); PERFORM pg_sleep(1); END LOOP; RAISE NOTICE 'peak %', m; END \$\$" 2>&1 |
	sed -n 's/.*peak //p')
s1=$(pgstat); ts1=$(now)
python3 - "$s0" "$s1" "$ts0" "$ts1" "$RANKS" "$peak" <<'PY'
import sys
x0, c0 = map(int, sys.argv[1].split("|")); x1, c1 = map(int, sys.argv[2].split("|"))
dt = float(sys.argv[4]) - float(sys.argv[3]); n = int(sys.argv[5])
print(f"  while nothing dies ({dt:.0f} s): {(x1 - x0) / dt:.0f} statements/s and {(c1 - c0) / dt:.0f} connections/s"
      f" in all; per rank {(x1 - x0) / dt / n:.3f} statements/s, {(c1 - c0) / dt / n:.3f} connections/s;"
      f" at most {sys.argv[6]} connections open at once (of 100)")
PY
# one rank dies: its child is killed
victim=$(echo $PIDS | awk '{print $(int(NF / 5) + 1)}')
# the sleeping children of the supervisors, from one listing of processes
ps -eo pid=,ppid=,comm= >"$T/ps"
echo $PIDS | tr ' ' '\n' >"$T/sup"
kids=$(awk -v v="$victim" 'NR == FNR { sup[$1] = 1; next } $3 == "sleep" && ($2 in sup) && $2 != v { print $1 }' "$T/sup" "$T/ps")
vk=$(awk -v v="$victim" '$3 == "sleep" && $2 == v { print $1 }' "$T/ps")
t0=$(now)
kill -KILL "$vk"
tk=""
for _ in $(seq 1 1200); do
	alive=0
	for k in $kids; do kill -0 "$k" 2>/dev/null && { alive=1; break; }; done
	[ $alive -eq 0 ] && { tk=$(now); break; }
	sleep 0.1
done
for _ in $(seq 1 1200); do
	alive=0
	for p in $PIDS; do kill -0 "$p" 2>/dev/null && { alive=1; break; }; done
	[ $alive -eq 0 ] && break
	sleep 0.2
done
ts=$(now)
PIDS=""
python3 - "$t0" "${tk:-nan}" "$ts" "$RANKS" <<'PY'
import sys
t0, tk, ts = map(float, sys.argv[1:4])
print(f"  one rank's child killed: the other {int(sys.argv[4]) - 1} children had all ended after {tk - t0:.1f} s,"
      f" every supervisor had recorded and exited after {ts - t0:.1f} s")
PY
PSQL -c "SELECT count(*) FILTER (WHERE outcome = 'peer-failed'), count(*) FILTER (WHERE outcome = 'crash'),
	round((max(ended) FILTER (WHERE outcome = 'peer-failed') - min(ended))::numeric, 1)
	FROM job_ranks WHERE job_id = 'bench'" | awk -F'|' '{printf "  the store: %s ranks peer-failed, %s crash; the last end %s s after the first (server clock)\n", $1, $2, $3}'
PSQL -c "SELECT count(*), count(DISTINCT id) FROM attempts WHERE job_id = 'bench'" | awk -F'|' '{printf "  %s attempts recorded (%s distinct)\n", $1, $2}'
