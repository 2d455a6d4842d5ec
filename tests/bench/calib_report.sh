#!/bin/sh
# calib_report.sh - `calib report` on stores of 10^3 and 10^6 attempts (with
# families, figures of two kinds and probes): its time against baselines
# taken in the same run on the same store (the sqlite3 shell counting the
# attempts; `calib history --limit 0` reading every attempt once), and the
# ratio of the large store's report to the small one's.  Not part of
# `make test`; run by `make bench`.
#   tests/bench/calib_report.sh [XLAUNCH_BINARY]
set -eu
XL=${1:-${XLAUNCH_BIN:-./xlaunch}}
case "$XL" in /*) ;; *) XL="$(pwd)/$XL" ;; esac
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 shell is needed to build the stores"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/xlbench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export HOME="$T/home" XDG_STATE_HOME="$T/state" NO_COLOR=1 XLAUNCH_PROFILE_PATH="$T/profiles"
unset XLAUNCH_STORE
mkdir -p "$T/profiles"

# A store of $2 attempts over 1000 signatures of 20 families (coordinate
# micro_batch), 50 profiles, every attempt with an observed host_peak_rss
# figure and every other one with a predicted one; one probe per host.
build() {
	"$XL" --store "$1" calib history >/dev/null 2>&1
	sqlite3 "$1" <<SQL
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999)
INSERT INTO signatures (hash, shape_hash, stack_hash, hardware_kind, json, first_seen, scheme,
                        family_hash, coords)
SELECT printf('%064x', i * 7919 + 1), printf('%064x', i % 100), printf('%064x', i % 2), 'cpu',
       '{"hardware":{"kind":"cpu","type":"host"},"train":{"micro_batch":' || (8 * (1 + i / 20 % 50))
       || '},"toggles":{"limits":{"address_space":8589934592}}}', i, 2,
       printf('%064x', 424242 + i % 20), '{"micro_batch":' || (8 * (1 + i / 20 % 50)) || '}'
FROM n;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $2 - 1)
INSERT INTO attempts (id, time, profile, candidate, signature, host, rank, outcome, exit_status,
                      predicted_bytes, observed_bytes, wall_s, compile_count, cache_hits,
                      predicted_kind, observed_kind)
SELECT 'run-' || i, 1700000000 + i * 3, 'profile' || (i % 50), 'cand' || (i % 4),
       printf('%064x', (i % 1000) * 7919 + 1), 'host' || (i % 16), 0,
       CASE WHEN i % 10 = 0 THEN 'oom' WHEN i % 10 = 1 THEN 'error' ELSE 'ok' END,
       CASE WHEN i % 10 < 2 THEN 1 ELSE 0 END,
       CASE WHEN i % 2 = 0 THEN 1000000000 + (i % 1000) * 4000000 END,
       1000000000 + (i % 1000) * 4000000 + (i * 7 % 1000) * 100000, 60.0 + i % 30, 3, i % 3,
       CASE WHEN i % 2 = 0 THEN 'host_peak_rss' END, 'host_peak_rss'
FROM n;
INSERT INTO figures (attempt, role, kind, bytes, basis, source)
SELECT id, 'observed', 'host_peak_rss', observed_bytes, NULL, 'the process group' FROM attempts;
INSERT INTO figures (attempt, role, kind, bytes, basis, source)
SELECT id, 'predicted', 'host_peak_rss', predicted_bytes, 'learned', 'learned fit'
FROM attempts WHERE predicted_bytes IS NOT NULL;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 15)
INSERT INTO probes (host, time, doc, uid)
SELECT 'host' || i, 1700000000 + i,
       '{"host":"host' || i || '","backends":[{"name":"cpu","state":"alive","bandwidth_gbs":'
       || (20 + i) || ',"devices":[{"kind":"cpu","memory_bytes":68719476736}]}]}', 'p' || i
FROM n;
COMMIT;
SQL
}

# Best of 3 wall times of a command, in microseconds.
best_us() {
	best=""
	for _ in 1 2 3; do
		s=$(date +%s%N)
		"$@" >/dev/null
		e=$(date +%s%N)
		d=$(( (e - s) / 1000 ))
		if [ -z "$best" ] || [ "$d" -lt "$best" ]; then best=$d; fi
	done
	echo "$best"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

build "$T/small.db" 1000
t0=$(date +%s)
build "$T/large.db" 1000000
echo "built the 10^6 store in $(( $(date +%s) - t0 )) s ($(du -h "$T/large.db" | cut -f1))"

for s in small large; do
	db="$T/$s.db"
	count=$(best_us sqlite3 "$db" "SELECT count(*) FROM attempts")
	hist=$(best_us "$XL" --store "$db" calib history --limit 0)
	rep=$(best_us "$XL" --store "$db" calib report -o "$T/$s.html")
	eval "rep_$s=$rep"
	echo "$s: report $(ratio "$rep" 1000) ms, count(*) $(ratio "$count" 1000) ms," \
	     "history --limit 0 $(ratio "$hist" 1000) ms; report/count $(ratio "$rep" "$count")," \
	     "report/history $(ratio "$rep" "$hist"); page $(wc -c <"$T/$s.html") bytes"
done
echo "report large/small: $(ratio "$rep_large" "$rep_small") (10^6 / 10^3 attempts)"
# the target: the page of 10^6 attempts in seconds, and no slower than
# reading every attempt once
[ "$rep_large" -lt 10000000 ] || { echo "FAIL: the report of 10^6 attempts took over 10 s"; exit 1; }
