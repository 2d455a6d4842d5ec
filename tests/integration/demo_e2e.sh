# demo_e2e.sh - the demo's flow as a test, with a temporary store and cache:
# a real JAX job under cpu-jax sees 4 devices, the oversized candidate fails
# with a real allocation error, is classified oom and retried; the next launch
# tries the known-good candidate first and loads its programs from the
# persistent cache, which the dump flags xlaunch adds leave warm; every
# attempt records its figures by kind (the process group's address space and
# resident memory, XLA's buffers from its own report, the failed allocation),
# and the second launch is predicted like for like.
. "$(dirname "$0")/lib.sh"
cd "$SRC"
venv=$(tools/venv.sh demo 2>"$T/venv.err") || { cat "$T/venv.err"; skip "$(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"; }
PY="$SRC/$venv/bin/python"
export XLAUNCH_STORE="$T/calib.db" XLAUNCH_CACHE_ROOT="$T/cache" PYTHONDONTWRITEBYTECODE=1
unset XLAUNCH_PROFILE_PATH
cd "$T"   # profiles come from the data directory, as for an installed xlaunch

run "$XL" probe --backend cpu --timeout $PROBE_LIMIT
expect_rc 0 "probe cpu"
run "$PY" "$SRC/examples/train_mlp.py" 1 --micro-batch 8
expect_out "devices: 1" "without xlaunch the job sees one device"

run "$XL" run cpu-jax -- "$PY" "$SRC/examples/train_mlp.py"
expect_rc 0 "the ladder ends ok"
expect_out "devices: 4" "XLA_FLAGS reached the runtime before it started"
expect_err "attempt 1/2: profile 'cpu-jax' candidate 'mb2m' (unseen)" "first the oversized candidate"
# ended as soon as XLA's report for the step is read (early OOM); on a
# host where the runtime fails to allocate before that, its own words
if grep -q "attempt 1/2: oom (compiler: " "$T/err"; then
	expect_err "attempt 1/2: oom (compiler: jit(train_step) needs 12.2 GiB of 8.0 GiB (limits.address_space" \
		"ended at the compile, classified oom with the compiler's figure"
else
	expect_err "attempt 1/2: oom (xla-oom: " "a real allocation error, classified oom"
	expect_err "RESOURCE_EXHAUSTED: Out of memory" "the runtime's own words"
fi
expect_err "outcome 'oom' is in --retry: trying the next candidate" "retried"
expect_err "attempt 2/2: ok" "the next candidate succeeds"

run "$XL" calib order cpu-jax --json
cp "$T/out" "$T/order.json"
python3 - "$T/out" <<'PY' || fail "order after the first launch"
import json, sys
d = json.load(open(sys.argv[1]))
order = [(c["name"], c["place"]) for c in d["order"]]
assert order == [("mb256", "known-good"), ("mb2m", "known-bad")], order
# the known-bad candidate's figure is what it failed with (XLA's buffers as
# its report gave them, or the allocation refused), never a curve's
bad = [c for c in d["order"] if c["name"] == "mb2m"][0]
assert bad["kind"] in ("xla_buffers", "oom_request"), bad
assert bad["predicted_bytes"] and bad["predicted_bytes"] > 0, bad
assert bad["feasible"] is None, bad   # the place is the verdict: known-bad, last
assert bad["summary"].startswith("failed with "), bad
assert ("the compiler needed " in bad["reason"]) == (bad["kind"] == "xla_buffers"), bad
PY
ok "known-bad ordered last, with what it failed with"
run "$XL" calib history --profile cpu-jax --json
python3 - "$T/out" "$T/order.json" <<'PY' || fail "the known-bad figure is the attempt's own"
import json, sys
rows = json.load(open(sys.argv[1]))
order = json.load(open(sys.argv[2]))["order"]
shown = [c for c in order if c["name"] == "mb2m"][0]
bad = [r for r in rows if r["outcome"] == "oom"][0]
figs = {f["kind"]: f["bytes"] for f in bad["figures"] if f["role"] == "observed"}
want = figs.get("xla_buffers") or figs.get("oom_request")
assert want and shown["predicted_bytes"] == want, (shown["predicted_bytes"], figs)
PY
ok "the figure shown is the failed attempt's own"

run "$XL" run cpu-jax -- "$PY" "$SRC/examples/train_mlp.py"
expect_rc 0 "second launch ok"
expect_err "attempt 1/2: profile 'cpu-jax' candidate 'mb256' (known-good" "the first attempt is the known-good candidate"
expect_no_out "mb2m" "the known-bad candidate is not tried"
expect_out "compiles: 0, persistent cache hits: 5" "the second launch loads every program from the persistent cache"
expect_err ", 0 compiles, 5 persistent-cache hits" "xlaunch saw the restart evidence in the report"

run "$XL" calib history --profile cpu-jax --json
python3 - "$T/out" <<'PY' || fail "history records"
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 3, len(rows)
assert [r["outcome"] for r in rows] == ["ok", "ok", "oom"], rows
def fig(r, kind, role="observed"):
    f = [f for f in r["figures"] if f["kind"] == kind and f["role"] == role]
    return f[0] if f else None
for r in rows:
    # judged against limits.address_space: the address space is the headline
    assert r["observed_kind"] == "host_peak_vm" and r["observed_bytes"] > 0, r
    assert fig(r, "host_peak_rss")["bytes"] > 0, r
    # the kernel's, where the launch has a cgroup of its own, else sampled
    src = fig(r, "host_peak_rss")["source"]
    assert "process group" in src or "the kernel: cgroup v" in src, r
oom, first, second = rows[2], rows[1], rows[0]
assert oom["candidate"] == "mb2m" and second["candidate"] == "mb256"
# the failed allocation, in the runtime's own words, and XLA's buffers
# ended at the compile (early OOM), the runtime never got to fail; else
# its failed allocation
assert fig(oom, "oom_request") is None or fig(oom, "oom_request")["bytes"] == 12918464632, oom
assert fig(oom, "xla_buffers")["bytes"] > 12918464632, oom
assert fig(first, "xla_buffers")["bytes"] > 0, first
assert "jit_train_step" in first["details"]["xla_modules"], first
# the second launch compiled nothing: the figure is the last one, marked so
assert second["compile_count"] == 0, second
xb = fig(second, "xla_buffers")
assert xb["bytes"] == fig(first, "xla_buffers")["bytes"], (xb, first)
assert "persistent-cache hit" in xb["source"] and first["id"] in xb["source"], xb
# and it was predicted before it ran, like for like, from the first launch
assert second["predicted_kind"] == "host_peak_vm" and second["predicted_basis"] == "learned", second
assert abs(second["predicted_bytes"] - first["observed_bytes"]) < 1, second
assert first["predicted_bytes"] is None, first   # nothing was known then
PY
ok "figures by kind recorded for every attempt"
done_ok
