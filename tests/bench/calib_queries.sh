#!/bin/sh
# calib_queries.sh - history and order queries on stores of 10^3 and 10^6
# attempts: time ratios (large / small, same run) and the query plans.
# Not part of `make test`; run by `make bench`.
#   tests/bench/calib_queries.sh [XLAUNCH_BINARY]
set -eu
XL=${1:-${XLAUNCH_BIN:-./xlaunch}}
case "$XL" in /*) ;; *) XL="$(pwd)/$XL" ;; esac
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 shell is needed to build the stores"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/xlbench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export HOME="$T/home" XDG_STATE_HOME="$T/state" NO_COLOR=1
unset XLAUNCH_STORE

# Builds a store of $2 attempts over 1000 signatures in one transaction.
build() {
	"$XL" --store "$1" calib history >/dev/null 2>&1
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

# The bench profile: three candidates of one family (they differ in the
# micro batch only).
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
# Puts every attempt of store $1 into the family of candidate a of the bench
# profile (the worst case: one family of the whole store), each with an
# observed figure, so that order reads the family's launches.
familize() {
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

small="$T/small.db"
large="$T/large.db"
echo "building stores of 10^3 and 10^6 attempts..."
s=$(date +%s)
build "$small" 1000
build "$large" 1000000
if "$XL" help 2>/dev/null | grep -q '^  profile '; then
	familize "$small"
	familize "$large"
fi
echo "built in $(( $(date +%s) - s ))s"

SIG=$(printf "%064x" 7920)
status=0
printf '%-44s %12s %12s %8s\n' QUERY "10^3 (us)" "10^6 (us)" RATIO
for q in "history --limit 50" "history --profile profile7 --limit 50" "history --outcome oom --limit 50" \
	 "history --host host3 --since 2023-11-20 --limit 50" "history --signature $SIG --limit 50"; do
	# shellcheck disable=SC2086
	a=$(best_us "$XL" --store "$small" calib $q --json)
	# shellcheck disable=SC2086
	b=$(best_us "$XL" --store "$large" calib $q --json)
	r=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }')
	printf '%-44s %12s %12s %8s\n' "$q" "$a" "$b" "$r"
	awk -v r="$r" 'BEGIN { exit !(r > 20) }' && { echo "  too slow: ratio above 20"; status=1; }
done

# calib order through a profile when profiles resolve in this build
if "$XL" help 2>/dev/null | grep -q '^  profile '; then
	a=$(best_us "$XL" --profile-path "$T/profiles" --store "$small" calib order bench --json)
	b=$(best_us "$XL" --profile-path "$T/profiles" --store "$large" calib order bench --json)
	r=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }')
	printf '%-44s %12s %12s %8s\n' "order bench (3 candidates, one family)" "$a" "$b" "$r"
	awk -v r="$r" 'BEGIN { exit !(r > 20) }' && { echo "  too slow: ratio above 20"; status=1; }
else
	echo "order: timed only through a profile; 'xlaunch profile' is not in this build (plans below)"
fi

# The plans of the queries behind history and order, on the large store.
H=$(printf '%064x' 7920)
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
plan "order: latest attempt of the shape" "SELECT a.outcome, a.id, a.time, s.stack_hash IS NOT 'x' FROM signatures s JOIN attempts a ON a.signature = s.hash WHERE s.shape_hash = '$H' AND s.hash <> '$H' ORDER BY a.time DESC LIMIT 1"
plan "estimate: the signatures of a family" "SELECT hash, coords, json FROM signatures WHERE family_hash = '$H' AND stack_hash = '$H' ORDER BY first_seen DESC LIMIT 512"
plan "estimate: a signature's newest launches and figures" "SELECT recent.id, recent.time, recent.outcome, f.kind, f.bytes FROM (SELECT id, time, outcome, rowid AS r FROM attempts WHERE signature = '$H' AND outcome IN ('ok', 'compile-storm', 'oom') ORDER BY time DESC, rowid DESC LIMIT 20) recent LEFT JOIN figures f ON f.attempt = recent.id AND f.role = 'observed' ORDER BY recent.time DESC, recent.r DESC"
plan "estimate: the family on other stacks" "SELECT count(*) FROM (SELECT 1 FROM signatures s CROSS JOIN attempts a WHERE s.family_hash = '$H' AND s.stack_hash IS NOT '$H' AND a.signature = s.hash AND a.outcome IN ('ok', 'compile-storm') AND a.observed_bytes > 0 LIMIT 1000)"
plan "signature prefix" "SELECT hash FROM signatures WHERE hash >= 'aaa' AND hash < 'aaag' ORDER BY hash LIMIT 2"
exit $status
