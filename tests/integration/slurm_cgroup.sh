# slurm_cgroup.sh - `srun --mem=... xlaunch run` in a real Slurm step that
# Slurm confines to memory cgroups of its own (a private cluster,
# SLURM_CGROUP=1 tools/slurm.sh: proctrack/cgroup, task/cgroup,
# ConstrainRAMSpace): a job beyond the step's --mem is killed by the kernel
# at the step's limit, named as an OOM at a cgroup above the launch's own,
# and `--retry=oom` goes on to the candidate that fits, all in one step; with
# XLAUNCH_MEMCG=own (as where xlaunch may make no cgroup) the peak is the
# step task's cgroup's, which xlaunch and its job are alone in, and an OOM
# kill there is named as one of the cgroup xlaunch runs in.
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 with sqlite3 is not installed"
export SLURM_CGROUP=1
slurm_setup
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P" XLAUNCH_STORE="$T/store/calib.db"
q() { python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=30)
for r in c.execute(sys.argv[2]): print("|".join("" if v is None else str(v) for v in r))' "$XLAUNCH_STORE" "$1"; }
# the host peak of the last attempt announced, and its source
last_peak() { q "select bytes || '|' || source from figures where kind = 'host_peak_rss' and role = 'observed' and attempt = '$(announced_id)'"; }

# Slurm's step must really be in a memory cgroup with the limit of --mem
run timeout 60 srun --mem=200M sh -c 'cat /proc/self/cgroup'
[ "$rc" = 0 ] || skip "srun --mem=200M under cgroups failed here: $(tail -3 "$SD"/log/slurmd.log | tr '\n' ' ')"
grep -Eq ':(memory)?:/slurm[^ ]*/job_[0-9]+/step_0' "$T/out" ||
	skip "the step is in no memory cgroup of Slurm's here: $(tr '\n' ' ' <"$T/out")"
ok "a Slurm step in memory cgroups of its own"

cat >"$P/sized.yaml" <<'Y'
description: a job of SIZE MiB, beyond the step's --mem and within it
candidates:
  - {name: big, env: {SIZE: 240}}
  - {name: small, env: {SIZE: 120}}
Y
JOB='python3 -c "import os; b = bytearray(int(os.environ[\"SIZE\"]) * 1048576); print(len(b))"'

# 1. in one step: the big candidate is killed at the step's limit, the small
# one runs
run timeout 120 sh -c "srun --mem=200M '$XL' run --retry=oom sized -- $JOB"
expect_rc 0 "the step ends well after the retry"
expect_err "attempt 1/2: oom (killed by the kernel OOM killer at the cgroup limit (of a cgroup above the launch's own" \
	"the kill at the step's limit is an OOM at a cgroup above the launch's own"
expect_err "outcome 'oom' is in --retry: trying the next candidate" "retried"
expect_err "attempt 2/2: ok" "the candidate that fits runs in the same step"
expect_eq "$(q "select candidate || ':' || outcome from attempts order by time" | paste -sd,)" "big:oom,small:ok" \
	"both recorded"
p=$(last_peak)
case $p in *"the kernel: cgroup v"*"of the launch's own cgroup"*) ;; *) fail "peak source: '$p'" ;; esac
[ "${p%%|*}" -ge $((120 * 1048576)) ] && [ "${p%%|*}" -lt $((200 * 1048576)) ] ||
	fail "the small candidate's peak ${p%%|*}"
ok "the kernel's peak of the launch's own cgroup, under the step's"
run sh -c "'$XL' calib order sized -- $JOB"
expect_out "known-bad" "the big candidate is known-bad"
expect_eq "$(awk '$1 == 1 {print $2 ":" $3}' "$T/out")" "small:known-good" "and the small one first"

# 2. no cgroup of the launch's own: the step task's, which xlaunch is alone in
run timeout 60 sh -c "srun --mem=200M --export=ALL,XLAUNCH_MEMCG=own '$XL' run -c small sized -- $JOB"
expect_rc 0 "a launch alone in the step's cgroup"
p=$(last_peak)
case $p in *"of the cgroup xlaunch and the job were alone in"*slurm*) ;; *) fail "own cgroup source: '$p'" ;; esac
[ "${p%%|*}" -ge $((120 * 1048576)) ] && [ "${p%%|*}" -lt $((200 * 1048576)) ] ||
	fail "the step's peak ${p%%|*} for a 120 MiB job"
ok "the peak of the step's cgroup, said so"
run timeout 60 sh -c "srun --mem=200M --export=ALL,XLAUNCH_MEMCG=own '$XL' run -c big --try-infeasible sized -- $JOB"
[ "$rc" -ne 0 ] || fail "a 240 MiB job in a 200 MiB step ended 0"
expect_err "oom (killed by the kernel OOM killer at the cgroup limit (of the cgroup xlaunch runs in, or one above it))" \
	"an OOM kill in the step's cgroup is named"
echo "ok ($nchecks checks)"
