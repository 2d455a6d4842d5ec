# calib_profiles.sh - calib order, predict and record on profiles: the order
# follows recorded outcomes (known-good first, known-bad last, with reasons).
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"

"$XL" help 2>/dev/null | grep -q '^  profile ' ||
	skip "profile resolution ('xlaunch profile') is not in this build yet"

mkdir -p "$T/profiles"
cat >"$T/profiles/calibtest.yaml" <<'YAML'
description: calibration test profile
env:
  MICRO_BATCH: 8
signature:
  model: {params: 1.0e9, layers: 24, hidden: 2048, heads: 16, seq: 2048, vocab: 32000}
  train: {micro_batch: 8, optimizer: adamw, precision: mixed, remat: none}
  parallel: {fsdp: 1, tp: 1}
  device: {kind: cpu, count: 1, memory: 512GiB}
candidates:
  - name: mb8
  - name: mb4
    env: {MICRO_BATCH: 4}
    signature: {train: {micro_batch: 4}}
  - name: mb2-remat
    env: {MICRO_BATCH: 2}
    signature: {train: {micro_batch: 2, remat: full}}
  - name: huge
    signature: {model: {params: 4.0e10}}
YAML
export XLAUNCH_PROFILE_PATH="$T/profiles"
export XLAUNCH_STORE="$T/calib.db"
run "$XL" calib order calibtest
if [ "$rc" -eq 70 ] && grep -q "profile resolution is not available" "$T/err"; then
	skip "the launcher does not yet hand profile resolution to calib"
fi

run "$XL" calib predict calibtest -c mb8 --json
expect_rc 0 "predict one candidate"
for f in model_state_bytes activation_bytes logits_bytes overhead_bytes correction predicted_bytes; do
	grep -q "\"$f\":" "$T/out" || fail "predict --json lacks $f"
done
ok "predict fields"
expect_out '"model_state_bytes": 16000000000' "16 bytes per parameter (mixed AdamW)"
expect_out '"device_memory_bytes": 549755813888' "device memory from signature.device"
expect_out 'family uncalibrated' "uncalibrated note"
expect_out '"kind": "host_peak_rss"' "a cpu device: judged by the host's resident memory"
expect_out '"basis": "analytic"' "the analytic model, nothing learned yet"
expect_out '"limit_bytes": 549755813888' "the limit: the host's memory from signature.device"
expect_out '"feasible": true' "fits"
run "$XL" calib predict calibtest
expect_rc 0 "predict all (table)"
expect_out "candidate mb2-remat" "every candidate"

run "$XL" calib order calibtest --json
expect_rc 0 "order, nothing recorded"
expect_eq "$(grep '"name"' "$T/out" | tr -d ' ",' | sed 's/name://' | tr '\n' ' ')" "mb8 mb4 mb2-remat huge " "predicted to fit in profile order, infeasible last"
expect_out '"place": "predicted-infeasible"' "huge does not fit"

# mb8 ran out of memory, mb4 worked (recorded as a scheduler would)
run "$XL" calib record calibtest -c mb8 --outcome oom --id j1
expect_rc 0 "record oom with a profile"
run "$XL" calib record calibtest -c mb4 --outcome ok --observed 9GiB --id j2 --json
expect_rc 0 "record ok with a profile"
expect_out '"observed_kind": "host_peak_rss"' "record: the kind the candidate is judged in"
expect_out '"predicted_kind": "host_peak_rss"' "record: the prediction now, of that kind"
run "$XL" calib record calibtest --outcome ok
expect_rc 64 "record needs -c when the profile has several candidates"
run "$XL" calib order calibtest --json
expect_rc 0 "order after records"
expect_eq "$(grep '"name"' "$T/out" | tr -d ' ",' | sed 's/name://' | tr '\n' ' ')" "mb4 mb2-remat huge mb8 " "known-good first, known-bad last"
run "$XL" calib order calibtest
expect_rc 0 "order table"
expect_out "known-bad" "places shown"
expect_out "oom with this signature" "reason for mb8"
run "$XL" calib history --profile calibtest --json
expect_eq "$(grep -c '"id"' "$T/out")" 2 "records under the profile name"
run "$XL" calib predict calibtest -c mb4 --json
expect_out '"calibrated": true' "calibrated after an ok launch with observed memory"
run "$XL" calib order nosuchprofile
[ "$rc" -ne 0 ] || fail "unknown profile must fail"
ok "unknown profile fails"

# a launch on this host of a job predicted for a TPU's memory: the attempt
# line names both kinds, never the two figures side by side as one kind
cat >"$T/profiles/ontpu.yaml" <<'YAML'
description: a TPU job's prediction, launched on the host
signature:
  model: {params: 1.0e8, layers: 4, hidden: 512, heads: 8, seq: 512, vocab: 1000}
  train: {micro_batch: 1, optimizer: adamw, precision: mixed, remat: none}
  device: {kind: tpu-v5e, count: 1, memory: 16GiB}
YAML
run "$XL" run ontpu -- true
expect_rc 0 "a launch with a device prediction"
grep -Eq "ok \(exited 0\) after [0-9.]+ s, observed [0-9.]+ [KMG]?i?B \(host_peak_(rss|vm)\), predicted [0-9.]+ [KMG]iB \(device_peak\)" "$T/err" ||
	{ cat "$T/err"; fail "observed and predicted of two kinds, each not named"; }
ok "observed and predicted each with its kind"
done_ok
