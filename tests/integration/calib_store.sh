# calib_store.sh - the calib commands on a real store: history and its
# filters, stats, record, export/import round trip, bad data, corrupt store,
# forget, many concurrent writers.  On SQLite files; calib_store_pg.sh runs
# the same on PostgreSQL (STORE_BACKEND=postgresql).
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"
BACKEND=${STORE_BACKEND:-sqlite}
[ "$BACKEND" = postgresql ] && pg_setup
# store NAME: the location of a new, empty store called NAME
store() {
	case $BACKEND in
	sqlite) echo "$T/$1/calib.db" ;;
	postgresql) pg_store "cs_$1" ;;
	esac
}
# integrity LOCATION: the backend's own consistency check
integrity() {
	case $BACKEND in
	sqlite) command -v sqlite3 >/dev/null || return 0
		expect_eq "$(sqlite3 "$1" 'PRAGMA integrity_check')" ok "integrity_check" ;;
	postgresql)
		expect_eq "$(pg_sql "$1" -c "SELECT count(*) FROM attempts a LEFT JOIN signatures s
			ON s.hash = a.signature WHERE s.hash IS NULL")" 0 "every attempt has its signature" ;;
	esac
}

S1=$(printf 'aaaa1%059d' 0)
S2=$(printf 'aaaa2%059d' 0)
S3=$(printf 'bbbb3%059d' 0)
cat >"$T/in.jsonl" <<JSON
{"type":"attempt","id":"r1","time":"2026-01-01T00:00:00Z","profile":"llm","candidate":"mb8","signature":"$S1","host":"h1","rank":0,"outcome":"oom","exit_status":1,"predicted_bytes":1000,"observed_bytes":2000,"wall_s":5.5,"compile_count":2}
{"type":"attempt","id":"r2","time":"2026-01-02T00:00:00Z","profile":"llm","candidate":"mb4","signature":"$S2","host":"h1","rank":0,"outcome":"ok","exit_status":0,"predicted_bytes":1000,"predicted_kind":"device_peak","predicted_basis":"learned","observed_bytes":1100,"observed_kind":"device_peak","wall_s":60,"compile_count":3}

{"type":"attempt","id":"r3","time":"2026-01-03T00:00:00.500Z","profile":"vit","candidate":"base","signature_json":{"model":{"params":"1e8"},"hardware":{"kind":"cpu","count":1,"memory":"16GiB"}},"host":"h2","outcome":"ok","observed_bytes":3000000000}
{"type":"probe","uid":"p1","host":"h2","time":"2026-01-03T00:00:00Z","doc":{"host":"h2","backends":[{"name":"cpu","state":"alive","devices":[{"kind":"cpu","memory_bytes":17179869184}]}]}}
{"type":"attempt","id":"r4","time":"2026-01-04T00:00:00Z","profile":"llm","candidate":"mb4","signature":"$S3","host":"h2","outcome":"error","exit_status":2}
JSON

XLAUNCH_STORE=$(store store)
export XLAUNCH_STORE
run "$XL" calib history
expect_rc 0 "history of an empty store"
expect_err "no attempts recorded" "empty history says so"
if [ "$BACKEND" = sqlite ]; then
	[ ! -e "$T/store" ] || fail "a query created the store"
	ok "a query creates no store"
fi

run "$XL" calib import "$T/in.jsonl"
expect_rc 0 "import"
expect_out "read 4 attempts and 1 probes" "import counts"
if [ "$BACKEND" = sqlite ]; then
	[ "$(stat -c %a "$T/store/calib.db")" = 600 ] || fail "store mode"
	[ "$(stat -c %a "$T/store")" = 700 ] || fail "store directory mode"
	ok "store 0600 in 0700"
fi
run "$XL" calib import "$T/in.jsonl"
expect_rc 0 "import again"

run "$XL" calib history --json
expect_rc 0 "history --json"
expect_eq "$(grep -c '"id"' "$T/out")" 4 "import twice: each attempt once"
expect_eq "$(grep '"id"' "$T/out" | tr -d ' ",' | sed 's/id://' | tr '\n' ' ')" "r4 r3 r2 r1 " "newest first"
for f in id time profile candidate signature host rank outcome exit_status predicted_bytes \
	predicted_kind predicted_basis observed_bytes observed_kind wall_s compile_count figures \
	job_id cache_hits first_step_s details; do
	grep -q "\"$f\":" "$T/out" || fail "history --json lacks $f"
done
ok "history fields"
expect_out '"time": "2026-01-03T00:00:00.500Z"' "time with milliseconds"

