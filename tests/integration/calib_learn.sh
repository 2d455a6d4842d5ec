# calib_learn.sh - the learned prediction on a real JAX job (examples/
# train_wide.py, one step on the CPU) under an address-space limit, over a
# small ladder of micro batches given only as an environment value (the
# profile declares no model): three calibration launches teach a curve, here
# a line (or the power law XLA's buffers show, of exponent 1); an
# unseen member is predicted within 5% of what it then uses; members that
# cannot fit are predicted infeasible before they are launched, and really
# do not fit; a run over the whole frontier launches nothing that runs out of
# memory and starts with the largest member that fits.  Also: a profile
# without candidates is one implicit candidate everywhere.
. "$(dirname "$0")/lib.sh"
cd "$SRC"
venv=$(tools/venv.sh demo 2>"$T/venv.err") || { cat "$T/venv.err"; skip "$(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"; }
PY="$SRC/$venv/bin/python"
export XLAUNCH_STORE="$T/calib.db" XLAUNCH_PROFILE_PATH="$T/profiles" PYTHONDONTWRITEBYTECODE=1
mkdir -p "$T/profiles"
# 16k rows use about 0.8 GB of address space, every 16k more 0.2 GB
cat >"$T/profiles/frontier.yaml" <<'YAML'
description: the memory frontier of a wide JAX job on the CPU
extends: [xla-base]
env:
  JAX_PLATFORMS: cpu
  FEATURES: 1024
  # one malloc arena: glibc's per-thread arenas reserve address space in
  # 64 MiB steps, which an address-space limit counts
  MALLOC_ARENA_MAX: 1
limits:
  address_space: 2GiB
candidates:
  - {name: r192k, env: {MICRO_BATCH: 196608}}
  - {name: r160k, env: {MICRO_BATCH: 163840}}
  - {name: r96k, env: {MICRO_BATCH: 98304}}
  - {name: r80k, env: {MICRO_BATCH: 81920}}
  - {name: r48k, env: {MICRO_BATCH: 49152}}
  - {name: r32k, env: {MICRO_BATCH: 32768}}
  - {name: r16k, env: {MICRO_BATCH: 16384}}
YAML
# the job from outside any git work tree: named by its content, so that
# editing the source tree while the test runs changes nothing
cp "$SRC/examples/train_wide.py" "$T/train_wide.py"
JOB="$PY $T/train_wide.py 1"

run "$XL" probe --backend cpu --timeout $PROBE_LIMIT
expect_rc 0 "probe cpu"
# shellcheck disable=SC2086
run "$XL" calib predict frontier --json -- $JOB
expect_rc 0 "predict before anything is known"
python3 - "$T/out" <<'PY' || fail "nothing predicted yet"
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 7, rows
for r in rows:
    assert r["predicted_bytes"] is None and r["basis"] == "none" and r["feasible"] is None, r
    assert r["kind"] == "host_peak_vm" and r["limit_bytes"] == 2 << 30, r
    assert r["limit_source"] == "limits.address_space", r
PY
ok "no prediction without launches, and the limit is the address space"

for c in r16k r32k r48k; do
	# shellcheck disable=SC2086
	run "$XL" run -c $c frontier -- $JOB
	expect_rc 0 "calibration launch $c"
done

# shellcheck disable=SC2086
run "$XL" calib predict frontier --json -- $JOB
expect_rc 0 "predict after three launches"
cp "$T/out" "$T/predicted.json"
python3 - "$T/out" <<'PY' || fail "learned prediction"
import json, sys
rows = {r["candidate"]: r for r in json.load(open(sys.argv[1]))}
for c in ["r192k", "r160k", "r96k", "r80k"]:
    r = rows[c]
    assert r["basis"] == "learned" and r["points"] == 3, r
    assert r["scale_name"] == "env MICRO_BATCH", r
    assert r["error_bytes"] > 0 and r["predicted_bytes"] > 0, r
    assert r["fit"] and " x env MICRO_BATCH" in r["fit"], r
    assert r["summary"].startswith("learned from 3 launches: "), r
    cv = r["curve"]
    assert cv["shape"] == "affine" or (cv["shape"] == "xla-power" and abs(cv["exponent"] - 1) < 0.1), cv
