# compile_storm.sh - `xlaunch run` names compile storms on any time scale:
# compilations that keep coming (by steps, or by the shape of their arrival
# times) against a job that compiles at start and then runs steadily,
# however short; the function and its cause in xlaunch's own line and in
# the manifest; a profile's compile section; --fail-on=compile-storm; and
# `profile show --explain` suggesting the debug profile after a storm seen
# without compile logging.  Real JAX (.venv) where it can be had.
. "$(dirname "$0")/lib.sh"
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P:$SRC/profiles" XLAUNCH_STORE="$T/store/calib.db"
printf 'description: nothing set\nenv: {PLAIN: yes}\n' >"$P/plain.yaml"
cat >"$P/steps.yaml" <<'Y'
description: steps from the job's lines
compile: {step_pattern: '^it ([0-9]+):'}
Y
cat >"$P/lenient.yaml" <<'Y'
description: a job known to compile ten shapes after warm-up
extends: steps
compile: {warmup_steps: 2, max_after_warmup: 12}
Y
LINE='Finished XLA compilation of jit(step) in 0.01 sec'

# By the shape of the compile times, no steps shown: twenty compilations of
# one function at start, then a steady second, is warm-up ...
run "$XL" run plain -- sh -c 'for i in $(seq 20); do echo "$1" >&2; done; sleep 1' sh "$LINE"
expect_rc 0 "burst, then steady"
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" ok "compilations at start that stop are warm-up, however short the run"
expect_eq "$(jget "$m" compile_count)" 20 "counted"
expect_eq "$(jget "$m" compile.storm_by)" time "judged by the compile times"
# ... and the same twenty arriving until the end is a storm, on a second's
# scale: the last one right before the exit, so that a busy host that
# stretches a pause does not move it away from the end
run "$XL" run plain -- sh -c 'for i in $(seq 20); do sleep 0.1; echo "$1" >&2; done' sh "$LINE"
expect_rc 0 "a storm still exits 0"
expect_err "compile-storm (jit(step) recompiled " "the function in xlaunch's own line"
expect_err " times after warm-up (the first third of the run): " "by their arrival through the run"
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" compile-storm "storm by time"
expect_eq "$(jget "$m" compile.storm_rule)" arrival "the arrival rule"
expect_eq "$(jget "$m" compile.functions.0.name)" "jit(step)" "the manifest names the function"
expect_eq "$(jget "$m" compile.recompilations)" 19 "recompilations counted"
# A storm whose process then takes its time to exit is still one: the quiet
# before the exit is not what is judged (the rule this one replaced called it
# ok: the half second was more than four of its gaps; it is a quarter of the
# storm, which on a loaded machine stretches with it)
run "$XL" run plain -- sh -c 'for i in $(seq 40); do echo "$1" >&2; sleep 0.05; done; sleep 0.5' sh "$LINE"
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" compile-storm "a storm, then a slow exit"

# By steps, from a step pattern the profile names
STEPJOB='for i in $(seq 0 14); do if [ $i -eq 0 ] || [ $i -gt 3 ]; then echo "$1" >&2; fi; echo "it $i: loss 1" >&2; done'
run "$XL" run steps -- sh -c "$STEPJOB" sh "$LINE"
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" compile-storm "eleven compilations after warm-up (step 5 by default)"
expect_eq "$(jget "$m" compile.storm_by)" steps "judged by steps"
expect_eq "$(jget "$m" compile.steps.seen)" 15 "steps from the profile's pattern"
expect_eq "$(jget "$m" compile.rule.warmup_steps)" 5 "the default warm-up"
expect_err "jit(step) recompiled 9 times after warm-up (step 5): " "by steps, one count"
# the thresholds a profile sets
run "$XL" run lenient -- sh -c "$STEPJOB" sh "$LINE"
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" ok "a profile's higher threshold"
expect_eq "$(jget "$m" compile.rule.max_after_warmup)" 12 "the profile's threshold in the manifest"
expect_err "recompiled: jit(step) compiled 12 times" "a recompilation that is no storm is still named"