run "$XL" calib history
expect_rc 0 "history table"
expect_out "TIME" "table header"
head -1 "$T/out" | grep -q "ID  *PROFILE  *CANDIDATE  *SIGNATURE  *HOST  *RANK  *JOB  *OUTCOME" || fail "aligned header"
# columns line up: OUTCOME starts at the same offset in every row
col=$(head -1 "$T/out" | awk '{print index($0, "OUTCOME")}')
awk -v c="$col" 'NR>1 { s = substr($0, c, 8); if (s !~ /^(ok|oom|error) /) exit 1 }' "$T/out" || fail "columns not aligned"
ok "columns aligned"

run "$XL" calib history --outcome ok --json
expect_eq "$(grep -c '"id"' "$T/out")" 2 "--outcome"
run "$XL" calib history --profile vit --json
expect_eq "$(grep -c '"id"' "$T/out")" 1 "--profile"
run "$XL" calib history --host h1 --json
expect_eq "$(grep -c '"id"' "$T/out")" 2 "--host"
run "$XL" calib history --since 2026-01-02T12:00:00Z --json
expect_eq "$(grep -c '"id"' "$T/out")" 2 "--since a time"
run "$XL" calib history --since 1d --json
expect_eq "$(grep -c '"id"' "$T/out")" 0 "--since an age"
run "$XL" calib history --limit 1 --json
expect_out '"id": "r4"' "--limit keeps the newest"
expect_eq "$(grep -c '"id"' "$T/out")" 1 "--limit 1"
run "$XL" calib history --signature aaaa1 --json
expect_rc 0 "unique prefix"
expect_out '"id": "r1"' "prefix finds r1"
expect_eq "$(grep -c '"id"' "$T/out")" 1 "prefix: one signature"
run "$XL" calib history --signature aaaa
expect_rc 64 "ambiguous prefix"
expect_err "ambiguous" "ambiguous prefix message"
run "$XL" calib history --signature cccc
expect_rc 66 "unknown prefix"
run "$XL" calib history --outcome exploded
expect_rc 64 "bad outcome"
run "$XL" calib hist --limit 2
expect_rc 0 "subcommand prefix"

run "$XL" calib stats --json
expect_rc 0 "stats --json"
expect_out '"ratio_median": 1.1' "stats: median observed/predicted of one kind"
expect_out '"kind": "device_peak"' "stats: the kind of the ratio"
# a record without kinds (written before them) relates nothing
python3 - "$T/out" <<'PY' || fail "stats relates figures without a kind"
import json, sys
rows = {r["signature"][:5]: r for r in json.load(open(sys.argv[1]))}
assert rows["aaaa2"]["ratio_median"] == 1.1 and rows["aaaa2"]["kind"] == "device_peak", rows["aaaa2"]
assert rows["aaaa1"]["ratio_median"] is None, rows["aaaa1"]
PY
ok "stats: like for like only"
run "$XL" calib history --signature aaaa1 --json
expect_out '"observed_kind": "unclassified"' "an old record's figure is unclassified"
run "$XL" calib stats
expect_rc 0 "stats table"
expect_out "OBS/PRED" "stats header"

# record an outcome seen elsewhere, by signature prefix
run "$XL" calib record --signature bbbb --outcome oom --observed 15GiB --wall 2m --id sched-1 --json
expect_rc 0 "record --signature"
expect_out '"observed_bytes": 16106127360' "record: units"
expect_out '"observed_kind": "device_peak"' "record: device_peak unless --kind says otherwise"
expect_out '"wall_s": 120' "record: duration"
run "$XL" calib record --signature bbbb --outcome ok --observed 3GiB --kind host_peak_vm --id sched-2 --json
expect_rc 0 "record --kind"
expect_out '"observed_kind": "host_peak_vm"' "record: --kind"
expect_out '"source": "calib record --observed"' "record: the figure says where it came from"
run "$XL" calib record --signature bbbb --outcome ok --observed 3GiB --kind analytic
expect_rc 64 "record: a basis is not a kind"
expect_err "a memory kind" "record: the kinds named"
run "$XL" calib record --signature bbbb --outcome oom --id sched-1
expect_rc 0 "record the same id again"
run "$XL" calib history --signature bbbb --json
expect_eq "$(grep -c '"id"' "$T/out")" 3 "same id recorded once"
run "$XL" calib record --signature bbbb --outcome sideways
expect_rc 64 "record: bad outcome"
run "$XL" calib record --outcome ok
expect_rc 64 "record: neither profile nor signature"

