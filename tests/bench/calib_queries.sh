#!/bin/sh
# calib_queries.sh - history and order queries on stores of 10^3 and N
# attempts (N: CALIB_BENCH_N, default 10^6), on each backend: time ratios
# (large / small, same run) and the query plans, which must use an index.
# Not part of `make test`; run by `make bench`.
#   tests/bench/calib_queries.sh [XLAUNCH_BINARY]
# CALIB_BENCH_BACKENDS: "sqlite postgresql" (default; PostgreSQL runs on a
# private server from tools/pg.sh, and is left out with a note when the
# server programs are not installed).
set -eu
XL=${1:-${XLAUNCH_BIN:-./xlaunch}}
case "$XL" in /*) ;; *) XL="$(pwd)/$XL" ;; esac
SRC=$(pwd)
N=${CALIB_BENCH_N:-1000000}
BACKENDS=${CALIB_BENCH_BACKENDS:-sqlite postgresql}
T=$(mktemp -d "${TMPDIR:-/tmp}/xlbench.XXXXXX")
PGD=""
cleanup() {
	if [ -n "$PGD" ]; then "$SRC/tools/pg.sh" destroy "$PGD"; fi
	rm -rf "$T"
}
trap cleanup EXIT
export HOME="$T/home" XDG_STATE_HOME="$T/state" NO_COLOR=1
unset XLAUNCH_STORE

# The same stores on each backend: $2 attempts over 1000 signatures (5
# stacks, 100 shapes), 50 profiles, 16 hosts, one in ten an oom.
build_sqlite() {
	"$XL" --store "$1" calib import - </dev/null >/dev/null 2>&1
	sqlite3 "$1" <<SQL
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999)
INSERT INTO signatures (hash, shape_hash, stack_hash, hardware_kind, json, first_seen)
SELECT printf('%064x', i * 7919 + 1), printf('%064x', i % 100), printf('%064x', i % 5), 'tpu',
       '{"model":{"params":' || (1000000000 + i) || '},"hardware":{"kind":"tpu","memory":34359738368}}', 0
FROM n;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $2 - 1)
INSERT INTO attempts (id, time, profile, candidate, signature, host, rank, outcome, exit_status,
                      predicted_bytes, observed_bytes, wall_s, compile_count)
SELECT 'run-' || i, 1700000000 + i, 'profile' || (i % 50), 'cand' || (i % 4),
       printf('%064x', (i % 1000) * 7919 + 1), 'host' || (i % 16), i % 8,
       CASE WHEN i % 10 = 0 THEN 'oom' WHEN i % 10 = 1 THEN 'error' ELSE 'ok' END,
       CASE WHEN i % 10 < 2 THEN 1 ELSE 0 END, 30000000000, 31000000000 + i % 1000, 60.0, 3
FROM n;
COMMIT;
SQL
}

build_postgresql() {
	"$XL" --store "$1" calib import - </dev/null >/dev/null 2>&1
	"$PSQL" -X -q -v ON_ERROR_STOP=1 "$1" <<SQL
BEGIN;
INSERT INTO signatures (hash, shape_hash, stack_hash, hardware_kind, json, first_seen)
SELECT lpad(to_hex(i * 7919 + 1), 64, '0'), lpad(to_hex(i % 100), 64, '0'), lpad(to_hex(i % 5), 64, '0'),
       'tpu', '{"model":{"params":' || (1000000000 + i) || '},"hardware":{"kind":"tpu","memory":34359738368}}', 0
FROM generate_series(0, 999) i;
INSERT INTO attempts (id, time, profile, candidate, signature, host, rank, outcome, exit_status,
                      predicted_bytes, observed_bytes, wall_s, compile_count)
SELECT 'run-' || i, 1700000000 + i, 'profile' || (i % 50), 'cand' || (i % 4),
       lpad(to_hex((i % 1000) * 7919 + 1), 64, '0'), 'host' || (i % 16), i % 8,
       CASE WHEN i % 10 = 0 THEN 'oom' WHEN i % 10 = 1 THEN 'error' ELSE 'ok' END,
       CASE WHEN i % 10 < 2 THEN 1 ELSE 0 END, 30000000000, 31000000000 + i % 1000, 60.0, 3
FROM generate_series(0, $2 - 1) i;
COMMIT;
VACUUM ANALYZE;
SQL
}

# Puts every attempt of store $1 into the family of candidate a of the bench
# profile (the worst case: one family of the whole store), each with an
# observed figure, so that order and predict read the family's launches.
familize_sqlite() {
	"$XL" --profile-path "$T/profiles" --store "$1" calib record bench -c a --outcome ok \
		--observed 1GiB --kind device_peak --id seed >/dev/null
	sqlite3 "$1" <<'SQL'
BEGIN;
UPDATE signatures SET scheme = 2,
  family_hash = (SELECT family_hash FROM signatures WHERE hash = (SELECT signature FROM attempts WHERE id = 'seed')),
  stack_hash = (SELECT stack_hash FROM signatures WHERE hash = (SELECT signature FROM attempts WHERE id = 'seed')),
  coords = '{"micro_batch":' || (rowid % 64 + 1) || '}'
WHERE hash <> (SELECT signature FROM attempts WHERE id = 'seed');
INSERT INTO figures (attempt, role, kind, bytes, source)
SELECT id, 'observed', 'device_peak', observed_bytes, 'bench' FROM attempts WHERE id <> 'seed';
COMMIT;
SQL
}
familize_postgresql() {
	"$XL" --profile-path "$T/profiles" --store "$1" calib record bench -c a --outcome ok \
		--observed 1GiB --kind device_peak --id seed >/dev/null
	"$PSQL" -X -q -v ON_ERROR_STOP=1 "$1" <<'SQL'
BEGIN;
UPDATE signatures SET scheme = 2,
  family_hash = (SELECT family_hash FROM signatures WHERE hash = (SELECT signature FROM attempts WHERE id = 'seed')),
  stack_hash = (SELECT stack_hash FROM signatures WHERE hash = (SELECT signature FROM attempts WHERE id = 'seed')),
  coords = '{"micro_batch":' || (abs(hashtext(hash)) % 64 + 1) || '}'
WHERE hash <> (SELECT signature FROM attempts WHERE id = 'seed');
INSERT INTO figures (attempt, role, kind, bytes, source)
SELECT id, 'observed', 'device_peak', observed_bytes, 'bench' FROM attempts WHERE id <> 'seed';
COMMIT;
VACUUM ANALYZE;
SQL
}

# Best of 5 wall times of a command, in microseconds.
best_us() {
	best=""
	for _ in 1 2 3 4 5; do
		s=$(date +%s%N)
		"$@" >/dev/null
		e=$(date +%s%N)
		d=$(( (e - s) / 1000 ))
		if [ -z "$best" ] || [ "$d" -lt "$best" ]; then best=$d; fi
	done
	echo "$best"
}

status=0
mkdir -p "$T/profiles"
cat >"$T/profiles/bench.yaml" <<'YAML'
signature:
  model: {params: 1.0e9, layers: 24, hidden: 2048, heads: 16, seq: 2048}
  device: {kind: tpu, count: 1, memory: 32GiB}
candidates:
  - name: a
  - name: b
    signature: {train: {micro_batch: 2}}
  - name: c
    signature: {train: {micro_batch: 4}}
YAML

# times every query on stores $1 (10^3) and $2 (N)
time_queries() {
	SIG=$(printf "%064x" 7920)
	printf '%-44s %12s %12s %8s\n' QUERY "10^3 (us)" "$N (us)" RATIO
	for q in "history --limit 50" "history --profile profile7 --limit 50" "history --outcome oom --limit 50" \
		 "history --host host3 --since 2023-11-20 --limit 50" "history --signature $SIG --limit 50"; do
		# shellcheck disable=SC2086
		a=$(best_us "$XL" --store "$1" calib $q --json)
		# shellcheck disable=SC2086
		b=$(best_us "$XL" --store "$2" calib $q --json)
		r=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }')
		printf '%-44s %12s %12s %8s\n' "$q" "$a" "$b" "$r"
		awk -v r="$r" 'BEGIN { exit !(r > 20) }' && { echo "  too slow: ratio above 20"; status=1; }
	done
	a=$(best_us "$XL" --profile-path "$T/profiles" --store "$1" calib order bench --json)
	b=$(best_us "$XL" --profile-path "$T/profiles" --store "$2" calib order bench --json)
	r=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }')
	printf '%-44s %12s %12s %8s\n' "order bench (3 candidates, one family)" "$a" "$b" "$r"
	awk -v r="$r" 'BEGIN { exit !(r > 20) }' && { echo "  too slow: ratio above 20"; status=1; }
	return 0
}

H=$(printf '%064x' 7920)
# The plans of the queries behind history and order, on the large store.
plans_sqlite() {
	plan() {
		echo "-- $1"
		p=$(sqlite3 "$large" "EXPLAIN QUERY PLAN $2")
		echo "$p" | sed 's/^/   /'
		# an index-ordered scan ("SCAN attempts USING INDEX") stops at the LIMIT
		if echo "$p" | grep -qE 'SCAN (a|attempts)$'; then
			echo "   FULL SCAN of attempts"; status=1
		fi
	}
	plan "history, newest first" "SELECT id FROM attempts WHERE 1 ORDER BY time DESC, rowid DESC LIMIT 50"
	plan "history --profile" "SELECT id FROM attempts WHERE 1 AND profile = 'profile7' ORDER BY time DESC, rowid DESC LIMIT 50"
	plan "history --signature" "SELECT id FROM attempts WHERE 1 AND signature = '$H' ORDER BY time DESC, rowid DESC LIMIT 50"
	plan "history --host --since" "SELECT id FROM attempts WHERE 1 AND host = 'host3' AND time >= 1700000000 ORDER BY time DESC, rowid DESC LIMIT 50"
	plan "order: latest attempt of a signature" "SELECT outcome, id, time FROM attempts WHERE signature = '$H' ORDER BY time DESC, rowid DESC LIMIT 1"
	plan "order: latest attempt of the shape" "SELECT a.outcome, a.id, a.time, s.stack_hash IS DISTINCT FROM 'x' FROM signatures s JOIN attempts a ON a.signature = s.hash WHERE s.shape_hash = '$H' AND s.hash <> '$H' ORDER BY a.time DESC, a.rowid DESC LIMIT 1"
	plan "estimate: the signatures of a family" "SELECT hash, coords, json FROM signatures WHERE family_hash = '$H' AND stack_hash = '$H' ORDER BY first_seen DESC, hash LIMIT 256"
	plan "estimate: a signature's newest launches and figures" "SELECT r.id, r.time, r.outcome, f.kind, f.bytes FROM (SELECT id, time, outcome, rowid AS n FROM attempts WHERE signature = '$H' AND outcome IN ('ok', 'compile-storm', 'oom') ORDER BY time DESC, rowid DESC LIMIT 10) r LEFT JOIN figures f ON f.attempt = r.id AND f.role = 'observed' ORDER BY r.time DESC, r.n DESC, f.kind"
	plan "estimate: the family on other stacks" "SELECT count(*) FROM (SELECT 1 FROM signatures s CROSS JOIN attempts a WHERE s.family_hash = '$H' AND s.stack_hash IS DISTINCT FROM '$H' AND a.signature = s.hash AND a.outcome IN ('ok', 'compile-storm') AND a.observed_bytes > 0 LIMIT 1000) x"
	plan "signature prefix" "SELECT hash FROM signatures WHERE hash >= 'aaa' AND hash < 'aaag' ORDER BY hash LIMIT 2"
}

# The same on PostgreSQL: the statements it runs (calib/query.c's, and
# calib/postgres.c's own) with values in place of their parameters; EXPLAIN ANALYZE, so the plan is the one run.
plans_postgresql() {
	S0=$(printf '%064x' 0)
	plan() {
		echo "-- $1"
		p=$("$PSQL" -X -q -At "$large" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $2")
		echo "$p" | sed 's/^/   /'
		if echo "$p" | grep -qE 'Seq Scan on attempts'; then
			echo "   FULL SCAN of attempts"; status=1
		fi
	}
	A="a.id, a.time, a.profile, a.candidate, a.signature, a.host, a.rank, a.outcome, a.exit_status, a.predicted_bytes, a.observed_bytes, a.wall_s, a.compile_count, a.host_peak_rss_bytes"
	plan "history, newest first" "SELECT $A FROM attempts a WHERE true ORDER BY a.time DESC, a.seq DESC LIMIT 50"
	plan "history --profile" "SELECT $A FROM attempts a WHERE true AND a.profile = 'profile7' ORDER BY a.time DESC, a.seq DESC LIMIT 50"
	plan "history --outcome" "SELECT $A FROM attempts a WHERE true AND a.outcome = 'oom' ORDER BY a.time DESC, a.seq DESC LIMIT 50"
	plan "history --signature" "SELECT $A FROM attempts a WHERE true AND a.signature = '$H' ORDER BY a.time DESC, a.seq DESC LIMIT 50"
	plan "history --host --since" "SELECT $A FROM attempts a WHERE true AND a.host = 'host3' AND a.time >= 1700000000 ORDER BY a.time DESC, a.seq DESC LIMIT 50"
	plan "order: latest attempt of a signature" "SELECT $A FROM attempts a WHERE a.signature = '$H' ORDER BY a.time DESC, a.seq DESC LIMIT 1"
	S10=$(printf '%064x' 10)
	for shape in "$S10" "$H"; do
		plan "order: latest attempt of the shape ($shape)" "SELECT $A, s.stack_hash IS DISTINCT FROM 'x'::text FROM signatures s CROSS JOIN LATERAL (SELECT * FROM attempts b WHERE b.signature = s.hash ORDER BY b.time DESC, b.seq DESC LIMIT 1) a WHERE s.shape_hash = '$shape' AND s.hash <> '$H' ORDER BY a.time DESC, a.seq DESC LIMIT 1"
	done
	F=$("$PSQL" -X -q -At "$large" -c "SELECT family_hash FROM signatures WHERE family_hash IS NOT NULL LIMIT 1")
	for fam in "$F" "$H"; do
		plan "estimate: the family's launches and figures ($fam)" "SELECT r.id, r.time, r.outcome, f.kind, f.bytes, s.hash, s.coords, s.json FROM (SELECT hash, coords, json, first_seen FROM signatures WHERE family_hash = '$fam' AND stack_hash IS NOT NULL ORDER BY first_seen DESC, hash LIMIT 256) s CROSS JOIN LATERAL (SELECT b.id, b.time, b.outcome, b.seq FROM attempts b WHERE b.signature = s.hash AND b.outcome IN ('ok', 'compile-storm', 'oom') ORDER BY b.time DESC, b.seq DESC LIMIT 10) r LEFT JOIN figures f ON f.attempt = r.id AND f.role = 'observed' ORDER BY s.first_seen DESC, s.hash, r.time DESC, r.seq DESC, f.kind"
		plan "estimate: the family on other stacks ($fam)" "SELECT count(*) FROM (SELECT 1 FROM signatures s CROSS JOIN LATERAL (SELECT 1 FROM attempts b WHERE b.signature = s.hash AND b.outcome IN ('ok', 'compile-storm') AND b.observed_bytes > 0 LIMIT 1000) a WHERE s.family_hash = '$fam' AND s.stack_hash IS DISTINCT FROM '$S0'::text LIMIT 1000) x"
	done
	plan "signature prefix" "SELECT hash FROM signatures WHERE hash >= 'aaa' AND hash < 'aaag' ORDER BY hash LIMIT 2"
}

for be in $BACKENDS; do
	echo "== $be"
	case $be in
	sqlite)
		command -v sqlite3 >/dev/null || { echo "left out: the sqlite3 shell is needed to build the stores"; continue; }
		small="$T/small.db"
		large="$T/large.db"
		;;
	postgresql)
		"$SRC/tools/pg.sh" available 2>/dev/null ||
			{ echo "left out: no PostgreSQL server programs (tools/deps.sh installs them)"; continue; }
		PSQL="$("$SRC/tools/pg.sh" bindir)/psql"
		PGD=$("$SRC/tools/pg.sh" new)
		url=$("$SRC/tools/pg.sh" url "$PGD")
		"$PSQL" -X -q "$url" -c "CREATE SCHEMA small" -c "CREATE SCHEMA large"
		small="$url&options=-csearch_path%3Dsmall"
		large="$url&options=-csearch_path%3Dlarge"
		;;
	*) echo "unknown backend '$be'"; exit 64 ;;
	esac
	echo "building stores of 10^3 and $N attempts..."
	s=$(date +%s)
	"build_$be" "$small" 1000
	"build_$be" "$large" "$N"
	"familize_$be" "$small"
	"familize_$be" "$large"
	echo "built in $(( $(date +%s) - s ))s"
	time_queries "$small" "$large"
	"plans_$be"
done
exit $status
