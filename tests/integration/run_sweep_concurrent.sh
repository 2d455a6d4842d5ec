# run_sweep_concurrent.sh - several xlaunch processes sweeping lost attempts
# at once record each attempt once, and between them say so once each.
. "$(dirname "$0")/lib.sh"
command -v pgrep >/dev/null || skip "pgrep (procps) is not installed"
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 with sqlite3 is not installed"
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P" XLAUNCH_STORE="$T/store/calib.db"
echo 'env: {A: 1}' >"$P/p.yaml"
RUNS="$XDG_STATE_HOME/xlaunch/runs"
q() { python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=30)
for r in c.execute(sys.argv[2]): print("|".join("" if v is None else str(v) for v in r))' "$XLAUNCH_STORE" "$1"; }
N=12

run "$XL" run p -- true
expect_rc 0 "first run makes the store"
# N launches at once, each killed once its child runs: every other one
# with its guardian (nobody writes its end), the rest alone (the guardian does)
pids=""
for i in $(seq $N); do
	"$XL" run p -- sleep 30 >/dev/null 2>&1 &
	pids="$pids $!"
done
has_kids() { [ "$(pgrep -P "$1" | wc -l)" -ge 2 ]; }
for pid in $pids; do
	wait_until "$HANG_S" has_kids "$pid" || fail "launch $pid did not start its child"
done
# the owner a manifest names is the process as /proc tells it (its start
# time, field 22 of its stat), so a live owner is never taken for a gone one
first=${pids# }; first=${first%% *}
python3 - "$first" "$RUNS" <<'PY' || fail "the manifest's owner is not the live process"
import glob, json, sys
pid = int(sys.argv[1])
stat = open("/proc/%d/stat" % pid).read()
start = int(stat[stat.rindex(")") + 2:].split()[22 - 3])
owners = [json.load(open(m))["owner"] for m in glob.glob(sys.argv[2] + "/*/manifest.json")]
mine = [o for o in owners if o["pid"] == pid]
assert mine and mine[0]["pid_start"] == start, (mine, start)
PY
ok "the owner's start time is the process's own"
i=0
for pid in $pids; do
	i=$((i + 1))
	# stopped first, so that it cannot see its guardian or child go
	kill -STOP "$pid"
	if [ $((i % 2)) -eq 0 ]; then
		kill -9 $(pgrep -P "$pid") 2>/dev/null || true
	fi
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
done
ends_written() { [ "$(find "$RUNS" -name end.json | wc -l)" -ge $((N / 2)) ]; }
wait_until "$HANG_S" ends_written || true
expect_eq "$(find "$RUNS" -name end.json | wc -l)" $((N / 2)) "the guardians wrote their ends"

# a query sweeps nothing (queries are pure)
settled0=$(find "$RUNS" -name settled | wc -l)
run "$XL" calib history --limit 0
expect_rc 0 "history before any sweep"
grep -q "recovered" "$T/err" && fail "calib history swept"
expect_eq "$(find "$RUNS" -name settled | wc -l)" "$settled0" "calib history settled no run directory"

# six sweepers at once: runs, and imports (which write)
spids=""
for k in 1 2 3; do
	"$XL" calib import - </dev/null >/dev/null 2>"$T/sweep-h$k" &
	spids="$spids $!:h$k"
	"$XL" run p -- true >/dev/null 2>"$T/sweep-r$k" &
	spids="$spids $!:r$k"
done
wait
# each says how many it recorded, and the run directories it settled name it
for s in $spids; do
	spid=${s%%:*}
	n=$(sed -n 's/.*recovered \([0-9]*\) lost attempt.*/\1/p' "$T/sweep-${s#*:}")
	settled=$(cat "$RUNS"/*/settled | grep -c "recorded by xlaunch (pid $spid)" || true)
	expect_eq "${n:-0}" "$settled" "sweeper $spid counts what it recorded"
done
expect_eq "$(q "SELECT count(*) FROM attempts WHERE outcome = 'interrupted'")" $N "$N interrupted attempts in the store"
expect_eq "$(q "SELECT count(*) FROM attempts WHERE json_extract(details, '\$.lost.ended_by') = 'guardian'")" $((N / 2)) \
	"half of them with the guardian's end"
find "$RUNS" -mindepth 1 -maxdepth 1 -type d ! -name '.*' -printf '%f\n' | sort >"$T/dirs"
q "SELECT id FROM attempts" | sort >"$T/ids"
diff "$T/dirs" "$T/ids" >/dev/null || { diff "$T/dirs" "$T/ids" | head; fail "run directories and attempts differ"; }
ok "every run directory recorded once ($(wc -l <"$T/dirs"))"
expect_eq "$(q 'PRAGMA integrity_check')" ok "the store is intact"
done_ok
