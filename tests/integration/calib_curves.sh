# calib_curves.sh - prediction where memory is not a straight line, on a real
# JAX job on the CPU (examples/train_attention.py: attention without a fused
# kernel, a score matrix of batch x heads x seq x seq) under an address-space
# limit of 4 GiB.  Three launches (seq 512, 1024, 2048) teach the family; the
# line fails its left-out sizes, XLA's buffers grow as seq^1.9, and the curve
# chosen predicts the next unseen rung (seq 3072, then launched) within 10%,
# inside its band; the rung that needs more than twice the limit (seq 8192:
# XLA itself, compiling it without running it, says its buffers alone take
# more) is predicted-infeasible before anything of it is launched, and a run
# pinned to it is refused.  calib predict, order and report say which curve
# and why.
. "$(dirname "$0")/lib.sh"
cd "$SRC"
venv=$(tools/venv.sh demo 2>"$T/venv.err") || { cat "$T/venv.err"; skip "$(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"; }
PY="$SRC/$venv/bin/python"
export XLAUNCH_STORE="$T/calib.db" XLAUNCH_PROFILE_PATH="$T/profiles" PYTHONDONTWRITEBYTECODE=1
mkdir -p "$T/profiles"
cat >"$T/profiles/attn.yaml" <<'YAML'
description: attention without a fused kernel, over sequence lengths
extends: [xla-base]
env:
  JAX_PLATFORMS: cpu
  MALLOC_ARENA_MAX: 1
limits:
  address_space: 4GiB
signature:
  train: {micro_batch: 1}
candidates:
  - {name: s8192, env: {SEQ: 8192}, signature: {model: {seq: 8192}}}
  - {name: s6144, env: {SEQ: 6144}, signature: {model: {seq: 6144}}}
  - {name: s3072, env: {SEQ: 3072}, signature: {model: {seq: 3072}}}
  - {name: s2048, env: {SEQ: 2048}, signature: {model: {seq: 2048}}}
  - {name: s1024, env: {SEQ: 1024}, signature: {model: {seq: 1024}}}
  - {name: s512, env: {SEQ: 512}, signature: {model: {seq: 512}}}
YAML
# the job from outside any git work tree: named by its content
cp "$SRC/examples/train_attention.py" "$T/train_attention.py"
JOB="$PY $T/train_attention.py 1"

run "$XL" probe --backend cpu --timeout $PROBE_LIMIT
expect_rc 0 "probe cpu"
for c in s512 s1024 s2048; do
	# shellcheck disable=SC2086
	run "$XL" run -c $c attn -- $JOB
	expect_rc 0 "calibration launch $c"
done

# shellcheck disable=SC2086
run "$XL" calib predict attn --json -- $JOB
expect_rc 0 "predict after three launches"
cp "$T/out" "$T/predicted.json"
python3 - "$T/out" <<'PY' || fail "curves predicted"
import json, sys
rows = {r["candidate"]: r for r in json.load(open(sys.argv[1]))}
limit = 4 << 30
for c in ("s3072", "s6144", "s8192"):
    r = rows[c]
    cv = r["curve"]
    assert r["basis"] == "learned" and r["points"] == 3, r
    assert r["scale_name"] == "tokens (micro_batch x seq)", r
    # the line is not chosen: it missed its left-out sizes by far
    assert cv["shape"] in ("quadratic", "power", "xla-power"), cv
    tried = {t["shape"]: t for t in cv["tried"]}
    assert tried["affine"]["judged"] and tried["affine"]["loo_error"] > 0.1, tried
    assert not tried["affine"]["contender"], tried
    assert cv["why"].startswith(cv["shape"]) and "affine" in cv["why"], cv
    assert cv["sizes"] == 3 and cv["reach"] > 0, cv
    # XLA's buffers, fitted on the three launches, grow as a curve, and
    # are predicted for the program before it is ever compiled
    comp = r["compiler"]
    assert comp and 1.6 < comp["exponent"] < 2.1 and not comp["exponent_lower_bound"], comp
    assert comp["predicted_bytes"] > 0 and comp["sizes"] == 3, comp
    assert "XLA's buffers grow as x^" in cv["why"], cv
print("s3072: %s, %s" % (rows["s3072"]["summary"], rows["s3072"]["curve"]["why"]))
s3 = rows["s3072"]
assert s3["feasible"] is True and s3["near_limit"] is False, s3
assert s3["predicted_bytes"] + s3["error_bytes"] <= limit, s3
# more than twice the limit: infeasible, the bottom of the band above it
for c in ("s6144", "s8192"):
    r = rows[c]
    assert r["feasible"] is False and r["predicted_bytes"] - r["error_bytes"] > limit, r
