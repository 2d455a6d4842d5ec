# storm_stop.sh - compile.on_storm: stop and run --on-storm: a real JAX job
# that would storm for its whole length (examples/jax_recompile.py drift,
# a new shape every step, 2000 steps) is ended soon after the storm rule is
# met, through the same SIGTERM-grace-SIGKILL path as a timeout, with
# outcome compile-storm and the status --fail-on gives; a steady job under
# the same profile runs to its end; --on-storm=warn over the profile lets
# a short storm run out; --retry=compile-storm moves on to the next
# candidate; the key and the option are checked.
. "$(dirname "$0")/lib.sh"
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P:$SRC/profiles" XLAUNCH_STORE="$T/store/calib.db"
unset JAX_LOG_COMPILES JAX_EXPLAIN_CACHE_MISSES JAX_COMPILATION_CACHE_DIR

# the key and the option are checked
printf 'description: x\ncompile: {on_storm: halt}\n' >"$P/bad.yaml"
run "$XL" profile check bad
expect_rc 65 "a bad on_storm"
expect_err "bad.yaml:2:21: compile.on_storm: 'halt' is not warn or stop" "said with its place"
run "$XL" run --on-storm=halt "$SRC/profiles/cpu-jax.yaml" -- true
expect_rc 64 "a bad --on-storm"
run "$XL" help run
expect_out "--on-storm" "--on-storm in help run"

cd "$SRC"
venv=$(tools/venv.sh demo 2>"$T/venv.err") || { cat "$T/venv.err"; skip "$(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"; }
PY="$SRC/$venv/bin/python"
cat >"$P/stop.yaml" <<'Y'
description: cpu-jax, a compile storm ends the job
extends: [cpu-jax]
compile: {on_storm: stop}
Y
run "$XL" profile show stop --explain
expect_out "on_storm=stop" "profile show says it"
expect_out "stop.yaml:3" "and where it was set"

# a storm that would run for minutes: ended within seconds of the verdict
t0=$(now_s)
XLAUNCH_CACHE_ROOT="$T/cache-1" run "$XL" run stop -c mb256 --grace 5s -- "$PY" examples/jax_recompile.py drift 2000 --step-ms 30
took=$(secs_since "$t0")
expect_rc 79 "a stopped storm exits as --fail-on does"
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" compile-storm "stopped: outcome compile-storm"
expect_err "compile storm after " "the stop said"
expect_err "stopping the child (on_storm: stop; SIGTERM, then SIGKILL after 5 s)" "through the one way to end a child"
expect_err "compile-storm (stopped after " "the outcome says who stopped it"
expect_err "jit(train_step) recompiled " "and names the function"
most=$(python3 -c 'import json,sys; print(max(f["compiles"] for f in json.load(open(sys.argv[1]))["compile"]["functions"]))' "$m")
[ "$most" -lt 1000 ] || fail "the storm was not stopped early: $most compilations"
ok "stopped after $took s, at $most compilations of train_step (of 2000)"
! grep -q '^done:' "$T/out" || fail "the storm ran to its end"
ok "the job did not reach its end"

# a steady job under the same profile runs to its end
XLAUNCH_CACHE_ROOT="$T/cache-2" run "$XL" run stop -c mb256 -- "$PY" examples/jax_recompile.py model 300 --step-ms 30
expect_rc 0 "steady under on_storm: stop"
expect_out "done: 300 steps" "ran to its end"
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" ok "steady: ok"

# --on-storm=warn over the profile: a short storm runs out, then is named
XLAUNCH_CACHE_ROOT="$T/cache-3" run "$XL" run stop -c mb256 --on-storm=warn -- "$PY" examples/jax_recompile.py drift 40
expect_rc 0 "warn: the child's own status"
expect_out "done: 40 steps" "warn: ran to its end"
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" compile-storm "warn: named at the end"

# --retry=compile-storm: the next candidate runs (a steady one)
cat >"$P/two.yaml" <<'Y'
description: a drifting candidate, then a steady one
extends: [cpu-jax]
compile: {on_storm: stop}
candidates:
  - {name: drifting, env: {JOB_MODE: drift, JOB_STEPS: 1500}}
  - {name: steady, env: {JOB_MODE: steady, JOB_STEPS: 100}}
Y
XLAUNCH_CACHE_ROOT="$T/cache-4" run "$XL" run two --retry=compile-storm -- sh -c '"$1" examples/jax_recompile.py "$JOB_MODE" "$JOB_STEPS" --step-ms 20' sh "$PY"
expect_rc 0 "the steady candidate's status"
expect_err "outcome 'compile-storm' is in --retry: trying the next candidate" "retried after the stop"
expect_out "done: 100 steps" "the next candidate ran to its end"
! grep -q "done: 1500 steps" "$T/out" || fail "the drifting candidate ran to its end"
ok "the drifting candidate was stopped"
done_ok
