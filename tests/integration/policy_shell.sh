# policy_shell.sh - the ambient policy sees every cataloged variable of the
# launching shell, not only the composite flag variables: a debug variable
# the shell exports cannot reach a timing run (stripped, or refused under
# keep/warn/error), what is stripped is said on one line, and the variables
# the job launcher owns (rank, topology) and xlaunch's own pass untouched.
. "$(dirname "$0")/lib.sh"
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P" XLAUNCH_STORE="$T/store/calib.db"
cat >"$P/timing-profile.yaml" <<'Y'
description: a timing run
env: {JAX_PLATFORMS: cpu}
policy: {timing: true}
Y
for mode in keep warn error; do
	printf 'extends: timing-profile\npolicy: {ambient: %s}\n' "$mode" >"$P/timing-$mode.yaml"
done
SHOW='echo "PT=${PT_XLA_DEBUG_LEVEL-unset} TF=${TF_CPP_MIN_LOG_LEVEL-unset} NCCL=${NCCL_DEBUG-unset} RANK=${RANK-unset} WS=${WORLD_SIZE-unset} CVD=${CUDA_VISIBLE_DEVICES-unset} COORD=${JAX_COORDINATOR_ADDRESS-unset} MINE=${MY_OWN-unset} XO=${XLAUNCH_OUTER-unset}"'
export RANK=1 WORLD_SIZE=2 CUDA_VISIBLE_DEVICES=1 JAX_COORDINATOR_ADDRESS=127.0.0.1:1234 MY_OWN=x XLAUNCH_OUTER=y

# strip (the default): the shell's debug variable never reaches the child
PT_XLA_DEBUG_LEVEL=2 TF_CPP_MIN_LOG_LEVEL=0 NCCL_DEBUG=INFO run "$XL" exec timing-profile -- sh -c "$SHOW"
expect_rc 0 "exec under strip runs"
expect_out "PT=unset TF=unset NCCL=unset" "cataloged variables of the shell are stripped (torch_xla, runtime, nccl families)"
expect_out "RANK=1 WS=2 CVD=1 COORD=127.0.0.1:1234" "variables the job launcher owns pass"
expect_out "MINE=x XO=y" "uncataloged and XLAUNCH_* variables pass"
n=$(grep -c "policy 'ambient: strip'" "$T/err" || true)
expect_eq "$n" 1 "stripping is said on one line"
expect_err "PT_XLA_DEBUG_LEVEL" "the line names the debug variable"
expect_err "TF_CPP_MIN_LOG_LEVEL" "the line names the other stripped variables"
! grep -q "RANK\|CUDA_VISIBLE_DEVICES\|JAX_COORDINATOR" "$T/err" || fail "a launcher-owned variable was reported as stripped"
ok "launcher-owned variables are not reported"

# run strips the same way, and xlaunch's own variables reach the child
PT_XLA_DEBUG_LEVEL=2 run "$XL" run --no-record timing-profile -- sh -c 'echo "PT=${PT_XLA_DEBUG_LEVEL-unset} ID=${XLAUNCH_RUN_ID:+set}"'
expect_rc 0 "run under strip"
expect_out "PT=unset ID=set" "run strips the debug variable and sets XLAUNCH_RUN_ID"
expect_err "policy 'ambient: strip'" "run says what it stripped"

# env: eval gives what exec gives
PT_XLA_DEBUG_LEVEL=2 run "$XL" env timing-profile
expect_out "unset PT_XLA_DEBUG_LEVEL" "env unsets what the policy strips"
PT_XLA_DEBUG_LEVEL=2 run sh -c 'eval "$("$1" env timing-profile)" && echo "PT=${PT_XLA_DEBUG_LEVEL-unset}"' sh "$XL"
expect_out "PT=unset" "eval of env strips like exec"
PT_XLA_DEBUG_LEVEL=2 run "$XL" env timing-profile --json
expect_out '"PT_XLA_DEBUG_LEVEL"' "env --json lists the stripped variable"

# keep and warn let the shell's value through, so timing: true refuses it
for mode in keep warn; do
	PT_XLA_DEBUG_LEVEL=2 run "$XL" exec "timing-$mode" -- sh -c 'echo CHILD-RAN'
	expect_rc 77 "ambient $mode: the shell's debug variable is refused"
	expect_no_out "CHILD-RAN" "ambient $mode: the child never starts"
	expect_err "environment: policy 'timing: true' (" "ambient $mode: the refusal names the environment and the policy"
	expect_err "refuses debug variable PT_XLA_DEBUG_LEVEL=2" "ambient $mode: the variable and value"
done
PT_XLA_DEBUG_LEVEL=2 run "$XL" run --no-record timing-keep -- true
expect_rc 77 "run refuses it as well"
# a cataloged variable that breaks no rule passes under keep
TF_CPP_MIN_LOG_LEVEL=1 run "$XL" exec timing-keep -- sh -c "$SHOW"
expect_rc 0 "keep: a harmless variable passes"
expect_out "TF=1" "keep: the shell's value reaches the child"
# warn says what it passes, on one line
TF_CPP_MIN_LOG_LEVEL=1 run "$XL" exec timing-warn -- true
expect_rc 0 "warn: a harmless variable passes"
expect_err "policy 'ambient: warn'" "warn: said"
expect_err "TF_CPP_MIN_LOG_LEVEL=1" "warn: names the variable"
# keep checks types too: the consumer's reading of a boolean
XLA_USE_SPMD=yes run "$XL" exec timing-keep -- true
expect_rc 77 "keep: a boolean torch_xla misreads is refused from the shell as from a profile"

# error refuses every cataloged variable of the shell, on one line
PT_XLA_DEBUG_LEVEL=2 TF_CPP_MIN_LOG_LEVEL=1 run "$XL" exec timing-error -- sh -c 'echo CHILD-RAN'
expect_rc 77 "ambient error refuses"
expect_no_out "CHILD-RAN" "ambient error: the child never starts"
n=$(wc -l <"$T/err")
expect_eq "$n" 1 "ambient error: one line"
expect_err "policy 'ambient: error' ($P/timing-error.yaml:2) refuses from the launching environment: " "ambient error: the policy and where it is set"
expect_err "PT_XLA_DEBUG_LEVEL=2" "ambient error: names the debug variable"
expect_err "TF_CPP_MIN_LOG_LEVEL=1" "ambient error: names the other variable"
run "$XL" exec timing-error -- true
expect_rc 0 "ambient error: launcher-owned variables alone are fine"

# profile show marks the catalog tag
run "$XL" flags explain WORLD_SIZE
expect_out "launcher" "the catalog tags WORLD_SIZE as the launcher's"
done_ok
