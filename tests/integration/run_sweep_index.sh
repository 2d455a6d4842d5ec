# run_sweep_index.sh - the sweep of lost attempts reads the index of
# unsettled run directories (runs/.unsettled), not the whole history: a lost
# run directory in the index is recorded, one outside it is not looked at
# once the index is whole, and a runs/ written before the index is read
# whole once and indexed.
. "$(dirname "$0")/lib.sh"
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 with sqlite3 is not installed"
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P" XLAUNCH_STORE="$T/store/calib.db"
echo 'env: {A: 1}' >"$P/p.yaml"
RUNS="$XDG_STATE_HOME/xlaunch/runs"
IDX="$RUNS/.unsettled"
q() { python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=30)
for r in c.execute(sys.argv[2]): print("|".join("" if v is None else str(v) for v in r))' "$XLAUNCH_STORE" "$1"; }

run "$XL" run p -- true
expect_rc 0 "a first run"
first=$(announced_id)
[ -f "$RUNS/$first/settled" ] || fail "the first run is not settled"
expect_eq "$(ls -A "$IDX" | tr '\n' ' ')" ".indexed " "the index holds no settled run, and is whole"

# a dead process's pid, for owners that are gone
sh -c 'exit 0' & deadpid=$!; wait "$deadpid"
# lost NAME: a copy of the first run directory as one whose supervisor died
# before the child ended (no outcome, no end.json, no record)
lost() {
	mkdir "$RUNS/$1"
	python3 - "$RUNS/$first/manifest.json" "$RUNS/$1/manifest.json" "$1" "$deadpid" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["id"] = sys.argv[3]
m["outcome"] = None
m["owner"]["pid"] = int(sys.argv[4])
m["owner"]["pid_start"] = 1
json.dump(m, open(sys.argv[2], "w"))
PY
}
host=$(echo "$first" | sed 's/^[^Z]*Z-\(.*\)-[0-9]*-r0-a1$/\1/')
idb="20200101T000000.000001Z-$host-$deadpid-r0-a1"
idc="20200101T000000.000002Z-$host-$deadpid-r0-a1"
idd="20200101T000000.000003Z-$host-$deadpid-r0-a1"

# outside the index, with the index whole: not looked at
lost "$idb"
run "$XL" run p -- true
expect_rc 0 "a run beside a lost directory outside the index"
expect_eq "$(q "SELECT count(*) FROM attempts WHERE id = '$idb'")" 0 "a run directory outside the index is not swept"
[ ! -e "$RUNS/$idb/settled" ] || fail "a run directory outside the index was settled"
ok "the sweep reads the index, not runs/"

# in the index: recorded as interrupted, settled, out of the index
lost "$idc"
: >"$IDX/$idc"
run "$XL" run p -- true
expect_rc 0 "a run after a lost one in the index"
expect_err "recovered 1 lost attempt" "the sweep says what it recovered"
expect_eq "$(q "SELECT outcome FROM attempts WHERE id = '$idc'")" interrupted "the lost attempt in the index is recorded"
[ -f "$RUNS/$idc/settled" ] || fail "the swept run directory is not settled"
[ ! -e "$IDX/$idc" ] || fail "the swept run directory is still in the index"
ok "a lost attempt in the index is recorded and leaves it"

# an entry whose run directory never appeared and whose owner is gone
: >"$IDX/$idd"
run "$XL" run p -- true
expect_rc 0 "a run beside an entry without its directory"
[ ! -e "$IDX/$idd" ] || fail "an entry of a run directory that never appeared stays"
ok "an entry of a run directory that never appeared leaves the index"

# a runs/ an xlaunch before the index wrote: read whole once, then indexed
rm -f "$IDX/.indexed"
run "$XL" run p -- true
expect_rc 0 "a run on a runs/ without a whole index"
expect_eq "$(q "SELECT outcome FROM attempts WHERE id = '$idb'")" interrupted "runs/ without a whole index is read whole"
[ -f "$IDX/.indexed" ] || fail "the index does not say it is whole after the whole read"
expect_eq "$(ls -A "$IDX" | tr '\n' ' ')" ".indexed " "every run directory settled: the index is empty"
expect_eq "$(q "SELECT count(*) FROM attempts")" 7 "every launch (five) and both lost attempts recorded, once each"

# a live launch is in the index while it runs, and leaves it when settled
"$XL" run p -- sleep 30 >/dev/null 2>"$T/live.err" &
lpid=$!
in_index() { [ "$(ls "$IDX" | wc -l)" -ge 1 ]; }
wait_until "$HANG_S" in_index || fail "a running launch is not in the index"
live=$(ls "$IDX" | head -1)
[ -d "$RUNS/$live" ] || wait_until "$HANG_S" test -d "$RUNS/$live" || fail "the indexed run directory $live does not appear"
run "$XL" run p -- true
expect_rc 0 "a run beside a live launch"
[ -e "$IDX/$live" ] || fail "a live launch was taken out of the index by a sweep"
[ ! -e "$RUNS/$live/settled" ] || fail "a live launch was settled by a sweep"
kill -INT "$lpid"
wait "$lpid" || :
[ ! -e "$IDX/$live" ] || fail "a launch that ended is still in the index"
ok "a live launch stays in the index until it is settled"
done_ok
