# calib_pg.sh - a PostgreSQL store as launches use it: probes and runs
# (with a retry) recorded on the server, 64 launches at once that all land,
# stores moved between SQLite and PostgreSQL in both directions without
# loss (the same export, and the same answers from history, stats, order
# and predict), and a password that no message and no file ever shows.
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"
pg_setup

P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P"
cat >"$P/calibtest.yaml" <<'YAML'
description: a candidate that runs out of memory, then one that fits
env: {MICRO_BATCH: 8}
signature:
  model: {params: 1.0e8, layers: 12, hidden: 768, heads: 12, seq: 512, vocab: 32000}
  train: {micro_batch: 8, optimizer: adamw, precision: mixed, remat: none}
candidates:
  - name: mb8
  - name: mb4
    env: {MICRO_BATCH: 4}
    signature: {train: {micro_batch: 4}}
YAML
# the job: out of memory (as XLA says it) at micro-batch 8
JOB='if [ "$MICRO_BATCH" = 8 ]; then echo "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 123 bytes" >&2; exit 1; fi; echo "trained at $MICRO_BATCH"'

# every read command, on store $1, into $2 (one file to compare).  Two
# stores that took the same export answer the same; the store a launch
# recorded into may differ from its copy in the order of attempts that
# started in the same second (the order recorded is not exported).
answers() {
	{
		"$XL" --store "$1" calib history --limit 0 --json
		"$XL" --store "$1" calib history --outcome oom --json
		"$XL" --store "$1" calib history --profile calibtest --since 2020-01-01 --limit 5 --json
		"$XL" --store "$1" calib stats --json
		"$XL" --store "$1" calib order calibtest --json
		"$XL" --store "$1" calib predict calibtest --json
	} >"$2" 2>&1
}

# ---- launches recorded on the server -------------------------------------------------
PGS=$(pg_store cp_main)
export XLAUNCH_STORE="$PGS"
run "$XL" probe --backend cpu --timeout $PROBE_LIMIT
expect_rc 0 "probe with a PostgreSQL store"
expect_eq "$(pg_sql "$PGS" -c "SELECT count(*) FROM probes")" 1 "the probe is on the server"
expect_eq "$(pg_sql "$PGS" -c "SELECT count(*) FROM probe_backends WHERE name = 'cpu' AND state = 'alive'")" 1 "its backends as rows"

run "$XL" run calibtest -- sh -c "$JOB"
expect_rc 0 "run: mb8 runs out of memory, mb4 trains"
expect_out "trained at 4" "the second candidate ran"
expect_no_out "trained at 8" "the first did not"
run "$XL" calib history --json
expect_eq "$(grep -c '"id"' "$T/out")" 2 "both attempts recorded"
expect_out '"outcome": "oom"' "the oom"
run "$XL" calib order calibtest --json
expect_eq "$(grep '"name"' "$T/out" | tr -d ' ",' | sed 's/name://' | tr '\n' ' ')" "mb4 mb8 " "known-good first, known-bad last"
run "$XL" run calibtest -- sh -c "$JOB"
expect_rc 0 "run again"
expect_err "known-good" "the store's order is used"
expect_eq "$(pg_sql "$PGS" -c "SELECT count(*) FROM attempts")" 3 "three attempts on the server"
# the hardware part of the signatures came from the probe on the server
expect_eq "$(pg_sql "$PGS" -c "SELECT count(*) FROM signatures WHERE hardware_kind IS NOT NULL")" 2 "hardware from the server's probe"
run "$XL" calib predict calibtest -c mb4 --json
expect_rc 0 "predict"

# 64 launches at once: no errors, none lost
i=0
while [ $i -lt 64 ]; do
	"$XL" run calibtest -c mb4 -q -- true >"$T/c$i.out" 2>"$T/c$i.err" &
	i=$((i + 1))
done
wait
cat "$T"/c*.err >"$T/allerr"
[ ! -s "$T/allerr" ] || { cat "$T/allerr"; fail "concurrent launches printed errors"; }
ok "64 concurrent launches, no errors"
expect_eq "$(pg_sql "$PGS" -c "SELECT count(*) FROM attempts")" 67 "64 concurrent launches all landed"
[ -z "$(ls "$XDG_STATE_HOME/xlaunch/pending" 2>/dev/null)" ] || fail "records left pending"
ok "no record left pending"

