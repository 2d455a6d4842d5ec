# run_killed.sh - a launch is recorded even when its supervisor is killed:
# the guardian writes the attempt's end, a later xlaunch records what
# nobody ended (supervisor lost), each run directory exactly once, pending
# records whole or absent, the store intact, also while another process
# holds the store locked during the sweep.
. "$(dirname "$0")/lib.sh"
command -v pgrep >/dev/null || skip "pgrep (procps) is not installed"
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 with sqlite3 is not installed"
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P" XLAUNCH_STORE="$T/store/calib.db"
echo 'env: {A: 1}' >"$P/p.yaml"
RUNS="$XDG_STATE_HOME/xlaunch/runs"
PENDING="$XDG_STATE_HOME/xlaunch/pending"
q() { python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=30)
for r in c.execute(sys.argv[2]): print("|".join("" if v is None else str(v) for v in r))' "$XLAUNCH_STORE" "$1"; }
ndirs() { find "$RUNS" -mindepth 1 -maxdepth 1 -type d ! -name '.*' 2>/dev/null | wc -l; }
# newdir BEFORE: the run directory not in the list BEFORE
newdir() { find "$RUNS" -mindepth 1 -maxdepth 1 -type d ! -name '.*' -printf '%f\n' | sort | comm -13 "$1" - | head -1; }
listdirs() { find "$RUNS" -mindepth 1 -maxdepth 1 -type d ! -name '.*' -printf '%f\n' 2>/dev/null | sort >"$1"; }
# wait_kids PID: until xlaunch PID runs its guardian and its child
# wait_dirs N: until N run directories exist
has_kids() { [ "$(pgrep -P "$1" | wc -l)" -ge 2 ]; }
has_dirs() { [ "$(ndirs)" -ge "$1" ]; }
wait_kids() { wait_until "$HANG_S" has_kids "$1" || fail "launch $1 did not start its child"; }
wait_dirs() { wait_until "$HANG_S" has_dirs "$1" || fail "no run directory appeared"; }

run "$XL" run p -- true
expect_rc 0 "first run makes the store"

# the guardian writes the end when only xlaunch is killed
listdirs "$T/before"
"$XL" run p -- sleep 30 >/dev/null 2>&1 &
pid=$!
wait_dirs 2
wait_kids "$pid"
kill -9 "$pid"; wait "$pid" 2>/dev/null || true
gdir="$RUNS/$(newdir "$T/before")"
wait_until "$HANG_S" test -f "$gdir/end.json" || fail "the guardian wrote no end.json in $gdir"
python3 - "$gdir/end.json" <<'PY' || fail "the guardian's end record"
import json, sys
e = json.load(open(sys.argv[1]))
assert e["outcome"] == "interrupted" and e["ended_by"] == "guardian", e
assert e["signal"] == 9 and e["exit_status"] == 137, e
assert 0 < e["wall_s"] < 30, e
assert "was killed" in e["reason"], e
PY
ok "the guardian's end: interrupted, SIGKILL, wall time"
gid=$(basename "$gdir")

