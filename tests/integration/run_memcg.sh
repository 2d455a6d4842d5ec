# run_memcg.sh - a memory cgroup of the launch's own: the host peak the
# kernel measured (cgroup v1 memory.max_usage_in_bytes, v2 memory.peak),
# limits.memory enforced by it and predicted against before launch, an OOM
# kill at it named as such; XLAUNCH_MEMCG=0 falls back to sampling and says
# that the limit is not enforced.  Then a family with figures of one kind
# only and no limit of that kind: that kind is predicted, and said so.
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"

mkdir -p "$T/profiles"
export XLAUNCH_PROFILE_PATH="$T/profiles" XLAUNCH_STORE="$T/calib.db"
cat >"$T/profiles/plain.yaml" <<'YAML'
description: no limit
YAML
cat >"$T/profiles/capped.yaml" <<'YAML'
description: resident memory capped by a cgroup
limits:
  memory: 160MiB
YAML
job() { echo "python3 -c 'b = bytearray($1 * 1048576); print(len(b))'"; }

run "$XL" profile show capped
expect_rc 0 "profile with limits.memory"
expect_out "memory=160.0 MiB" "limits.memory shown"

run sh -c "$XL run plain -- $(job 240)"
expect_rc 0 "a plain launch"
source=$(sqlite3 "$XLAUNCH_STORE" "select source from figures where kind = 'host_peak_rss' and role = 'observed'")
case $source in
*"the kernel: cgroup v"*) kernel=1 ;;
*sampled*|*wait4*)
	kernel=0
	echo "note: no cgroup of the launch's own here; the sampled peak was recorded ($source)" ;;
*) fail "host_peak_rss source: '$source'" ;;
esac
ok "host_peak_rss says its source"

if [ "$kernel" = 1 ]; then
	peak=$(sqlite3 "$XLAUNCH_STORE" "select bytes from figures where kind = 'host_peak_rss' and role = 'observed'")
	[ "$peak" -ge $((240 * 1048576)) ] && [ "$peak" -lt $((400 * 1048576)) ] ||
		fail "the kernel's peak $peak for a 240 MiB job"
	ok "the kernel's peak holds the job's 240 MiB"
	# predicted from the launch before: over the limit, refused before launch
	run sh -c "$XL run capped -- $(job 240)"
	expect_rc 77 "predicted infeasible under limits.memory"
	expect_err "above limits.memory (enforced by a cgroup v" "the limit decides, enforced"
	run sh -c "$XL run --try-infeasible capped -- $(job 240)"
	[ "$rc" -ne 0 ] || fail "a 240 MiB job under a 160 MiB cgroup limit ended 0"
	expect_err "oom (killed by the kernel OOM killer at the cgroup limit" "an OOM kill at the limit is named"
	run "$XL" calib history --profile capped --json
	expect_out '"outcome": "oom"' "recorded as oom"
	# a job under the limit runs
	run sh -c "$XL run capped -- $(job 40)"
	expect_rc 0 "a job under the limit"
	# no cgroup for it: sampled, and the limit not enforced, said so
	run sh -c "XLAUNCH_MEMCG=0 $XL run capped -- $(job 40)"
	expect_rc 0 "XLAUNCH_MEMCG=0 runs"
	expect_err "limits.memory is not enforced: XLAUNCH_MEMCG=0" "not enforced, said so"
fi

# the kind follows the data: three launches recorded as host_peak_vm, on a
# GPU signature whose limit names device_peak
cat >"$T/profiles/vmfam.yaml" <<'YAML'
description: a family with host_peak_vm figures only
signature:
  train: {micro_batch: 8}
  device: {kind: gpu, count: 1, memory: 80GiB}
candidates:
  - name: mb32
    signature: {train: {micro_batch: 32}}
  - name: mb24
    signature: {train: {micro_batch: 24}}
  - name: mb16
    signature: {train: {micro_batch: 16}}
  - name: mb8
YAML
for c in 8 16 24; do
	run "$XL" calib record vmfam -c "mb$c" --outcome ok --kind host_peak_vm --observed "$((4096 + c * 256))MiB" --id "vm$c" -- python3 train.py
	expect_rc 0 "record mb$c"
done
run "$XL" calib predict vmfam -c mb32 --json
expect_rc 0 "predict mb32"
expect_out '"kind": "host_peak_vm"' "the kind the family has figures of"
expect_out '"basis": "learned"' "learned from them"
expect_out "the kind the family has figures of (none of device_peak" "and said so"
expect_out '"predicted_bytes": 12884901888' "12 GiB: the line through them"
echo "ok ($nchecks checks)"
