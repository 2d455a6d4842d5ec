# early_oom.sh - compile.early_oom and run --early-oom: a real JAX job
# (aot_setup.py) compiles its step ahead of time, a step that needs 64 GiB,
# then sets up for 30 s before running it, under limits.address_space 16
# GiB.  With early OOM on (the default) the launch ends within 5 s of the
# compile's start, outcome oom, the reason naming the compiler's figure and
# the limit, through the one SIGTERM-grace-SIGKILL path, every process of
# the job gone; turned off (by the option, or by the profile), the job runs
# into the runtime's own allocation failure after its set-up.  The key and
# the option are checked.
. "$(dirname "$0")/lib.sh"
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P:$SRC/profiles" XLAUNCH_STORE="$T/store/calib.db"
unset JAX_LOG_COMPILES JAX_EXPLAIN_CACHE_MISSES JAX_COMPILATION_CACHE_DIR

# the key and the option are checked
printf 'description: x\ncompile: {early_oom: maybe}\n' >"$P/bad.yaml"
run "$XL" profile check bad
expect_rc 65 "a bad early_oom"
expect_err "bad.yaml:2:22: compile.early_oom: 'maybe' is not true or false" "said with its place"
run "$XL" run --early-oom=maybe "$SRC/profiles/cpu-jax.yaml" -- true
expect_rc 64 "a bad --early-oom"
expect_err "early-oom" "the option named"
run "$XL" help run
expect_out "--early-oom" "--early-oom in help run"

cd "$SRC"
venv=$(tools/venv.sh demo 2>"$T/venv.err") || { cat "$T/venv.err"; skip "$(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"; }
PY="$SRC/$venv/bin/python"
cp tests/integration/aot_setup.py "$T/aot_setup.py"
JOB="$T/aot_setup.py"
cat >"$P/aot.yaml" <<'Y'
description: cpu-jax under an address-space limit far below the step's 64 GiB
extends: [cpu-jax]
limits: {address_space: 16GiB}
Y
cat >"$P/aotoff.yaml" <<'Y'
description: the same, early OOM turned off
extends: [aot]
compile: {early_oom: false}
Y
run "$XL" profile show aotoff --explain
expect_out "early_oom=false" "profile show says it"
expect_out "aotoff.yaml:3" "and where it was set"

# stamp FILE WHAT: the epoch the job wrote for WHAT, or ""
stamp() { awk -v w="$2" '$1 == w { print $2 }' "$1"; }
gone() {  # no process of the job is left
	! pgrep -f "$JOB" >/dev/null || { pgrep -af "$JOB"; fail "$1: a process of the job is left"; }
	ok "$1: every process gone"
}

# on (the default): ended at the compile, not after the set-up
XLAUNCH_CACHE_ROOT="$T/cache-on" run "$XL" run aot -c mb256 --grace 5s -- "$PY" "$JOB" 64 30 "$T/st-on"
t_end=$(now_s)
expect_rc 143 "ended by SIGTERM"
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" oom "early: outcome oom"
reason=$(jget "$m" reason)
case "$reason" in
"compiler: jit(train_step) needs 64.0 GiB of 16.0 GiB (limits.address_space; XLA's memory-usage report), stopped after "*) ok "the reason names the compiler's figure and the limit" ;;
*) fail "early: reason '$reason'" ;;
esac
expect_err "out of memory at compile after " "the stop said"
expect_err "stopping the child (early_oom; SIGTERM, then SIGKILL after 5 s)" "through the one way to end a child"
t_c=$(stamp "$T/st-on" compiling)
[ -n "$t_c" ] || fail "the job wrote no compiling stamp"
[ -z "$(stamp "$T/st-on" setup)" ] || fail "the job finished its set-up: not ended early"
took=$(awk -v a="$t_c" -v b="$t_end" 'BEGIN { printf "%.2f", b - a }')
below "$took" 5 || fail "ended $took s after the compile started, not within 5 s"
ok "ended $took s after the compile started (set-up 30 s)"
gone "early"

# off by the option: the runtime's own failure, after the set-up
XLAUNCH_CACHE_ROOT="$T/cache-opt" run "$XL" run aot -c mb256 --early-oom=off -- "$PY" "$JOB" 64 30 "$T/st-opt"
t_end=$(now_s)
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" oom "off: outcome oom, by the runtime"
case "$(jget "$m" reason)" in
xla-oom:*RESOURCE_EXHAUSTED*) ok "off: the runtime's allocation failure decided" ;;
*) fail "off: reason '$(jget "$m" reason)'" ;;
esac
! grep -q "out of memory at compile" "$T/err" || fail "off: stopped at the compile"
t_c=$(stamp "$T/st-opt" compiled); t_s=$(stamp "$T/st-opt" setup)
[ -n "$t_c" ] && [ -n "$t_s" ] || fail "off: the job did not set up"
took=$(awk -v a="$t_c" -v b="$t_end" 'BEGIN { printf "%.2f", b - a }')
below 30 "$took" || fail "off: ended $took s after the compile, before the set-up's end"
ok "off: ended $took s after the compile"
gone "off"

# off by the profile
XLAUNCH_CACHE_ROOT="$T/cache-prof" run "$XL" run aotoff -c mb256 -- "$PY" "$JOB" 64 2 "$T/st-prof"
m=$(announced_manifest)
case "$(jget "$m" reason)" in
xla-oom:*RESOURCE_EXHAUSTED*) ok "off by the profile: the runtime decided" ;;
*) fail "profile off: reason '$(jget "$m" reason)'" ;;
esac
[ -n "$(stamp "$T/st-prof" setup)" ] || fail "profile off: the job did not set up"
# --early-oom=on over the profile's false
XLAUNCH_CACHE_ROOT="$T/cache-over" run "$XL" run aotoff -c mb256 --early-oom=on -- "$PY" "$JOB" 64 30 "$T/st-over"
m=$(announced_manifest)
case "$(jget "$m" reason)" in
"compiler: jit(train_step) needs 64.0 GiB"*) ok "the option over the profile" ;;
*) fail "--early-oom=on: reason '$(jget "$m" reason)'" ;;
esac
gone "over"

# a step that fits runs to its end under early OOM
XLAUNCH_CACHE_ROOT="$T/cache-fit" run "$XL" run aot -c mb256 -- "$PY" "$JOB" 0.25 1 "$T/st-fit"
expect_rc 0 "a step that fits"
expect_out "ran: " "ran its step"
expect_eq "$(jget "$(announced_manifest)" outcome)" ok "fits: ok"
done_ok
