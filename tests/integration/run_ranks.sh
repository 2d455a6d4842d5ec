# run_ranks.sh - a job of two real JAX processes on the CPU joined by
# jax.distributed, each rank under `xlaunch run`: every rank records, the
# job's outcome is its worst rank's, no rank retries alone, and an OOM on
# rank 1 makes the candidate known-bad for the whole job's next launch.  Every
# launch ends in order (a final barrier, then jax.distributed.shutdown(), on
# every rank: tests/integration/jax_ranks.py) and the test checks each rank's
# line for it; one launch leaves the barrier out on purpose, and the rank it
# strands says why it died.  On an SQLite file; run_ranks_pg.sh runs the
# same on PostgreSQL (STORE_BACKEND=postgresql), where ranks on many hosts
# would share it.
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"
BACKEND=${STORE_BACKEND:-sqlite}
venv=$(tools/venv.sh demo 2>"$T/venv.err") || { cat "$T/venv.err"; skip "$(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"; }
PY="$SRC/$venv/bin/python"
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P" JAX_PLATFORMS=cpu
case $BACKEND in
sqlite)
	python3 -c 'import sqlite3' 2>/dev/null || skip "python3 with sqlite3 is not installed"
	XLAUNCH_STORE="$T/store/calib.db"
	q() { python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=30)
for r in c.execute(sys.argv[2]): print("|".join("" if v is None else str(v) for v in r))' "$XLAUNCH_STORE" "$1"; } ;;
postgresql)
	pg_setup
	XLAUNCH_STORE=$(pg_store ranks)
	q() { pg_sql "$XLAUNCH_STORE" -c "$1"; } ;;
esac
export XLAUNCH_STORE
cat >"$P/ranks.yaml" <<'Y'
env: {JAX_PLATFORMS: cpu}
candidates:
  - {name: big, env: {ALLOC_MB: 1024}}
  - {name: small, env: {ALLOC_MB: 8}}
Y
# --timeout 600s guards against a hang only: a launch of the job took 2 to
# 10 s on this 2-core host with a load average of 7 to 12.
# job ID [VAR=VALUE...]: both ranks at once, each under xlaunch run (profile
# $prof, default ranks); every rank must end in order (ended_in_order)
prof=ranks
job() {
	id=$1; shift
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	for r in 0 1; do
		env RANK=$r WORLD_SIZE=2 XLAUNCH_JOB_ID="$id" XL_COORD="127.0.0.1:$port" "$@" \
			"$XL" run --timeout 600s --grace 2s "$prof" -- "$PY" "$SRC/tests/integration/jax_ranks.py" \
			>"$T/out$r" 2>"$T/err$r" &
		eval "pid$r=\$!"
	done
	set +e; wait "$pid0"; rc0=$?; wait "$pid1"; rc1=$?; set -e
}
# ended_in_order JOB FILE...: every rank printed the line that follows its
# final barrier and jax.distributed.shutdown(), in the files given
ended_in_order() {
	what=$1; shift
	for r in 0 1; do
		cat "$@" | grep -q "^rank $r: distributed runtime shut down$" ||
			{ cat "$@"; fail "$what: rank $r did not end with the barrier and the shutdown"; }
	done
	ok "$what: both ranks passed the final barrier and shut the runtime down"
}

job j1
[ "$rc0" = 0 ] && [ "$rc1" = 0 ] || { cat "$T/err0" "$T/err1"; fail "both ranks ok: $rc0 $rc1"; }
ok "two ranks joined and both ended ok"
ended_in_order j1 "$T/out0" "$T/out1"
expect_eq "$(q "SELECT rank || ':' || outcome || ':' || candidate FROM attempts WHERE job_id = 'j1' ORDER BY rank" | paste -sd,)" \
	"0:ok:big,1:ok:big" "each rank recorded its attempt, with the job id and its rank"

# rank 1 runs out of memory: the job fails, no rank retries alone
job j2 FAIL_RANK=1 CAP_MB=600
[ "$rc1" != 0 ] || { cat "$T/err1"; fail "rank 1 under a cap failed"; }
ended_in_order j2 "$T/out0" "$T/out1"
grep -q "attempt 2/" "$T/err0" "$T/err1" && fail "a rank retried alone"
ok "no rank retried alone"
grep -q "no rank retries alone" "$T/err1" || { cat "$T/err1"; fail "rank 1 says the job is restarted whole"; }
ok "rank 1 says why it does not retry"
expect_eq "$(q "SELECT outcome FROM attempts WHERE job_id = 'j2' AND rank = 1")" oom "rank 1's OOM reached the store"
run "$XL" calib order ranks --json -- "$PY" "$SRC/tests/integration/jax_ranks.py"
expect_rc 0 "calib order"
python3 - "$T/out" <<'PY' || { cat "$T/out"; fail "big is known-bad and last"; }
import json, sys
o = json.load(open(sys.argv[1]))
order = o["order"] if isinstance(o, dict) else o
names = [c["name"] for c in order]
assert names[-1] == "big", names
assert [c["place"] for c in order if c["name"] == "big"] == ["known-bad"], order
PY
ok "the OOM of rank 1 makes big known-bad, ordered last"
run "$XL" calib history --job j2
expect_out "oom" "history --job shows the job's ranks"
expect_eq "$(grep -c ' j2 ' "$T/out")" 2 "both ranks of j2 with their rank"

# the next launch of the job: both ranks take the same next candidate
job j3
[ "$rc0" = 0 ] && [ "$rc1" = 0 ] || { cat "$T/err0" "$T/err1"; fail "the next launch ok: $rc0 $rc1"; }
ended_in_order j3 "$T/out0" "$T/out1"
expect_eq "$(q "SELECT candidate FROM attempts WHERE job_id = 'j3' ORDER BY rank" | paste -sd,)" \
	"small,small" "every rank of the next launch runs small"