assert rows["s8192"]["predicted_bytes"] > 2 * limit, rows["s8192"]
PY
ok "the curve of the family: not a line, chosen and said why"

# shellcheck disable=SC2086
run "$XL" calib predict attn -c s3072 -- $JOB
expect_out "learned from 3 launches: " "the curve in one line"
expect_out "  curve  " "which curve and why"
expect_out "  compiler  " "XLA's buffers before compiling"
expect_out "fits               yes: predicted " "a verdict"
# shellcheck disable=SC2086
run "$XL" calib order attn --json -- $JOB
expect_rc 0 "order"
python3 - "$T/out" <<'PY' || fail "order"
import json, sys
order = json.load(open(sys.argv[1]))["order"]
places = [(c["name"], c["place"]) for c in order]
assert places[0] == ("s3072", "unseen"), places
assert ("s8192", "predicted-infeasible") in places and ("s6144", "predicted-infeasible") in places, places
s8 = [c for c in order if c["name"] == "s8192"][0]
assert s8["curve"] and s8["curve_why"] and "curve)" in s8["reason"], s8
PY
ok "infeasible rungs placed last, with the curve in the reason"

# XLA itself says seq 8192 needs more than twice the limit: compiled for
# its shapes without running it
run env JAX_PLATFORMS=cpu SEQ=8192 "$PY" "$T/train_attention.py" --memory-analysis
expect_rc 0 "XLA's own figure for seq 8192"
total=$(sed -n 's/.*total \([0-9]*\) bytes.*/\1/p' "$T/out")
[ "${total:-0}" -gt $((2 * (4 << 30))) ] || fail "seq 8192 was to need twice the limit, XLA says $total bytes"
ok "seq 8192 needs $total bytes of buffers, more than twice 4 GiB"
# and the compiler's figure xlaunch predicted for it from the three smaller
# programs, before it was ever compiled, is XLA's own within 10%
python3 - "$T/predicted.json" "$total" <<'PY' || fail "the predicted compiler figure of s8192"
import json, sys
rows = {r["candidate"]: r for r in json.load(open(sys.argv[1]))}
pred, xla = rows["s8192"]["compiler"]["predicted_bytes"], int(sys.argv[2])
print("s8192: XLA's buffers predicted %d bytes, XLA says %d (%+.1f%%)" % (pred, xla, 100.0 * (pred - xla) / xla))
assert abs(pred - xla) <= 0.10 * xla, (pred, xla)
PY
ok "XLA's figure for seq 8192 predicted before compiling it"
# pinned, it is refused before anything is launched
before=$("$XL" calib history --limit 0 --json | grep -c '"id"')
# shellcheck disable=SC2086
run "$XL" run -c s8192 attn -- $JOB
expect_rc 77 "a rung predicted infeasible is refused"
expect_err "every candidate is predicted infeasible" "and says why"
expect_eq "$("$XL" calib history --limit 0 --json | grep -c '"id"')" "$before" "nothing of it was launched"

# the truth of the next unseen rung: within 10% of the prediction, inside
# its band
# shellcheck disable=SC2086
run "$XL" run -c s3072 attn -- $JOB
expect_rc 0 "s3072 fits"
run "$XL" calib history --profile attn --limit 1 --json
python3 - "$T/out" "$T/predicted.json" <<'PY' || fail "prediction error"
import json, sys
last = json.load(open(sys.argv[1]))[0]
pred = {r["candidate"]: r for r in json.load(open(sys.argv[2]))}["s3072"]
assert last["candidate"] == "s3072" and last["observed_kind"] == "host_peak_vm", last
err = (pred["predicted_bytes"] - last["observed_bytes"]) / last["observed_bytes"]
print("s3072: predicted %d +/- %d, observed %d, error %+.1f%%"
      % (pred["predicted_bytes"], pred["error_bytes"], last["observed_bytes"], 100 * err))
assert abs(err) < 0.10, err
assert abs(pred["predicted_bytes"] - last["observed_bytes"]) <= pred["error_bytes"], "outside the band"
assert last["predicted_kind"] == "host_peak_vm" and last["predicted_basis"] == "learned", last
PY
ok "the next unseen rung predicted within 10%, inside its band"

# the report draws the chosen curve, not a line, and names it
run "$XL" calib report -o "$T/report.html"
expect_rc 0 "report"
python3 - "$T/report.html" <<'PY' || fail "report"
import re, sys
page = open(sys.argv[1]).read()
assert re.search(r'<polyline class="fit" points="([0-9.]+,[0-9.]+ ){20,}', page), "no curve drawn"
assert 'class="band"' in page
assert re.search(r"Learned curve \((quadratic|power|xla-power|square)\)", page), "no curve named"
PY
ok "the report draws and names the curve"
done_ok