# --fail-on: a storm fails CI with a status of its own
run "$XL" run steps --fail-on=compile-storm -- sh -c "$STEPJOB" sh "$LINE"
expect_rc 79 "--fail-on=compile-storm"
expect_err "outcome 'compile-storm' is in --fail-on: exit 79" "said so"
run "$XL" run lenient --fail-on=compile-storm -- sh -c "$STEPJOB" sh "$LINE"
expect_rc 0 "--fail-on leaves an ok run alone"
run "$XL" run plain --fail-on=compile-storm -- sh -c 'exit 3'
expect_rc 3 "--fail-on keeps the child's own failure"
run "$XL" run plain --fail-on=ok -- true
expect_rc 64 "--fail-on=ok is a usage error"
run "$XL" help exit-codes
expect_out "79     fail-on" "79 in help exit-codes"

# The compile section is checked like the rest of a profile
printf 'description: x\ncompile: {warmup_step: 3}\n' >"$P/typo.yaml"
run "$XL" profile check typo
expect_rc 65 "unknown compile key"
expect_err "typo.yaml:2:11: unknown key 'warmup_step' in compile; did you mean 'warmup_steps'?" "did you mean, with the place"
printf 'description: x\ncompile: {step_pattern: "step ([0-9]+"}\n' >"$P/badre.yaml"
run "$XL" profile check badre
expect_rc 65 "a step pattern that is no regex"
expect_err "compile.step_pattern" "names the key"

# profile show --explain reads the store and creates nothing
XLAUNCH_STORE="$T/nostore/calib.db" run "$XL" profile show plain --explain
expect_rc 0 "show --explain without a store"
[ ! -e "$T/nostore" ] || fail "profile show created the store"
ok "rendering creates no store"

cd "$SRC"
venv=$(tools/venv.sh demo 2>"$T/venv.err") || { echo "real JAX part skipped: $(grep SKIP "$T/venv.err" | tail -1)"; done_ok; }
PY="$SRC/$venv/bin/python"
printf 'description: jax on the cpu\nenv: {JAX_PLATFORMS: cpu}\n' >"$P/jax.yaml"
cat >"$P/jaxlog.yaml" <<'Y'
description: jax on the cpu, compile logging on
extends: [jax, debug-recompile]
Y
# A 40-step shape drift lasting a few seconds, named by the function; the
# same job with one shape is ok
run "$XL" run jaxlog -- "$PY" examples/jax_shape_drift.py 40
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" compile-storm "40-step shape drift"
expect_err " recompiled 34 times after warm-up (step 5): " "xlaunch's line names the function"
expect_err "compile-storm (jit(step) (jax_shape_drift.py:" "with the place JAX's log gave"
expect_eq "$(python3 -c 'import json,sys; print([f["place"] for f in json.load(open(sys.argv[1]))["compile"]["functions"] if f["name"] == "jit(step)"][0])' "$m" | sed 's/.*\///')" "jax_shape_drift.py:75" "the manifest's place, from JAX's log"
expect_err "different input types: at x, now f32[55,8] and before" "and the new input shapes, in JAX's words"
expect_eq "$(python3 -c 'import json,sys; print([f["compiles"] for f in json.load(open(sys.argv[1]))["compile"]["functions"] if f["name"] == "jit(step)"][0])' "$m")" 40 "manifest: the function and its count"
expect_eq "$(jget "$m" compile_count)" "$(sed -n 's/^compiles: \([0-9]*\),.*/\1/p' "$T/out")" "counted as the job counted"
# (the job's length is the host's business: 35 s here with a load average
# of 10; the storm is named from the compilations' count and order alone)
echo "the storm took $(jget "$m" wall_s) s"
run "$XL" run jaxlog -- "$PY" examples/jax_shape_drift.py 40 --steady
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" ok "one shape is ok"
[ "$(jget "$m" first_step_s)" != None ] || fail "no time to the first step"
ok "time to the first step recorded"
# without compile logging the report helper's counts, by step, still see it
run "$XL" run jax -- "$PY" examples/jax_shape_drift.py 40
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" compile-storm "storm from the report helper's counts"
run "$XL" profile show jax --explain
expect_out "compile storm recorded for this profile without compile logging" "the store's storm is shown"
expect_out "extends debug-recompile" "with the debug profile to add"
run "$XL" profile show jaxlog --explain
expect_no_out "compile storm recorded" "not when the profile logs compilations"
done_ok
