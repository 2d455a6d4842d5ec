# runtime_output.sh - what the runtimes really print about compilation
# (tests/data/runtime-output/, made by tools/runtime-output.sh from the
# example jobs) replayed through `xlaunch run`: one compilation is counted per
# real compilation, as the job itself counted them (jax.monitoring, torch_xla's
# CompileTime metric), however many lines the runtime prints about each.  The
# torch.compile captures are checked for the lines the notes in
# tests/bench/TORCH-NOTES.md quote; the captures of a two-process JAX job that
# ends without its final barrier give outcomes that name the rank that left.
. "$(dirname "$0")/lib.sh"
D="$SRC/tests/data/runtime-output"
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P" XLAUNCH_STORE="$T/store/calib.db"
RUNS="$XDG_STATE_HOME/xlaunch/runs"
printf 'description: no settings\nenv: {PLAIN: yes}\n' >"$P/plain.yaml"

# replay FILE: a child that prints the capture (less its header line) on
# stderr; sets $count to the compile_count of its manifest
replay() {
	run "$XL" run plain -- sh -c 'tail -n +2 "$1" >&2' sh "$D/$1"
	expect_rc 0 "$1 replayed"
	id=$(grep -o ' run [0-9]\{8\}T[^ ]*' "$T/err" | tail -1 | sed 's/^ run //')
	[ -n "$id" ] && [ -f "$RUNS/$id/manifest.json" ] || fail "$1: no manifest announced"
	count=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["compile_count"])' "$RUNS/$id/manifest.json")
}
# the job's own count of real compilations: "compiles: N, ..." in the capture
job_count() { sed -n 's/^compiles: \([0-9]*\),.*/\1/p' "$D/$1"; }
lines() { grep -cF -- "$2" "$D/$1" || true; }

for f in jax-drift-nocache.txt jax-steady-cold.txt jax-steady-warm.txt jax-drift-cold.txt \
	jax-drift-warm.txt jax-steady-not-written.txt ptxla-debug1-steady.txt ptxla-debug1-late-recompile.txt \
	ptxla-debug2-late-recompile.txt ptxla-debug1-storm.txt ptxla-cache-third-launch-debug1.txt; do
	[ -f "$D/$f" ] || fail "missing capture $f"
	want=$(job_count "$f")
	[ -n "$want" ] || fail "$f: the job's count line is missing"
	replay "$f"
	expect_eq "$count" "$want" "$f: compilations counted as the job counted them"
done

# The counts themselves: a storm, one late recompilation, a warm cache.
expect_eq "$(job_count jax-drift-cold.txt)" 42 "JAX drift: 40 step programs and 2 helpers compiled"
expect_eq "$(job_count jax-drift-warm.txt)" 0 "JAX drift, warm cache: nothing compiled"
expect_eq "$(lines jax-drift-warm.txt 'Persistent compilation cache hit for')" 42 "JAX drift, warm cache: 42 hits"
expect_eq "$(lines jax-steady-not-written.txt "Not writing persistent cache entry for ")" 3 "JAX says why nothing was written (1 s minimum compile time)"
expect_eq "$(job_count ptxla-debug1-late-recompile.txt)" 2 "torch_xla: one late recompilation"
expect_eq "$(job_count ptxla-debug1-storm.txt)" 20 "torch_xla: a compilation every step"
n=$(lines ptxla-debug1-storm.txt 'Compilation Analysis:')
[ "$n" -ge 200 ] || fail "torch_xla storm: $n 'Compilation Analysis:' lines, expected about 20 per compilation"
ok "torch_xla prints many 'Compilation Analysis:' lines per compilation ($n for 20)"

# torch_xla on the CPU: the persistent cache is written, then unreadable.
for f in ptxla-cache-second-launch.txt ptxla-cache-third-launch-debug1.txt; do
	expect_eq "$(lines $f 'Failed to deserialize executable: UNIMPLEMENTED: Deserializing serialized executable not supported.')" 1 "$f: the load fails, in torch_xla's words"
done
grep -q '^compiles: 1, persistent cache hits: 0, misses: 0, failed loads: 1$' "$D/ptxla-cache-second-launch.txt" ||
	fail "second launch: torch_xla's metrics should show one failed load and a compilation"
ok "second launch: a failed load, then a compilation"