# ---- PostgreSQL -> SQLite -> the same ----------------------------------------------------
"$XL" calib export >"$T/p1.jsonl"
expect_eq "$(grep -c '"type":"attempt"' "$T/p1.jsonl")" 67 "export: every attempt"
expect_eq "$(grep -c '"type":"probe"' "$T/p1.jsonl")" 1 "export: the probe"
SQ="$T/sq/calib.db"
run "$XL" --store "$SQ" calib import "$T/p1.jsonl"
expect_rc 0 "import into SQLite"
"$XL" --store "$SQ" calib export >"$T/s1.jsonl"
cmp "$T/p1.jsonl" "$T/s1.jsonl" || fail "PostgreSQL -> SQLite: exports differ"
ok "PostgreSQL -> SQLite: the same export"
"$XL" --store "$SQ" calib import "$T/p1.jsonl" >/dev/null
"$XL" --store "$SQ" calib export | cmp -s - "$T/p1.jsonl" || fail "a second import changed the SQLite store"
ok "import into SQLite is idempotent"
PGC=$(pg_store cp_copy)
"$XL" --store "$PGC" calib import "$T/p1.jsonl" >/dev/null
"$XL" --store "$PGC" calib export | cmp -s - "$T/p1.jsonl" || fail "the PostgreSQL copy differs"
answers "$PGC" "$T/a-pg"
answers "$SQ" "$T/a-sq"
cmp "$T/a-pg" "$T/a-sq" || { diff "$T/a-pg" "$T/a-sq" | head -20; fail "the two stores answer differently"; }
grep -q '"ratio_median"' "$T/a-pg" && grep -q '"place": "known-good"' "$T/a-pg" || fail "answers incomplete"
expect_eq "$(grep -c '"id"' "$T/a-pg")" $((67 + 1 + 5)) "answers: 67 + 1 + 5 attempts listed"
ok "history, stats, order and predict answer the same on both"

# ---- SQLite -> PostgreSQL -> the same ---------------------------------------------------
SQ2="$T/sq2/calib.db"
export XLAUNCH_STORE="$SQ2"
"$XL" calib import "$T/p1.jsonl" >/dev/null      # the probe, for the hardware part
run "$XL" run calibtest -- sh -c "$JOB"
expect_rc 0 "run on SQLite"
run "$XL" calib record calibtest -c mb8 --outcome crash --id sched-1 --observed 3GiB
expect_rc 0 "a record made by hand"
"$XL" calib export >"$T/s2.jsonl"
PG2=$(pg_store cp_from_sqlite)
run "$XL" --store "$PG2" calib import "$T/s2.jsonl"
expect_rc 0 "import into PostgreSQL"
"$XL" --store "$PG2" calib export >"$T/p2.jsonl"
cmp "$T/s2.jsonl" "$T/p2.jsonl" || fail "SQLite -> PostgreSQL: exports differ"
ok "SQLite -> PostgreSQL: the same export"
"$XL" --store "$PG2" calib import "$T/s2.jsonl" >/dev/null
"$XL" --store "$PG2" calib export | cmp -s - "$T/s2.jsonl" || fail "a second import changed the PostgreSQL store"
ok "import into PostgreSQL is idempotent"
"$XL" --store "$T/sq3/calib.db" calib import "$T/s2.jsonl" >/dev/null
answers "$T/sq3/calib.db" "$T/b-sq"
answers "$PG2" "$T/b-pg"
cmp "$T/b-sq" "$T/b-pg" || { diff "$T/b-sq" "$T/b-pg" | head -20; fail "the two stores answer differently"; }
ok "the same answers after SQLite -> PostgreSQL"
# merging: both stores into one of each kind, in either order
PG3=$(pg_store cp_merged)
"$XL" --store "$PG3" calib import "$T/s2.jsonl" >/dev/null
"$XL" --store "$PG3" calib import "$T/p1.jsonl" >/dev/null
"$XL" --store "$T/m/calib.db" calib import "$T/p1.jsonl" >/dev/null
"$XL" --store "$T/m/calib.db" calib import "$T/s2.jsonl" >/dev/null
"$XL" --store "$PG3" calib export >"$T/m-pg.jsonl"
"$XL" --store "$T/m/calib.db" calib export >"$T/m-sq.jsonl"
cmp "$T/m-pg.jsonl" "$T/m-sq.jsonl" || fail "merged stores differ"
# s2 holds p1's 67, a run (mb4, known-good from p1's history) and a record
expect_eq "$(grep -c '"type":"attempt"' "$T/s2.jsonl")" $((67 + 2)) "the SQLite store: p1 and two more"
expect_eq "$(grep -c '"type":"attempt"' "$T/m-pg.jsonl")" $((67 + 2)) "merged: every attempt once"