assert rows["r80k"]["feasible"] is True and rows["r96k"]["feasible"] is True, rows
assert rows["r160k"]["feasible"] is False and rows["r192k"]["feasible"] is False, rows
PY
ok "a line fitted to the family, with its band and a verdict per candidate"
# shellcheck disable=SC2086
run "$XL" calib predict frontier -c r96k -- $JOB
expect_out "learned from 3 launches: " "the fit in one line"
expect_out "+/- " "with its error bar"

# shellcheck disable=SC2086
run "$XL" calib order frontier --json -- $JOB
expect_rc 0 "order"
python3 - "$T/out" <<'PY' || fail "order before the frontier run"
import json, sys
d = json.load(open(sys.argv[1]))
order = [(c["name"], c["place"]) for c in d["order"]]
# predicted to fit or known-good first, in the profile's order; infeasible
# ones after them
assert order[0] == ("r96k", "unseen") and order[1] == ("r80k", "unseen"), order
assert order[-2:] == [("r192k", "predicted-infeasible"), ("r160k", "predicted-infeasible")], order
PY
ok "infeasible members placed before any launch of them"

# the truth of one unseen member: within 5% of the prediction
# shellcheck disable=SC2086
run "$XL" run -c r80k frontier -- $JOB
expect_rc 0 "r80k fits"
run "$XL" calib history --profile frontier --limit 1 --json
python3 - "$T/out" "$T/predicted.json" <<'PY' || fail "prediction error"
import json, sys
last = json.load(open(sys.argv[1]))[0]
pred = {r["candidate"]: r for r in json.load(open(sys.argv[2]))}["r80k"]
assert last["candidate"] == "r80k" and last["observed_kind"] == "host_peak_vm", last
err = abs(pred["predicted_bytes"] - last["observed_bytes"]) / last["observed_bytes"]
print("r80k: predicted %d, observed %d, error %.1f%%" % (pred["predicted_bytes"], last["observed_bytes"], 100 * err))
assert err < 0.05, err
# recorded like for like, before the launch
assert last["predicted_kind"] == "host_peak_vm" and last["predicted_basis"] == "learned", last
PY
ok "an unseen member predicted within 5%"

# the whole frontier: skips what cannot fit, launches the largest that can
# shellcheck disable=SC2086
run "$XL" run --retry=oom frontier -- $JOB
expect_rc 0 "the frontier run ends ok"
expect_err "candidate 'r192k' is predicted infeasible" "said before launching"
expect_err "skipped (--try-infeasible launches it)" "and skipped"
expect_err "attempt 1/5: profile 'frontier' candidate 'r96k'" "the largest member predicted to fit goes first"
expect_err "attempt 1/5: ok" "and fits"
run "$XL" calib history --profile frontier --outcome oom --json
expect_eq "$(grep -c '"id"' "$T/out")" 0 "nothing launched ran out of memory"

# the skipped members really do not fit
# shellcheck disable=SC2086
run "$XL" run -c r160k --try-infeasible frontier -- $JOB
expect_rc 1 "r160k, launched anyway, fails"
expect_err "attempt 1/1: oom" "r160k runs out of memory: the skip was right"
# shellcheck disable=SC2086
run "$XL" run -c r192k frontier -- $JOB
expect_rc 77 "a pinned candidate predicted infeasible is refused"
expect_err "every candidate is predicted infeasible; --try-infeasible launches them anyway" "and says why"

# a profile without candidates is one implicit candidate
cat >"$T/profiles/plain.yaml" <<'YAML'
description: no candidates
env: {JAX_PLATFORMS: cpu}
YAML
run "$XL" calib order plain
expect_rc 0 "order of a profile without candidates"
expect_out "(profile)" "one row"
expect_out "only" "place only"
run "$XL" calib predict plain --json
expect_rc 0 "predict of a profile without candidates"
expect_out '"candidate": null' "the implicit candidate"
done_ok
