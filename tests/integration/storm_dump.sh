# storm_dump.sh - compile storms seen from outside, with no compile logging
# and nothing changed in the job: real JAX jobs on the CPU under the shipped
# cpu-jax profile (examples/jax_recompile.py: a new program every step, one
# shape, a new shape every eight steps, a storm in one function beside a
# steady one, a steady job with a slow exit), their compilations read from
# XLA's dump that `run` adds, counted as JAX's own log counts them, the
# function and the changing input named; the dump pruned and bounded; a warm
# persistent cache (loads, not compilations); then torch_xla 2.9.0
# (build/venv-torch), a storm and a steady job.
. "$(dirname "$0")/lib.sh"
cd "$SRC"
venv=$(tools/venv.sh demo 2>"$T/venv.err") || { cat "$T/venv.err"; skip "$(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"; }
PY="$SRC/$venv/bin/python"
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P:$SRC/profiles" XLAUNCH_STORE="$T/store/calib.db"
unset JAX_LOG_COMPILES JAX_EXPLAIN_CACHE_MISSES JAX_COMPILATION_CACHE_DIR PT_XLA_DEBUG_LEVEL TORCH_LOGS
fnget() {  # fnget MANIFEST FUNCTION FIELD
	python3 -c 'import json,sys; f=[f for f in json.load(open(sys.argv[1]))["compile"]["functions"] if f["name"] == sys.argv[2]]
print(f[0][sys.argv[3]] if f else "none")' "$1" "$2" "$3"
}
n=0
job() {  # job MODE [ARG...]: under cpu-jax with a compile cache of its own (cold)
	n=$((n + 1))
	XLAUNCH_CACHE_ROOT="$T/cache-$n" run "$XL" run cpu-jax -c mb256 -- "$PY" examples/jax_recompile.py "$@"
	expect_rc 0 "$* exits 0"
}
# the profile asks for no compile logging
run "$XL" env cpu-jax -c mb256 --format json
! grep -q 'JAX_LOG_COMPILES\|JAX_EXPLAIN_CACHE_MISSES' "$T/out" || fail "cpu-jax logs compilations"
ok "cpu-jax logs no compilation"

# a new program every step: a storm, the function and its input named
job drift 40
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" compile-storm "every-step drift"
expect_err "compile-storm (jit(train_step) recompiled " "the function in xlaunch's line"
expect_err "input 1 (x.1) changed at every recompilation: f32[100,64] -> f32[101,64] -> ... -> f32[139,64]" "and the input that changed, with its shapes"
expect_eq "$(jget "$m" compile.from_output)" 0 "no compile line was printed"
expect_eq "$(jget "$m" compile.from_dump)" 42 "every compilation from the dump"
expect_eq "$(fnget "$m" 'jit(train_step)' compiles)" 40 "the function's count"
count=$(jget "$m" compile_count)
# JAX's own count of the same job, logged, outside xlaunch, no cache
JAX_PLATFORMS=cpu JAX_LOG_COMPILES=1 "$PY" examples/jax_recompile.py drift 40 >"$T/jaxlog" 2>&1 || fail "the job alone"
expect_eq "$count" "$(grep -c 'Finished XLA compilation of ' "$T/jaxlog")" "the count is JAX's own"
expect_eq "$(grep -c 'Finished XLA compilation of jit(train_step) ' "$T/jaxlog")" 40 "JAX's count of the function"
# ... and under xlaunch with the log on as well: the same compilations once
printf 'description: cpu-jax, compile logging on\nextends: [cpu-jax]\nenv: {JAX_LOG_COMPILES: 1}\n' >"$P/jaxlog.yaml"
n=$((n + 1))
XLAUNCH_CACHE_ROOT="$T/cache-$n" run "$XL" run jaxlog -c mb256 -- "$PY" examples/jax_recompile.py drift 40
m=$(announced_manifest)
expect_eq "$(jget "$m" compile_count)" "$count" "the log and the dump together count each compilation once"
expect_eq "$(jget "$m" compile.from_output)" "$count" "the log saw them all"
expect_eq "$(jget "$m" compile.from_dump)" "$count" "so did the dump"

# the dump stays small: the first and the latest of each program kept
dump=$(dirname "$m")/xla-dump
kept=$(find "$dump" -type f | wc -l)
[ "$kept" -le 12 ] || fail "$kept files kept in the dump"
expect_eq "$(jget "$m" xla_dump.read.kept.files)" "$kept" "the manifest says what was kept"
[ "$(jget "$m" xla_dump.read.dropped.files)" -gt 400 ] || fail "the dropped files not counted"
ok "the dump pruned to $kept files ($(du -sk "$dump" | cut -f1) KiB)"
[ "$(jget "$m" xla_dump.modules.jit_train_step)" -gt 0 ] || fail "no memory report"
ok "the memory reports read from the same dump"

# one shape: ok
job steady 40
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" ok "one shape is ok"
expect_eq "$(fnget "$m" 'jit(train_step)' compiles)" 1 "compiled once"
# ... however long its exit takes
job steady 40 --exit-sleep 6
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" ok "steady, then a slow exit, is ok"
# a new shape every eight steps, all through the run: the slow form
job sparse 200 --every 8
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" compile-storm "a recompilation every so often"
expect_eq "$(fnget "$m" 'jit(train_step)' compiles)" 25 "one every eight steps"
# a storm in one function beside a steady one: the right one named
job beside 40
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" compile-storm "a storm beside a steady function"
expect_err "compile-storm (jit(eval_step) recompiled " "the storming function named"
expect_eq "$(fnget "$m" 'jit(train_step)' compiles)" 1 "the steady one compiled once"
# the same drift with its compile cache warm: programs loaded, not compiled
XLAUNCH_CACHE_ROOT="$T/cache-1" run "$XL" run cpu-jax -c mb256 -- "$PY" examples/jax_recompile.py drift 40
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" ok "a warm cache compiles nothing"
expect_eq "$(jget "$m" compile_count)" 0 "no compilation"
expect_eq "$(jget "$m" cache_hits)" 42 "every program loaded from the cache, seen in the dump"

# torch_xla: its graphs are modules of the same dump
tvenv=$(tools/venv.sh torch 2>"$T/venv.err") || { echo "torch_xla part skipped: $(grep SKIP "$T/venv.err" | tail -1)"; done_ok; }
TPY="$SRC/$tvenv/bin/python"
printf 'description: torch_xla on the cpu, nothing logged\nenv: {PJRT_DEVICE: CPU}\n' >"$P/ptx.yaml"
run "$XL" run ptx -- "$TPY" examples/train_torch_xla.py 16 --shape-every-step
expect_rc 0 "torch_xla drift exits 0"
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" compile-storm "torch_xla: a new graph every step"
expect_err "compile-storm (SyncTensorsGraph recompiled " "the graph named"
expect_err "input 0 (p0.1) changed at every recompilation: f32[32,4] -> f32[33,4] -> ... -> f32[47,4]" "with the input that changed"
expect_eq "$(jget "$m" compile_count)" "$(sed -n 's/^compiles: \([0-9]*\),.*/\1/p' "$T/out")" "the count is torch_xla's own"
run "$XL" run ptx -- "$TPY" examples/train_torch_xla.py 16
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" ok "torch_xla: one graph"
expect_eq "$(jget "$m" compile_count)" 1 "compiled once"
done_ok