# ---- a password is never shown, and never written ------------------------------------------
SECRET="Zq7-pw-secret"
pg_sql "$PG_URL" -c "DROP SCHEMA IF EXISTS cp_pw CASCADE" -c "DROP ROLE IF EXISTS cp_pw" \
	-c "CREATE ROLE cp_pw LOGIN PASSWORD '$SECRET' IN ROLE xlaunch_password" \
	-c "CREATE SCHEMA cp_pw AUTHORIZATION cp_pw" >/dev/null 2>&1
HOSTPART=$(echo "$PG_URL" | sed 's/^[^?]*?//')
DB=$(echo "$PG_URL" | sed 's|^[^@]*@/\([^?]*\)?.*|\1|')	# the test's own database
GOOD="postgresql://cp_pw:$SECRET@/$DB?$HOSTPART&options=-csearch_path%3Dcp_pw"
BAD="postgresql://cp_pw:wrong-$SECRET@/$DB?$HOSTPART&options=-csearch_path%3Dcp_pw"
PARAM="postgresql://cp_pw@/$DB?$HOSTPART&password=wrong-$SECRET&options=-csearch_path%3Dcp_pw"
unset XLAUNCH_STORE
: >"$T/said"
for loc in "$BAD" "$PARAM"; do
	run "$XL" --store "$loc" run calibtest -c mb4 -- sh -c 'echo launched'
	expect_rc 0 "a wrong password does not stop the launch"
	expect_out "launched" "the child ran"
	expect_err "unreachable" "the store is said to be unreachable"
	expect_err "password authentication failed" "and why"
	expect_err "store 'postgresql://cp_pw@/$DB?" "the store is named"
	cat "$T/out" "$T/err" >>"$T/said"
	run "$XL" --store "$loc" calib history
	expect_rc 73 "calib history with a wrong password"
	cat "$T/out" "$T/err" >>"$T/said"
done
expect_eq "$(ls "$XDG_STATE_HOME/xlaunch/pending" | wc -l)" 2 "both records kept"
run "$XL" --store "$GOOD" run calibtest -c mb4 -- true
expect_rc 0 "the right password"
expect_err "replayed 2 records" "the kept records went in"
cat "$T/out" "$T/err" >>"$T/said"
run "$XL" --store "$GOOD" calib history --json
expect_eq "$(grep -c '"id"' "$T/out")" 3 "all three on the server"
cat "$T/out" "$T/err" >>"$T/said"
# the password, by libpq's password file
printf '*:*:*:cp_pw:%s\n' "$SECRET" >"$HOME/pgpass"
chmod 600 "$HOME/pgpass"
NOPW="postgresql://cp_pw@/$DB?$HOSTPART&options=-csearch_path%3Dcp_pw"
PGPASSFILE="$HOME/pgpass" run "$XL" --store "$NOPW" calib history --json
expect_rc 0 "PGPASSFILE"
expect_eq "$(grep -c '"id"' "$T/out")" 3 "the same store through PGPASSFILE"
cat "$T/out" "$T/err" >>"$T/said"
rm "$HOME/pgpass"
! grep -q "$SECRET" "$T/said" || { grep "$SECRET" "$T/said"; fail "the password was shown"; }
ok "the password is in no message and no output"
! grep -rq "$SECRET" "$XDG_STATE_HOME" "$HOME" || { grep -rl "$SECRET" "$XDG_STATE_HOME" "$HOME"; fail "the password was written to a file"; }
ok "the password is in no file xlaunch wrote (runs, manifests, logs, kept records)"
done_ok