# torch.compile: the recompile limit, the fallback, graph breaks, dynamic shapes.
expect_eq "$(lines torch-compile-drift-static.txt 'torch._dynamo hit config.recompile_limit (8)')" 1 "limit warning without any logging"
expect_eq "$(lines torch-compile-drift-static.txt "function: 'forward' (")" 1 "the limit names the function"
expect_eq "$(lines torch-compile-drift-static.txt "last reason: 0/7: tensor 'x' size mismatch at index 0. expected 15, actual 16")" 1 "the limit names the last guard failure"
expect_eq "$(lines torch-compile-drift-static.txt '[__recompiles]')" 0 "no recompile lines without TORCH_LOGS"
expect_eq "$(lines torch-compile-drift-static-logs.txt '[__recompiles] Recompiling function forward in')" 8 "TORCH_LOGS=recompiles: 8 recompile lines (7 compiled, the 8th hits the limit)"
expect_eq "$(lines torch-compile-drift-static-logs.txt 'compiled graphs: 8, graph breaks: 0')" 1 "Dynamo compiled 8 graphs"
expect_eq "$(lines torch-compile-drift-static-dynamo.txt '] Step 2: calling compiler function inductor')" 8 "TORCH_LOGS=dynamo: one line per compilation, the first included"
expect_eq "$(lines torch-compile-drift-static-dynamo.txt "WON'T CONVERT forward ")" 1 "TORCH_LOGS=dynamo: the function left uncompiled"
expect_eq "$(lines torch-compile-dynamic-logs.txt '[__recompiles] Recompiling function forward in')" 1 "automatic dynamic: one recompilation"
expect_eq "$(lines torch-compile-dynamic.txt 'recompile_limit')" 0 "automatic dynamic: no limit"
expect_eq "$(lines torch-compile-graph-break.txt 'Graph break from `Tensor.item()`, consider setting:')" 1 "graph break warned about by default"
expect_eq "$(lines torch-compile-graph-break-logs.txt '[__graph_breaks] Graph break in user code at ')" 1 "TORCH_LOGS=graph_breaks: the place"
expect_eq "$(lines torch-compile-graph-break-logs.txt '[__graph_breaks] Graph Break Reason: Unsupported Tensor.item() call')" 1 "TORCH_LOGS=graph_breaks: the reason"
for f in torch-compile-steady.txt torch-compile-steady-logs.txt; do
	expect_eq "$(tail -n +2 "$D/$f" | grep -c 'recompile\|Graph break' || true)" 0 "$f: nothing about recompiles or breaks"
done

# A two-process JAX job whose ranks end without the final barrier (the
# jax-ranks-* captures): each rank's capture replayed under `xlaunch run`,
# ending as the rank ended (its "(exit status N)" line: 134 is SIGABRT).  A
# rank stopped by another rank's exit names that in its outcome line.
# outcome_of FILE: the outcome line of the replay, in $T/outcome
outcome_of() {
	st=$(sed -n 's/^(exit status \([0-9]*\))$/\1/p' "$D/$1")
	st=${st:-0}
	run "$XL" run plain -- sh -c 'tail -n +2 "$1" >&2; if [ "$2" -gt 128 ]; then kill -s "$(kill -l "$2")" $$; fi; exit "$2"' sh "$D/$1" "$st"
	expect_rc "$st" "$1 replayed with its status"
	grep 'attempt 1/1: ' "$T/err" >"$T/outcome" || fail "$1: no outcome line"
}
outcome_of jax-ranks-no-barrier-rank0-leaves-rank1.txt
grep -qF "attempt 1/1: crash (another rank's exit closed the distributed runtime's coordination service" "$T/outcome" ||
	{ cat "$T/outcome"; fail "rank 1 stranded by rank 0's exit: its outcome names the closed service"; }
grep -qF "killed by signal 6 (Aborted); jax-service-closed: " "$T/outcome" || { cat "$T/outcome"; fail "the status and the pattern named"; }
ok "rank 1 stranded by rank 0's exit: the outcome names the closed coordination service"
outcome_of jax-ranks-no-barrier-rank1-leaves-rank0.txt
grep -qF "attempt 1/1: error (a collective failed because another rank's process had exited" "$T/outcome" ||
	{ cat "$T/outcome"; fail "rank 0's failed barrier names the peer's exit"; }
ok "rank 0's failed final barrier: the outcome names the peer's exit"
outcome_of jax-ranks-no-barrier-rank1-leaves-wait-rank0.txt
grep -qF "attempt 1/1: crash (another rank left the job without jax.distributed.shutdown() or died" "$T/outcome" ||
	{ cat "$T/outcome"; fail "rank 0 ended by the service: the outcome names the peer"; }
ok "rank 0 ended by the coordination service: the outcome names the rank that left"
for f in jax-ranks-clean-rank0.txt jax-ranks-clean-rank1.txt jax-ranks-no-barrier-rank0-leaves-rank0.txt; do
	outcome_of "$f"
	grep -qF "attempt 1/1: ok (exited 0)" "$T/outcome" || { cat "$T/outcome"; fail "$f: ok"; }
	expect_eq "$(tail -n +2 "$D/$f" | grep -c 'coordination service\|Gloo [A-Za-z]* failed' || true)" 0 "$f: nothing about a lost peer"
done
done_ok