# export -> import into a new store -> export: identical
run "$XL" calib export "$T/e1.jsonl"
expect_rc 0 "export to a file"
"$XL" calib export >"$T/e1b.jsonl"
cmp -s "$T/e1.jsonl" "$T/e1b.jsonl" || fail "export to stdout differs from export to a file"
expect_eq "$(grep -c '"type":"attempt"' "$T/e1.jsonl")" 6 "export: all attempts"
expect_eq "$(grep -c '"type":"probe"' "$T/e1.jsonl")" 1 "export: the probe"
OTHER=$(store other)
run "$XL" --store "$OTHER" calib import "$T/e1.jsonl"
expect_rc 0 "import into a new store"
"$XL" --store "$OTHER" calib export >"$T/e2.jsonl"
cmp "$T/e1.jsonl" "$T/e2.jsonl" || fail "export -> import -> export differs"
ok "export -> import -> export identical"
"$XL" --store "$OTHER" calib import "$T/e2.jsonl" >/dev/null
"$XL" --store "$OTHER" calib export | cmp -s - "$T/e1.jsonl" || fail "second import changed the store"
ok "import idempotent"

# bad import data: 65, line numbers, nothing imported
printf '%s\n' '{"type":"attempt","id":"x1","signature":"'"$S1"'","outcome":"ok"}' \
	'{"type":"attempt","id":"x2",' \
	'{"type":"attempt","id":"x3","signature":"'"$S1"'","outcome":"meh"}' \
	'[1,2]' >"$T/bad.jsonl"
run "$XL" calib import "$T/bad.jsonl"
expect_rc 65 "bad import data"
expect_err "bad.jsonl':2:" "line 2 named"
expect_err "bad.jsonl':3: attempt 'x3': unknown outcome 'meh'" "line 3 named"
expect_err "bad.jsonl':4:" "line 4 named"
run "$XL" calib history --json
expect_no_out '"x1"' "nothing of a bad import is kept"
run "$XL" calib import "$T/nope.jsonl"
expect_rc 66 "import of a missing file"

# forget
run "$XL" calib forget aaaa1
expect_rc 0 "forget"
expect_out "forgot signature $S1 and its 1 attempt" "forget says what"
run "$XL" calib history --json
expect_no_out '"id": "r1"' "forgotten attempts are gone"
run "$XL" calib forget aaaa1
expect_rc 66 "forget twice"

if [ "$BACKEND" = sqlite ]; then
	# a corrupt store: 73, naming the file
	head -c 8192 /dev/urandom >"$T/corrupt.db"
	for sub in history stats "export" "forget abc"; do
		# shellcheck disable=SC2086
		run "$XL" --store "$T/corrupt.db" calib $sub
		expect_rc 73 "corrupt store: calib $sub"
		expect_err "store '$T/corrupt.db'" "corrupt store named ($sub)"
	done
	run "$XL" --store "$T/nodir/x/../../corrupt.db/calib.db" calib import - </dev/null
	expect_rc 73 "store under a file"
	run "$XL" --store "$T/corrupt.db/calib.db" calib history
	expect_rc 73 "a query of a store under a file"
else
	# a database that is not a store: 73, naming it
	pg_sql "$PG_URL" -c "DROP SCHEMA IF EXISTS cs_bad CASCADE" -c "CREATE SCHEMA cs_bad" \
		-c "CREATE TABLE cs_bad.calib_schema (version text)" \
		-c "INSERT INTO cs_bad.calib_schema VALUES ('not a version')" >/dev/null 2>&1
	for sub in history stats "export" "forget abc"; do
		# shellcheck disable=SC2086
		run "$XL" --store "$PG_URL&options=-csearch_path%3Dcs_bad" calib $sub
		expect_rc 73 "not a store: calib $sub"
		expect_err "store '$PG_URL&options=-csearch_path%3Dcs_bad'" "the store named ($sub)"
	done
	run "$XL" --store "postgresql://nobody@/nodb?host=$T/nosocket" calib history
	expect_rc 73 "no server"
	expect_err "unreachable" "no server: said so"
fi

# many writers at once: no "database is locked", no lost record
XLAUNCH_STORE=$(store many)
export XLAUNCH_STORE
"$XL" calib import "$T/in.jsonl" >/dev/null
i=0
while [ $i -lt 64 ]; do
	"$XL" calib record --signature bbbb --outcome ok --id "c$i" --rank $i >"$T/w$i.out" 2>"$T/w$i.err" &
	i=$((i + 1))
done
wait
cat "$T"/w*.err >"$T/allerr"
[ ! -s "$T/allerr" ] || { cat "$T/allerr"; fail "writers printed errors"; }
ok "64 writers, no errors"
run "$XL" calib history --signature bbbb --limit 0 --json
expect_eq "$(grep -c '"id": "c' "$T/out")" 64 "64 writers: all rows present"
integrity "$XLAUNCH_STORE"

# --help everywhere
for sub in history stats order predict record export import forget; do
	run "$XL" calib $sub --help
	expect_rc 0 "calib $sub --help"
	expect_out "usage: xlaunch calib $sub" "calib $sub usage"
done
run "$XL" calib --help
expect_rc 0 "calib --help"
run "$XL" calib frobnicate
expect_rc 64 "unknown subcommand"
done_ok