expect_eq "$(q "SELECT candidate FROM job_choices WHERE job_id = 'j3'")" small "the choice published once"

# rank 1 exits 3: the job is failed
job j4 FAIL_RANK=1 FAIL_EXIT=3
expect_eq "$rc1" 3 "rank 1's xlaunch exits with its child's status"
ended_in_order j4 "$T/out0" "$T/out1"
run "$XL" calib stats --json
python3 - "$T/out" "$(q "SELECT signature FROM attempts WHERE job_id = 'j4' LIMIT 1")" <<'PY' || { cat "$T/out"; fail "stats per job"; }
import json, sys
rows = {r["signature"]: r for r in json.load(open(sys.argv[1]))}
s = rows[sys.argv[2]]
# j3 ok, j4 failed: two jobs (four rank records), one ok
assert s["attempts"] == 2 and s["ok"] == 1, s
PY
ok "stats counts jobs, a job with a failed rank is not ok"
expect_eq "$(q "SELECT outcome FROM attempts WHERE job_id = 'j4' AND rank = 1")" error "rank 1's failure reached the store"

# the job without its final barrier, on purpose: rank 0, which hosts the
# coordination service, leaves at once and rank 1's JAX aborts.  Rank 1's
# outcome names the real cause (etc/outcomes.yaml, peer_exit), not a crash
# of its own to hunt
cat >"$P/ranks-leave.yaml" <<'Y'
env: {JAX_PLATFORMS: cpu, ALLOC_MB: 8}
Y
prof=ranks-leave
job j5 XL_NO_BARRIER=0 XL_LINGER_S=120
prof=ranks
expect_eq "$rc0" 0 "j5: rank 0 left at once and ended 0"
grep -q "Terminating process because the JAX distributed service detected fatal errors" "$T/err1" ||
	{ cat "$T/out1" "$T/err1"; fail "j5: rank 1's JAX was stopped by the closed coordination service"; }
expect_eq "$rc1" 134 "j5: rank 1 aborted (SIGABRT)"
grep -q "attempt 1/1: crash (another rank's exit closed the distributed runtime's coordination service" "$T/err1" ||
	{ cat "$T/err1"; fail "j5: rank 1's outcome line names the closed coordination service"; }
ok "j5: rank 1's outcome names another rank's exit"
expect_eq "$(q "SELECT rank || ':' || outcome FROM attempts WHERE job_id = 'j5' ORDER BY rank" | paste -sd,)" \
	"0:ok,1:crash" "j5: both ranks recorded"

# the same under torchrun (torch's venv), which names the job itself
# (TORCHELASTIC_RUN_ID) and sets each rank's RANK and WORLD_SIZE
tvenv=$(tools/venv.sh torch 2>"$T/venv.err") || tvenv=""
if [ -n "$tvenv" ] && [ -x "$SRC/$tvenv/bin/torchrun" ]; then
	cat >"$P/ranks2.yaml" <<'Y'
env: {JAX_PLATFORMS: cpu}
candidates:
  - {name: big, env: {ALLOC_MB: 1000}}
  - {name: small, env: {ALLOC_MB: 7}}
Y
	# torchrun LOG [VAR=VALUE...]: one launch of the job, both ranks
	trun() {
		log=$1; shift
		port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		set +e
		env -u RANK -u WORLD_SIZE -u XLAUNCH_JOB_ID XL_COORD="127.0.0.1:$port" "$@" \
			"$SRC/$tvenv/bin/torchrun" --standalone --nproc-per-node=2 --max-restarts=0 \
			--no-python "$XL" run --timeout 600s --grace 2s ranks2 -- \
			"$PY" "$SRC/tests/integration/jax_ranks.py" >"$T/$log" 2>&1
		trc=$?
		set -e
	}
	trun t1 FAIL_RANK=1 CAP_MB=600
	[ "$trc" != 0 ] || { cat "$T/t1"; fail "torchrun: the job with rank 1 out of memory failed"; }
	ended_in_order "torchrun t1" "$T/t1"
	grep -q "attempt 2/" "$T/t1" && { cat "$T/t1"; fail "torchrun: a rank retried alone"; }
	tjob=$(q "SELECT job_id FROM attempts WHERE candidate = 'big' AND profile = 'ranks2' AND rank = 1")
	[ -n "$tjob" ] || { cat "$T/t1"; fail "torchrun: rank 1 recorded with torchrun's job id"; }
	expect_eq "$(q "SELECT rank || ':' || outcome FROM attempts WHERE job_id = '$tjob' ORDER BY rank" | tail -1)" "1:oom" \
		"torchrun: rank 1's OOM recorded under the run id"
	run "$XL" calib order ranks2 --json -- "$PY" "$SRC/tests/integration/jax_ranks.py"
	python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); o=o["order"] if isinstance(o, dict) else o
assert o[-1]["name"] == "big" and o[-1]["place"] == "known-bad", o' "$T/out" || { cat "$T/out"; fail "torchrun: big known-bad"; }
	ok "torchrun: the OOM of rank 1 makes big known-bad"
	trun t2
	[ "$trc" = 0 ] || { cat "$T/t2"; fail "torchrun: the next launch ok"; }
	ended_in_order "torchrun t2" "$T/t2"
	tjob2=$(q "SELECT job_id FROM attempts WHERE profile = 'ranks2' AND candidate = 'small' LIMIT 1")
	expect_eq "$(q "SELECT candidate FROM attempts WHERE job_id = '$tjob2' ORDER BY rank" | paste -sd,)" "small,small" \
		"torchrun: both ranks of the next launch run small"
else
	echo "note: torch's venv (tools/venv.sh torch) is not available: the torchrun half is left out"
fi
done_ok
