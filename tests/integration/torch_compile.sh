# torch_compile.sh - torch.compile seen from outside the job, with nothing
# changed in the job, under the shipped torch-compile profile (TORCH_LOGS=
# recompiles,graph_breaks, Inductor's and Triton's caches on a local disk),
# with torch 2.9.0 from PyPI on the CPU (build/venv-torch).  Dynamo's
# behaviour is checked with the eager backend (its messages are Dynamo's,
# not Inductor's, at a tenth of the time); Inductor runs once cold and once
# warm, for the compile work its cache saves, measured.  CUDA and Triton are
# not exercised here: this machine has no GPU.
. "$(dirname "$0")/lib.sh"
cd "$SRC"
venv=$(tools/venv.sh torch 2>"$T/venv.err") || { cat "$T/venv.err"; skip "$(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"; }
PY="$SRC/$venv/bin/python"
P="$T/profiles"; mkdir -p "$P" "$T/tmp"
# TMPDIR: what Inductor would use without the profile, watched below
export XLAUNCH_PROFILE_PATH="$P:$SRC/profiles" XLAUNCH_STORE="$T/store/calib.db" \
	XLAUNCH_CACHE_ROOT="$T/cache" TMPDIR="$T/tmp"
unset TORCH_LOGS TORCHINDUCTOR_CACHE_DIR TRITON_CACHE_DIR
printf 'description: torch.compile on this CPU\nextends: [torch-compile]\n' >"$P/tc.yaml"
RUNS="$XDG_STATE_HOME/xlaunch/runs"
manifest() {
	id=$(grep -o ' run [0-9]\{8\}T[^ ]*' "$T/err" | tail -1 | sed 's/^ run //')
	[ -n "$id" ] && [ -f "$RUNS/$id/manifest.json" ] || fail "no run announced"
	echo "$RUNS/$id/manifest.json"
}
job() { run "$XL" run tc "$@"; }

# shape drift with static shapes: the recompile limit, the fallback to eager
job -- "$PY" examples/train_torch_compile.py --mode drift-static --backend eager
expect_rc 0 "the job itself exits 0"
expect_err "compile-storm (torch.compile hit its recompile limit (8) for forward (train_torch_compile.py:59): it runs uncompiled (eager) from then on; last reason: 0/7: tensor 'x' size mismatch at index 0. expected 15, actual 16)" "not ok, named as what it is"
python3 - "$(manifest)" <<'PY' || fail "drift-static record"
import json, sys
m = json.load(open(sys.argv[1]))
c = m["compile"]
assert m["outcome"] == "compile-storm" and c["storm_by"] == "recompile-limit", c["storm_by"]
lim = c["recompile_limit"][0]
assert lim["function"] == "forward" and lim["place"].endswith("examples/train_torch_compile.py:59"), lim
assert lim["last_reason"] == "0/7: tensor 'x' size mismatch at index 0. expected 15, actual 16", lim
assert lim["limit"] == 8 and lim["then"] == "runs uncompiled (eager)", lim
f = [f for f in c["functions"] if f["name"] == "forward"][0]
assert f["compiles"] == 8 and f["first_reason"].startswith("0/0: tensor 'x' size mismatch"), f
assert m["compile_count"] == 8 and c["recompilations"] == 7
assert m["env"]["TORCH_LOGS"] == "recompiles,graph_breaks"
PY
ok "the record names the function, its place and the last guard failure"
grep -q '\[__recompiles\] Recompiling function forward' "$(dirname "$(manifest)")/stderr.log" ||
	fail "TORCH_LOGS from the profile did not reach torch"
ok "the profile's TORCH_LOGS reached torch"

# a graph break: counted, with its place and reason
job -- "$PY" examples/train_torch_compile.py 4 --mode graph-break --backend eager
expect_rc 0 "graph break run"
expect_err "torch.compile: 1 graph break: train_torch_compile.py:64 (Unsupported Tensor.item() call with capture_scalar_outputs=False)" "the break, its place and reason"
expect_err "ok (exited 0)" "a graph break alone is ok"
python3 - "$(manifest)" <<'PY' || fail "graph-break record"
import json, sys
g = json.load(open(sys.argv[1]))["compile"]["graph_breaks"]
assert g["count"] == 1 and g["places"][0]["place"].endswith("examples/train_torch_compile.py:64"), g
assert g["places"][0]["reason"].startswith("Unsupported Tensor.item() call"), g
PY
ok "graph breaks in the record"

# automatic dynamic shapes: one recompilation, then none; ok
job -- "$PY" examples/train_torch_compile.py 4 --mode dynamic --backend eager
expect_rc 0 "dynamic run"
expect_err "ok (exited 0)" "settles on dynamic shapes: ok"
expect_err "2 compiles (1 recompilation)" "its one recompilation counted"
expect_err "recompiled: forward (train_torch_compile.py:59) compiled 2 times" "and named"

# Inductor, cold then warm: the caches go where the profile says, and the
# second launch's first step costs less.  Its CPU time is compared (the
# job's "first step cpu" line), not its wall time: with the load changing
# between the two launches (a load average from 150 to 450 here) the warm
# first step took 127.4 s and the cold one 126.7 s, while the CPU time,
# which a busy host stretches far less, was 2 to 3 times lower warm (13.8 s
# cold, 6.0 s warm with a load average of 16 to 160)
cpu_of() { sed -n 's/^first step cpu: \([0-9.]*\) s$/\1/p' "$T/out"; }
job -- "$PY" examples/train_torch_compile.py 3 --mode steady
expect_rc 0 "Inductor, cold cache"
cold=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["first_step_s"])' "$(manifest)")
cold_cpu=$(cpu_of)
# its compiled graphs, counted from the cache's new entries without TORCH_LOGS
# lines about them (the steady job logs no recompilation): as Dynamo counts
expect_eq "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["compile"]["inductor"]["graphs"])' "$(manifest)")" \
	"$(sed -n 's/^compiled graphs: \([0-9]*\),.*/\1/p' "$T/out")" "Inductor's graphs, counted from its cache"
expect_err "attempt 1/1: ok (exited 0)" "one graph is no storm"
[ -n "$(ls "$T/cache/inductor" 2>/dev/null)" ] || fail "nothing in the profile's TORCHINDUCTOR_CACHE_DIR"
ok "Inductor's cache is in the profile's directory"
[ -z "$(find "$T/tmp" -path '*torchinductor*' -name '*fxgraph*' 2>/dev/null)" ] || fail "Inductor wrote its FX graph cache under TMPDIR"
ok "nothing of the FX graph cache under TMPDIR"
job -- "$PY" examples/train_torch_compile.py 3 --mode steady
expect_rc 0 "Inductor, warm cache"
expect_err "2 persistent-cache hits" "the second launch finds its forward and backward graphs"
expect_eq "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["compile"]["inductor"]["graphs"])' "$(manifest)")" 0 \
	"a graph loaded from the warm cache writes no entry: none counted"
warm=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["first_step_s"])' "$(manifest)")
warm_cpu=$(cpu_of)
[ -n "$cold_cpu" ] && [ -n "$warm_cpu" ] || fail "the job printed no 'first step cpu' line"
below "$warm_cpu" "$cold_cpu" ||
	fail "the warm cache saved nothing: the first step took $cold_cpu s of CPU cold, $warm_cpu s warm"
ok "the first step: $(printf '%.1f s of CPU cold, %.1f s warm (%.1f s and %.1f s of time)' "$cold_cpu" "$warm_cpu" "$cold" "$warm")"
done_ok
