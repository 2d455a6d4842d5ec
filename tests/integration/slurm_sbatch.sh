# slurm_sbatch.sh - a batch job under a real Slurm (a private single-node
# cluster, tools/slurm.sh) whose two ranks run `srun xlaunch run`, submitted
# with `sbatch --requeue` and requeued with `scontrol requeue`: each launch
# of the job is a launch of its own, named JOB.STEP and then JOB.STEP#N by
# SLURM_RESTART_COUNT as the batch script saw it; after both ranks ran out
# of memory the requeued job takes the next candidate, and after it ended
# well the job requeued again takes the same one.
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 with sqlite3 is not installed"
slurm_setup
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P" XLAUNCH_STORE="$T/store/calib.db" XLAUNCH_STORE_WAIT=60
q() { python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=30)
for r in c.execute(sys.argv[2]): print("|".join("" if v is None else str(v) for v in r))' "$XLAUNCH_STORE" "$1"; }
# big cannot allocate its 3000 MiB under the address-space limit: a real
# MemoryError, an oom
cat >"$P/ladder.yaml" <<'Y'
description: a candidate that cannot fit under the cap, then one that can
limits: {address_space: 1GiB}
candidates:
  - name: big
    env: {ALLOC_MB: 3000}
  - name: small
    env: {ALLOC_MB: 16}
Y
cat >"$T/alloc.py" <<'PY'
import os
b = bytearray(int(os.environ["ALLOC_MB"]) << 20)
print("allocated", len(b) >> 20, "MiB")
PY
# the batch script notes what each launch of it saw, then one step of two ranks
cat >"$T/batch.sh" <<S
#!/bin/sh
echo "launch \$SLURM_JOB_ID \${SLURM_RESTART_COUNT:-0}" >>"$T/launches"
srun "$XL" run ladder -- python3 "$T/alloc.py"
S
# ended JOB RESTARTS: the job ran its RESTARTS-th launch to an end
ended() {
	scontrol show job "$1" >"$T/job" 2>&1 || return 1
	grep -q "Restarts=$2 " "$T/job" && grep -Eq 'JobState=(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY)' "$T/job"
}
# launch N: waits for the job's Nth restart to end; prints its state
launch() {
	wait_until "$HANG_S" ended "$J" "$1" || { cat "$T/job" "$T/batch.out"; fail "launch $1 of job $J never ended"; }
	sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' "$T/job"
}
# requeue: puts the ended job back in the queue; Slurm holds a requeued job
# back for its credentials' lifetime (AuthInfo cred_expire, 120 s unless
# set), so the test asks for it to start now
requeue() {
	scontrol requeue "$J" || fail "scontrol requeue $J"
	scontrol show job "$J" >"$T/job"
	held=$(python3 -c 'import re, sys, datetime as d
t = {k: d.datetime.fromisoformat(v) for k, v in re.findall(r"(SubmitTime|EligibleTime)=(\S+)", open(sys.argv[1]).read())}
print(int((t["EligibleTime"] - t["SubmitTime"]).total_seconds()))' "$T/job")
	[ "$held" -ge 120 ] || { cat "$T/job"; fail "the requeued job was held back $held s, not its credential lifetime"; }
	ok "the requeued job is held back $held s (cred_expire)"
	scontrol update JobId="$J" StartTime=now || fail "scontrol update $J StartTime=now"
}
start=$(now_s)
J=$(sbatch --parsable --requeue -n 2 -D "$T" -o "$T/batch.out" --open-mode=append "$T/batch.sh") ||
	fail "sbatch: $J"
ok "sbatch --requeue: job $J"

# the first launch: both ranks run big and run out of memory.  The rank
# whose allocation fails second may first be ended for the one that failed
# first (peer-failed): under make test-load, rank 1 ran out of memory and
# rank 0's xlaunch ended it before its own allocation had failed.  Either
# way one rank is oom, none ran anything else, and the job's outcome (the
# first death) is oom, checked in its history below.
expect_eq "$(launch 0)" FAILED "launch 0: the job failed"
got=$(q "SELECT rank || ':' || candidate || ':' || outcome FROM attempts WHERE job_id = '$J.0' ORDER BY rank" | paste -sd,)
case "$got" in
"0:big:oom,1:big:oom" | "0:big:oom,1:big:peer-failed" | "0:big:peer-failed,1:big:oom")
	ok "job $J.0: both ranks ran big; it ran out of memory ($got)" ;;
*) fail "job $J.0: both ranks ran big and ran out of memory, or were ended for the one that did: got '$got'" ;;
esac
grep -q "attempt 2/" "$T/batch.out" && { cat "$T/batch.out"; fail "a rank retried alone"; }
ok "no rank retried alone"

# requeued: a new launch, JOB.0#1, that takes the next candidate
requeue
expect_eq "$(launch 1)" COMPLETED "launch 1: the requeued job completed"
expect_eq "$(q "SELECT rank || ':' || candidate || ':' || outcome FROM attempts WHERE job_id = '$J.0#1' ORDER BY rank" | paste -sd,)" \
	"0:small:ok,1:small:ok" "job $J.0#1: both ranks took the next candidate, small, and ended ok"

# requeued after it ended well: JOB.0#2 takes the same candidate
requeue
expect_eq "$(launch 2)" COMPLETED "launch 2: completed"
expect_eq "$(q "SELECT rank || ':' || candidate || ':' || outcome FROM attempts WHERE job_id = '$J.0#2' ORDER BY rank" | paste -sd,)" \
	"0:small:ok,1:small:ok" "job $J.0#2: both ranks took small again"
expect_eq "$(q "SELECT job_id || ':' || candidate FROM job_choices WHERE job_id LIKE '$J.%' ORDER BY job_id" | paste -sd,)" \
	"$J.0:big,$J.0#1:small,$J.0#2:small" "each launch published its own choice once"

# the ids: what the batch script saw is what calib history --job shows
expect_eq "$(paste -sd, "$T/launches")" "launch $J 0,launch $J 1,launch $J 2" \
	"the batch script saw SLURM_JOB_ID $J and SLURM_RESTART_COUNT 0, 1, 2"
run "$XL" calib history --job "$J.0"
expect_rc 0 "history --job $J.0"
for l in "$J.0" "$J.0#1" "$J.0#2"; do
	expect_eq "$(grep -c "  $l  " "$T/out")" 2 "history --job $J.0: two ranks of launch $l"
done
grep -q "^job $J.0: 2 ranks; rank [01] on [^ ]* died first: oom at " "$T/out" || { cat "$T/out"; fail "history: $J.0 died of oom"; }
grep -q "^job $J.0#1: 2 ranks; no rank ended badly" "$T/out" || { cat "$T/out"; fail "history: $J.0#1 ended well"; }
ok "history: launch 0 died of oom, launch 1 ended well"
run "$XL" calib history --job "$J.0#1" --json
python3 - "$T/out" "$J.0#1" <<'PY' || { cat "$T/out"; fail "history --job $J.0#1 --json"; }
import json, sys
a = json.load(open(sys.argv[1]))
assert sorted((x["rank"], x["job_id"], x["outcome"]) for x in a) == [(0, sys.argv[2], "ok"), (1, sys.argv[2], "ok")], a
PY
ok "history --job $J.0#1 --json: that launch's two ranks alone"
echo "three launches of the batch job took $(secs_since "$start") s"
done_ok
