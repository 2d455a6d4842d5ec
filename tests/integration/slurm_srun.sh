# slurm_srun.sh - ranks under a real Slurm (a private single-node cluster,
# tools/slurm.sh), each `srun -n N xlaunch run ...`: a rank that dies ends
# the others within seconds without --kill-on-bad-exit; with it every rank
# is recorded once and the job's outcome is the first rank's; `scancel` of
# the job records `interrupted` once per rank and leaves no process; `scancel`
# of the step (SIGKILL to every process of it) leaves no process either, and
# the next `xlaunch run` on the host records each rank once as
# `interrupted`.  The job id `calib history --job` shows is
# the step's SLURM_JOB_ID.SLURM_STEP_ID as the tasks saw them.
#
# Time: the bound for a dead rank ending the others is 10 s (the README),
# checked against 10 s times MARGIN (2 unless set) on a busy host; what was
# measured is printed.
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"
MARGIN=${MARGIN:-2}
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 with sqlite3 is not installed"
slurm_setup
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P" XLAUNCH_STORE="$T/store/calib.db" XLAUNCH_STORE_WAIT=60
# the profile leaves the ranks section at its defaults (poll 2 s, lease 30 s)
cat >"$P/w.yaml" <<'Y'
description: one rank of a job under srun
env: {UNDER_SRUN: 1}
Y
# a short lease, for a story told once the leases of killed ranks ran out
cat >"$P/w-short.yaml" <<'Y'
extends: [w]
ranks: {poll: 0.5s, lease: 3s}
Y
q() { python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=30)
for r in c.execute(sys.argv[2]): print("|".join("" if v is None else str(v) for v in r))' "$XLAUNCH_STORE" "$1"; }
# one rank: notes its job and step ids, says it is up, then waits as a
# collective would; rank $DIE_RANK exits 3 once every rank is up.  A SIGTERM
# is noted in $MARK/term.RANK.
cat >"$T/job.sh" <<'S'
#!/bin/sh
r=$SLURM_PROCID
trap 'echo TERM >"$MARK/term.$r"; exit 143' TERM
echo "$SLURM_JOB_ID.$SLURM_STEP_ID" >"$MARK/id.$r"
: >"$MARK/up.$r"
if [ "$r" = "${DIE_RANK:-none}" ]; then
	while [ "$(ls "$MARK" | grep -c '^up\.')" -lt "$SLURM_NTASKS" ]; do sleep 0.05; done
	date +%s.%N >"$MARK/died"
	exit 3