# nobody writes the end when xlaunch and its guardian die together
listdirs "$T/before"
"$XL" run p -- sleep 30 >/dev/null 2>&1 &
pid=$!
wait_dirs 3
wait_kids "$pid"
kids=$(pgrep -P "$pid" || true)
kill -9 $kids; kill -9 "$pid"; wait "$pid" 2>/dev/null || true
ldir="$RUNS/$(newdir "$T/before")"
lid=$(basename "$ldir")
[ ! -f "$ldir/end.json" ] || fail "an end record where nobody could write one"
# (the launch just made recorded the guardian's end as it started)
# a query sweeps nothing; the next command that writes the store records it
run "$XL" calib history --limit 0
grep -q "recovered" "$T/err" && fail "a query swept"
grep -F "$lid" "$T/out" && fail "a query recorded the lost attempt"
ok "a query records nothing"
run "$XL" calib import - </dev/null
expect_err "recovered 1 lost attempt" "the next xlaunch that writes the store records it"
run "$XL" calib history --limit 0
grep -F "$lid" "$T/out" | grep -qF "interrupted (supervisor lost)" || { cat "$T/out"; fail "history shows the lost attempt"; }
grep -F "$gid" "$T/out" | grep -qF "interrupted (supervisor killed)" || { cat "$T/out"; fail "history shows the killed attempt"; }
ok "history shows both, each with how it ended"
expect_eq "$(q "SELECT json_extract(details, '\$.lost.ended_by') FROM attempts WHERE id = '$gid'")" guardian "the guardian's end went in"
expect_eq "$(q "SELECT exit_status FROM attempts WHERE id = '$gid'")" 137 "with the child's signal"
run "$XL" calib history
[ "$(grep -c "interrupted (supervisor" "$T/out")" -eq 2 ] || fail "a second sweep recorded again"
ok "a second sweep records nothing again"

# a supervisor that classified its attempt and was killed before recording
# it: the manifest's outcome stands, except a crash by a SIGKILL xlaunch did
# not send, which came with the supervisor's own (scancel of a Slurm step
# kills the child, then xlaunch): that is interrupted.  The manifest is
# given the outcome the supervisor would have written.
classified_lost() {  # classified_lost EXIT_STATUS: the id of such a launch
	listdirs "$T/before"
	"$XL" run p -- sleep 30 >/dev/null 2>&1 &
	pid=$!
	wait_until "$HANG_S" has_kids "$pid" || fail "launch $pid did not start its child"
	kids=$(pgrep -P "$pid" || true)
	kill -9 $kids; kill -9 "$pid"; wait "$pid" 2>/dev/null || true
	d="$RUNS/$(newdir "$T/before")"
	python3 - "$d/manifest.json" "$1" <<'PY' || fail "manifest of $d"
import json, sys
m = json.load(open(sys.argv[1]))
m.update(outcome="crash", exit_status=int(sys.argv[2]), wall_s=0.5, compile={"count": 3},
         xla_dump={"dir": None, "modules": {"jit_step": 1234}})
json.dump(m, open(sys.argv[1], "w"))
PY
	basename "$d"
}
kid=$(classified_lost 137)
sid=$(classified_lost 139)
# the same live: the child is SIGKILLed, then xlaunch from outside as soon
# as the child is gone (Slurm kills a step's processes children first).
# xlaunch does not record a crash in between; the guardian's end is kept.
cat >"$T/treekill.sh" <<'S'
xl=$PPID
setsid sh -c ': >"$3"; while kill -0 "$1" 2>/dev/null; do :; done; kill -KILL "$2"' sh $$ "$xl" "$1" &
while [ ! -e "$1" ]; do :; done
kill -KILL $$
S
listdirs "$T/before"
run "$XL" run p -- sh "$T/treekill.sh" "$T/treekill.apart"
expect_rc 137 "xlaunch was killed"
tid=$(newdir "$T/before")
expect_eq "$(q "SELECT count(*) FROM attempts WHERE id = '$tid'")" 0 "xlaunch recorded no crash before it was killed"
# (the second launch recorded the first as it started)
run "$XL" calib import - </dev/null
expect_err "recovered 1 lost attempt" "the second recorded"
expect_eq "$(q "SELECT count(*) FROM attempts WHERE id IN ('$kid', '$sid')")" 2 "each once"
expect_eq "$(q "SELECT outcome FROM attempts WHERE id = '$tid'")" interrupted "the tree killed live: interrupted"
expect_eq "$(q "SELECT outcome || ':' || json_extract(details, '\$.lost.manifest_outcome') FROM attempts WHERE id = '$kid'")" \
	"interrupted:crash" "a child SIGKILLed with its supervisor is interrupted, the manifest's crash kept in details"
expect_eq "$(q "SELECT outcome || ':' || exit_status FROM attempts WHERE id = '$sid'")" "crash:139" \
	"a child that crashed of itself keeps its crash"
# the record the supervisor would have written keeps what it keeps in its
# details: the compilations and XLA's figure per program, from the manifest
expect_eq "$(q "SELECT json_extract(details, '\$.compile.count') || ':' || json_extract(details, '\$.xla_modules.jit_step') FROM attempts WHERE id = '$sid'")" \
	"3:1234" "the manifest's compilations and XLA's figures are in the swept record's details"

# 60 launches, each killed a few milliseconds in; a third with the guardian
for i in $(seq 60); do
	"$XL" run p -- sh -c 'sleep 0.02' >/dev/null 2>&1 &
	pid=$!
	sleep "0.00$((RANDOM % 10))$((RANDOM % 10))"
	if [ $((i % 3)) -eq 0 ]; then
		kids=$(pgrep -P "$pid" || true)
		kill -9 $kids "$pid" 2>/dev/null || true
	else
		kill -9 "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
done
# and one launch surely cut off after its run directory exists (under the
# sanitizers a kill a few ms in may come before any), with its guardian
n0=$(ndirs)
"$XL" run p -- sleep 30 >/dev/null 2>&1 &
pid=$!
wait_dirs $((n0 + 1))
wait_kids "$pid"
kids=$(pgrep -P "$pid" || true)
kill -9 $kids "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
# what a killed writer leaves in pending/: a whole record and half of one
python3 - "$PENDING" <<'PY'
import json, os, sys
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
rec = {"id": "20261122T000000.000000Z-gone-1-r0-a1", "time": "2026-11-22T00:00:00Z",
       "profile": "p", "signature": "0" * 64, "outcome": "ok", "exit_status": 0}
text = json.dumps(rec)
open(os.path.join(d, rec["id"] + ".json.tmp.999999999"), "w").write(text)
open(os.path.join(d, "20261122T000001.000000Z-gone-2-r0-a1.json.tmp.999999998"), "w").write(text[:40])
PY
# the guardians finish their ends (slowly under the sanitizers or on a busy
# host)
guardians_done() {
	for g in "$RUNS"/*/guardian; do
		[ -f "$g" ] && kill -0 "$(cat "$g")" 2>/dev/null && return 1
	done
	return 0
}
wait_until "$HANG_S" guardians_done || fail "guardians still running after $HANG_S s"

# the sweep meets a store held by another process, then the store again: the
# lock is held until the test lets it go ($T/unlock), twice $HANG_S at most
python3 -c 'import os, sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN EXCLUSIVE"); open(sys.argv[2], "w").close()
end = time.monotonic() + 2 * int(sys.argv[4])
while os.path.isdir(os.path.dirname(sys.argv[3])) and not os.path.exists(sys.argv[3]) and time.monotonic() < end:
    time.sleep(0.05)
c.execute("ROLLBACK")' "$XLAUNCH_STORE" "$T/locked" "$T/unlock" "$HANG_S" &
locker=$!
wait_until "$HANG_S" test -f "$T/locked" || fail "the lock was not taken"
XLAUNCH_STORE_WAIT=1s run "$XL" run p -- sh -c 'echo launched'
touch "$T/unlock"
expect_rc 0 "a launch is not blocked by a locked store during the sweep"
expect_out "launched" "the child ran"
expect_err "lost attempts are recorded by a later xlaunch" "the sweep waits for a later xlaunch"
wait "$locker"
run "$XL" run p -- true
expect_rc 0 "a normal launch after the kills"
expect_err "recovered" "run says how many lost attempts it recovered"
expect_eq "$(grep -c "recovered" "$T/err")" 1 "on one line"

# every run directory is in the store exactly once, nothing half-written
find "$RUNS" -mindepth 1 -maxdepth 1 -type d ! -name '.*' -printf '%f\n' | sort >"$T/dirs"
q "SELECT id FROM attempts WHERE id NOT LIKE '%-gone-%'" | sort >"$T/ids"
expect_eq "$(wc -l <"$T/dirs")" "$(wc -l <"$T/ids")" "as many attempts as run directories"
diff "$T/dirs" "$T/ids" >/dev/null || { diff "$T/dirs" "$T/ids" | head; fail "run directories and attempts differ"; }
ok "each run directory recorded ($(wc -l <"$T/dirs") of them)"
expect_eq "$(q "SELECT count(*) FROM (SELECT id FROM attempts GROUP BY id HAVING count(*) > 1)")" 0 "none twice"
for d in "$RUNS"/*/; do [ -f "$d/settled" ] || fail "$d is not settled"; done
ok "every run directory settled"
expect_eq "$(find "$RUNS" -mindepth 1 -maxdepth 1 -name '.*' ! -name .unsettled)" "" "no run directory left half-made"
expect_eq "$(ls -A "$RUNS/.unsettled")" ".indexed" "no run directory left in the index of unsettled ones"
expect_eq "$(find "$RUNS" -name '*.tmp.*')" "" "no temporary file left in run directories"
expect_eq "$(ls -A "$PENDING")" "" "nothing left in pending/"
expect_eq "$(q "SELECT outcome FROM attempts WHERE id = '20261122T000000.000000Z-gone-1-r0-a1'")" ok \
	"a whole record a killed writer left is completed and replayed"
[ "$(q "SELECT count(*) FROM attempts WHERE outcome = 'interrupted'")" -gt 2 ] || fail "no interrupted attempts from the kills"
ok "the killed launches are interrupted"
expect_eq "$(q 'PRAGMA integrity_check')" ok "the store is intact"
run "$XL" run p -- true
expect_rc 0 "another launch"
if grep -q "recovered" "$T/err"; then fail "a later sweep recovered again"; fi
ok "the sweep records once"
done_ok
