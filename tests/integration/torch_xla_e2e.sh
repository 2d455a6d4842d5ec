# torch_xla_e2e.sh - `make demo-torch-xla` end to end (tools/demo-torch-xla.sh
# with a temporary store and cache): real torch_xla 2.9.0 from PyPI on
# PJRT_DEVICE=CPU under the shipped cpu-torch-xla profile.  Checks that the
# profile's environment reached the runtime, that compilations are counted
# as torch_xla's own metric counts them, that a recompilation is caught and
# named, what the second launch found in the persistent cache (written,
# unreadable on this backend, with torch_xla's reason, said before and
# after), and that a storm is one, with --fail-on's status.
. "$(dirname "$0")/lib.sh"
cd "$SRC"
tools/venv.sh torch >/dev/null 2>"$T/venv.err" || { cat "$T/venv.err"; skip "$(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"; }
export XLAUNCH_STORE="$T/store/calib.db" XLAUNCH_CACHE_ROOT="$T/cache"
unset XLAUNCH_PROFILE_PATH PJRT_DEVICE XLA_PERSISTENT_CACHE_PATH PT_XLA_DEBUG_LEVEL
run sh tools/demo-torch-xla.sh "$XL"
expect_rc 0 "the demo runs"
cp "$T/out" "$T/demo.out"
section() { sed -n "/== $1\./,/== $(( $1 + 1 ))\./p" "$T/demo.out" >"$T/out"; }

section 1
expect_out "PJRT_DEVICE=CPU" "the profile sets the device"
expect_out "XLA_PERSISTENT_CACHE_PATH=$T/cache/torch_xla" "a local persistent cache"

section 2
expect_out "device: xla:0 (PJRT_DEVICE=CPU)" "the profile's device reached torch_xla"
expect_out "persistent cache: $T/cache/torch_xla" "the profile's cache path reached torch_xla"
expect_out "compiles: 2, persistent cache hits: 0, misses: 2, failed loads: 0" "torch_xla's metrics: two compilations"
expect_out "ok (exited 0)" "one late recompilation is no storm"
expect_out ", 2 compiles (1 recompilation)" "xlaunch counted two, one per compilation"
expect_out "recompiled: SyncTensorsGraph (train_torch_xla.py:99) compiled 2 times, the last after step 6: input 0 (p0.1) changed: f32[32,4] -> f32[33,4]" "the recompilation caught and named: the graph, the frame that built it, the input that changed"
expect_no_out "will be cold" "nothing to say before the first launch"

section 3
expect_out "the torch_xla compile cache in $T/cache/torch_xla will be cold: torch_xla 2.9.0 cannot read back what it writes with PJRT_DEVICE=CPU" "said before the second launch"
expect_out "failed loads: 2" "torch_xla's metrics: both entries failed to load"
expect_out "written but cannot be read back here (2 failed loads: \"UNIMPLEMENTED: Deserializing serialized executable not supported.\")" "said after, with torch_xla's reason"
expect_out ", 2 failed cache loads" "in the summary line"

section 4
expect_out "compile-storm (SyncTensorsGraph (train_torch_xla.py:99) recompiled " "a compilation every step is a storm, named"
expect_out "compiles: 20," "torch_xla counted twenty"
expect_out ", 20 compiles, " "xlaunch counted twenty (a storm's line has its one count of recompilations)"
expect_out "exit status with --fail-on=compile-storm: 79" "--fail-on"

# the record of the storm: manifest fields
id=$(grep -o "run [0-9]\{8\}T[^ ]*" "$T/demo.out" | tail -1 | sed 's/^run //')
m="$XDG_STATE_HOME/xlaunch/runs/$id/manifest.json"
python3 - "$m" "$T/cache/torch_xla" <<'PY' || fail "manifest of the storm"
import json, sys
m = json.load(open(sys.argv[1]))
c = m["compile"]
assert m["outcome"] == "compile-storm" and m["compile_count"] == 20, m["outcome"]
assert m["env"]["XLA_PERSISTENT_CACHE_PATH"] == sys.argv[2], m["env"]
# the dump's program, with the frame and the graphs its lines named
f = [f for f in c["functions"] if f["name"] == "SyncTensorsGraph"][0]
assert f["runtime"] == "torch_xla" and f["graphs"] == 20 and f["place"].endswith("examples/train_torch_xla.py:99"), f
assert f["from_output"] == 20 and f["from_dump"] == 20 and f["inputs"]["changes"][0]["changes"] == 19, f
assert c["cache"]["failed_loads"] == 2 and c["cache"]["failed_load_reason"].startswith("UNIMPLEMENTED"), c["cache"]
assert c["storm_by"] == "steps" and c["steps"]["source"] == "report", c["steps"]
assert m["first_step_s"] > 0
PY
ok "the manifest names the function, its graphs, the failed loads and the steps"
done_ok
