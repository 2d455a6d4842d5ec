# demo_e2e.sh - the demo's flow as a test, with a temporary store and cache:
# a real JAX job under cpu-jax sees 4 devices, the oversized candidate fails
# with a real allocation error, is classified oom and retried; the next launch
# tries the known-good candidate first and loads its programs from the
# persistent cache; predicted and observed bytes are recorded for every attempt.
. "$(dirname "$0")/lib.sh"
cd "$SRC"
venv=$(tools/venv.sh demo 2>"$T/venv.err") || { cat "$T/venv.err"; skip "$(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"; }
PY="$SRC/$venv/bin/python"
export XLAUNCH_STORE="$T/calib.db" XLAUNCH_CACHE_ROOT="$T/cache" PYTHONDONTWRITEBYTECODE=1
unset XLAUNCH_PROFILE_PATH
cd "$T"   # profiles come from the data directory, as for an installed xlaunch

run "$XL" probe --backend cpu
expect_rc 0 "probe cpu"
run "$PY" "$SRC/examples/train_mlp.py" 1 --micro-batch 8
expect_out "devices: 1" "without xlaunch the job sees one device"

run "$XL" run cpu-jax -- "$PY" "$SRC/examples/train_mlp.py"
expect_rc 0 "the ladder ends ok"
expect_out "devices: 4" "XLA_FLAGS reached the runtime before it started"
expect_err "attempt 1/2: profile 'cpu-jax' candidate 'mb2m' (unseen)" "first the oversized candidate"
expect_err "attempt 1/2: oom (xla-oom: " "a real allocation error, classified oom"
expect_err "RESOURCE_EXHAUSTED: Out of memory" "the runtime's own words"
expect_err "outcome 'oom' is in --retry: trying the next candidate" "retried"
expect_err "attempt 2/2: ok" "the next candidate succeeds"

run "$XL" calib order cpu-jax --json
python3 - "$T/out" <<'PY' || fail "order after the first launch"
import json, sys
d = json.load(open(sys.argv[1]))
order = [(c["name"], c["place"]) for c in d["order"]]
assert order == [("mb256", "known-good"), ("mb2m", "known-bad")], order
PY
ok "known-bad ordered last"

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
for r in rows:
    assert r["predicted_bytes"] and r["predicted_bytes"] > 0, r
    assert r["observed_bytes"] and r["observed_bytes"] > 0, r
assert rows[2]["candidate"] == "mb2m" and rows[0]["candidate"] == "mb256"
assert rows[0]["compile_count"] == 0, rows[0]
PY
ok "predicted and observed bytes recorded for every attempt"
done_ok