fi
while :; do sleep 0.1; done
S
chmod +x "$T/job.sh"
all_up() { [ "$(ls "$MARK" | grep -c '^up\.')" -eq "$1" ]; }
# step_procs JOB: the processes whose environment is of Slurm job JOB of
# this cluster (every process a task starts inherits it)
step_procs() {
	for e in /proc/[0-9]*/environ; do
		env=$({ tr '\0' '\n' <"$e"; } 2>/dev/null) || continue
		echo "$env" | grep -qx "SLURM_JOB_ID=$1" && echo "$env" | grep -qxF "SLURM_CONF=$SLURM_CONF" &&
			{ p=${e#/proc/}; echo "${p%/environ}"; }
	done
	return 0
}
no_step_procs() { [ -z "$(step_procs "$1")" ]; }
# job_of: the job and step id the tasks saw (all the same)
job_of() {
	id=$(cat "$MARK"/id.* | sort -u)
	[ "$(echo "$id" | wc -l)" -eq 1 ] && [ -n "$id" ] || fail "the tasks saw job ids '$id'"
	echo "$id"
}
# srun_bg CASE [SRUN-OPTION...]: srun of $N ranks under xlaunch in the background
srun_bg() {
	MARK="$T/$1"; shift
	mkdir -p "$MARK"
	MARK=$MARK timeout "$HANG_S" srun -n "$N" "$@" "$XL" run "${PROF:-w}" -- "$T/job.sh" >"$MARK/out" 2>&1 &
	spid=$!
}
srun_wait() { set +e; wait "$spid"; src=$?; set -e; }

# 1. no --kill-on-bad-exit: rank 2 exits 3, xlaunch ends the other three
N=4
DIE_RANK=2 srun_bg c1
srun_wait
t1=$(now_s)
[ -f "$MARK/died" ] || { cat "$MARK/out"; fail "rank 2 never exited"; }
el=$(awk -v a="$(cat "$MARK/died")" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
echo "srun without --kill-on-bad-exit: 3 ranks ended $el s after rank 2 died (bound 10 s, checked against $((10 * MARGIN)) s)"
below "$el" $((10 * MARGIN)) || { cat "$MARK/out"; fail "the other ranks ended $el s after rank 2"; }
ok "the others ended within the bound"
[ "$src" -ne 0 ] && [ "$src" -ne 124 ] || { cat "$MARK/out"; fail "srun exits non-zero (not a timeout): $src"; }
J=$(job_of)
case $J in [0-9]*.0) ok "the tasks' job is step 0 of a Slurm job ($J)" ;; *) fail "job id '$J'" ;; esac
for r in 0 1 3; do
	grep -qF "xlaunch: rank 2 of job $J ended with error; ending rank $r" "$MARK/out" ||
		{ cat "$MARK/out"; fail "rank $r says it ends for rank 2"; }
	[ -f "$MARK/term.$r" ] || { cat "$MARK/out"; fail "rank $r's child got SIGTERM"; }
done
ok "ranks 0, 1 and 3 said why and their children got SIGTERM"
expect_eq "$(q "SELECT rank || ':' || outcome FROM attempts WHERE job_id = '$J' ORDER BY rank" | paste -sd,)" \
	"0:peer-failed,1:peer-failed,2:error,3:peer-failed" "each rank recorded once: rank 2 error, the others peer-failed"
run "$XL" calib history --job "$J"
expect_rc 0 "history --job $J"
grep -q "^job $J: 4 ranks; rank 2 on [^ ]* died first: error at " "$T/out" || { cat "$T/out"; fail "history: rank 2 died first"; }
expect_eq "$(grep -c "peer-failed at .*ended for rank 2 (error)" "$T/out")" 3 "history: the three others ended for rank 2"
wait_until 10 no_step_procs "${J%.*}" || fail "processes of job ${J%.*} left: $(step_procs "${J%.*}")"
ok "no process of the job is left"

# 2. --kill-on-bad-exit: Slurm ends the step itself; every rank is recorded
# once (peer-failed or interrupted, whichever came first) and rank 1's
# error is the job's outcome
DIE_RANK=1 srun_bg c2 --kill-on-bad-exit
srun_wait
t1=$(now_s)
[ -f "$MARK/died" ] || { cat "$MARK/out"; fail "rank 1 never exited"; }
el=$(awk -v a="$(cat "$MARK/died")" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
echo "srun --kill-on-bad-exit: the step ended $el s after rank 1 died"
below "$el" $((10 * MARGIN)) || { cat "$MARK/out"; fail "the step ended $el s after rank 1"; }
J=$(job_of)
expect_eq "$(q "SELECT count(*) || ':' || count(DISTINCT rank) || ':' || count(DISTINCT id) FROM attempts WHERE job_id = '$J'")" \
	"4:4:4" "--kill-on-bad-exit: each of the 4 ranks recorded exactly once"
expect_eq "$(q "SELECT outcome FROM attempts WHERE job_id = '$J' AND rank = 1")" error "rank 1: error"
others=$(q "SELECT outcome FROM attempts WHERE job_id = '$J' AND rank <> 1 ORDER BY rank" | paste -sd,)
echo "$others" | grep -Eqx '((peer-failed|interrupted),){2}(peer-failed|interrupted)' ||
	{ cat "$MARK/out"; fail "the other ranks: $others"; }
ok "the other ranks ended peer-failed or interrupted ($others)"
expect_eq "$(grep -c "interrupted (interrupted by Terminated (forwarded to the child))" "$MARK/out")" \
	"$(echo "$others" | tr ',' '\n' | grep -cx interrupted)" "each interrupted rank was ended by Slurm's SIGTERM"
run "$XL" calib history --job "$J"
grep -q "^job $J: 4 ranks; rank 1 on [^ ]* died first: error at " "$T/out" || { cat "$T/out"; fail "history: rank 1 died first"; }
ok "the job's outcome is rank 1's error"
wait_until 10 no_step_procs "${J%.*}" || fail "processes of job ${J%.*} left: $(step_procs "${J%.*}")"
ok "no process of the job is left"

# 3. scancel of the job while its step runs: Slurm sends SIGTERM to every
# process of the step; each rank records interrupted once
N=2
srun_bg c3
wait_until "$HANG_S" all_up 2 || { cat "$MARK/out"; fail "the ranks never started"; }
J=$(job_of)
[ -n "$(step_procs "${J%.*}")" ] || fail "the step's processes are found while it runs"
scancel "${J%.*}"
srun_wait
expect_eq "$(q "SELECT rank || ':' || outcome FROM attempts WHERE job_id = '$J' ORDER BY rank" | paste -sd,)" \
	"0:interrupted,1:interrupted" "scancel of the job: each rank recorded once, interrupted"
expect_eq "$(grep -c "interrupted (interrupted by Terminated (forwarded to the child))" "$MARK/out")" 2 \
	"scancel of the job: by SIGTERM"
wait_until 10 no_step_procs "${J%.*}" || fail "processes of job ${J%.*} left: $(step_procs "${J%.*}")"
ok "scancel of the job leaves no process"

# 4. scancel of the step: Slurm sends SIGKILL to every process of it, the
# guardians too, so nothing is recorded then; the next run on this host
# finds the supervisors gone and records each rank once; once the ranks'
# leases ran out, the job's story names the rank that was gone first
PROF=w-short srun_bg c4
wait_until "$HANG_S" all_up 2 || { cat "$MARK/out"; fail "the ranks never started"; }
J=$(job_of)
scancel "$J"
srun_wait
wait_until 10 no_step_procs "${J%.*}" || fail "processes of job ${J%.*} left: $(step_procs "${J%.*}")"
ok "scancel of the step leaves no process"
grep -q "tasks 0-1: Killed" "$MARK/out" || { cat "$MARK/out"; fail "srun says SIGKILL ended the tasks"; }
grep -q "interrupted" "$MARK/out" && { cat "$MARK/out"; fail "a rank's supervisor outlived SIGKILL"; }
ok "scancel of the step: SIGKILL, no supervisor said anything"
expect_eq "$(q "SELECT count(*) FROM attempts WHERE job_id = '$J'")" 0 "nothing recorded by the killed ranks"
run "$XL" run w -- true
expect_rc 0 "a later run on the host"
expect_err "recovered 2 lost attempts" "it records the two killed ranks"
expect_eq "$(q "SELECT rank || ':' || outcome FROM attempts WHERE job_id = '$J' ORDER BY rank" | paste -sd,)" \
	"0:interrupted,1:interrupted" "scancel of the step: each rank recorded once, interrupted"
run "$XL" calib history --job "$J"
expect_eq "$(grep -c " $J  *interrupted (\(supervisor lost\|recorded later\))" "$T/out")" 2 \
	"history: both ranks interrupted, recorded by the sweep"
# both leases ran out (one renewed a little after the other)
gone_first() {
	"$XL" calib history --job "$J" >"$T/out" 2>"$T/err" &&
		grep -q "^job $J: 2 ranks; rank [01] on [^ ]* was gone first: its lease ran out at " "$T/out" &&
		grep -q "^  rank [01] on [^ ]*: no end recorded; its lease ran out at " "$T/out"
}
wait_until "$HANG_S" gone_first || { cat "$T/out" "$T/err"; fail "history: the story of the killed step"; }
ok "history: the killed step's story names the rank whose lease ran out first, then the other"
run "$XL" run w -- true
! grep -q "recovered" "$T/err" || { cat "$T/err"; fail "a second run recorded again"; }
expect_eq "$(q "SELECT count(*) FROM attempts WHERE job_id = '$J'")" 2 "still once per rank"
done_ok
