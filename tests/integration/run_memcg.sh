# run_memcg.sh - a memory cgroup of the launch's own: the host peak the
# kernel measured (cgroup v1 memory.max_usage_in_bytes, v2 memory.peak),
# limits.memory enforced by it and predicted against before launch, an OOM
# kill at it named as such; XLAUNCH_MEMCG=0 falls back to sampling and says
# that the limit is not enforced.  The cgroup xlaunch runs in alone (a Slurm
# step's, a pod's; XLAUNCH_MEMCG=own) is read where its peak rose in the
# launch, its OOM kills named, nothing enforced.  Then a family with figures of one kind
# only and no limit of that kind: that kind is predicted, and said so.
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"
command -v sqlite3 >/dev/null || skip "the sqlite3 shell is not installed (tools/deps.sh installs it)"

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
	echo "SKIP part: no cgroup of the launch's own here, the sampled peak was recorded ($source): the kernel's peak, limits.memory enforced and XLAUNCH_MEMCG=own not checked" ;;
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

	# the cgroup xlaunch runs in, as a Slurm step's or a pod's: made here
	# under the current one, xlaunch started in it alone (XLAUNCH_MEMCG=own
	# stands for "no cgroup of the launch's own can be made")
	own_peak() { sqlite3 "$XLAUNCH_STORE" "select bytes || '|' || source from figures where kind = 'host_peak_rss' and role = 'observed' and attempt = '$(announced_id)'"; }
	cur=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3; exit} $2 == "" {v2 = $3} END {if (v2 != "") print v2}' /proc/self/cgroup | head -1)
	if [ -d /sys/fs/cgroup/memory ]; then OWN=/sys/fs/cgroup/memory${cur%/}/xltest-own-$$; LIM=memory.limit_in_bytes
	else OWN=/sys/fs/cgroup${cur%/}/xltest-own-$$; LIM=memory.max; fi
	mkdir "$OWN" || fail "cannot make $OWN"
	trap 'rmdir "$OWN" 2>/dev/null; rm -rf "$T"' EXIT
	# in_own CMD: CMD (a shell command line) exec'd by a shell that moved
	# itself into $OWN, so that xlaunch is alone there
	in_own() { sh -c 'echo $$ >"$1/cgroup.procs"; XLAUNCH_MEMCG=own; export XLAUNCH_MEMCG; eval "exec $2"' sh "$OWN" "$1"; }
	run in_own "$XL run plain -- $(job 240)"
	expect_rc 0 "a launch alone in its cgroup"
	p=$(own_peak)
	case $p in *"of the cgroup xlaunch and the job were alone in"*) ;; *) fail "own cgroup source: '$p'" ;; esac
	[ "${p%%|*}" -ge $((240 * 1048576)) ] && [ "${p%%|*}" -lt $((400 * 1048576)) ] ||
		fail "the own cgroup's peak ${p%%|*} for a 240 MiB job"
	ok "the peak of the cgroup xlaunch was alone in, said so"
	# the cgroup's peak is that of its whole life: a smaller job after it
	# cannot be told from it, and is sampled
	run in_own "$XL run plain -- $(job 100)"
	expect_rc 0 "a smaller launch in the same cgroup"
	p=$(own_peak)
	case $p in *"the kernel"*) fail "a peak from before the launch taken: '$p'" ;; esac
	[ "${p%%|*}" -lt $((240 * 1048576)) ] || fail "the smaller job's peak ${p%%|*}"
	ok "a peak that did not rise in the launch is not taken"
	# another process in it: not the launch's alone, sampled
	sleep 60 & sp=$!
	echo "$sp" >"$OWN/cgroup.procs"
	run in_own "$XL run plain -- $(job 300)"
	kill "$sp"; wait "$sp" 2>/dev/null || true
	p=$(own_peak)
	case $p in *"the kernel"*) fail "a shared cgroup's peak taken: '$p'" ;; esac
	ok "a cgroup shared with another process is not read"
	# its limit (a pod's): an OOM kill there is oom, and limits.memory is
	# said not to be enforced
	echo $((160 * 1048576)) >"$OWN/$LIM"
	# and no swapping out of it, as a pod's
	[ -f "$OWN/memory.swap.max" ] && { echo 0 >"$OWN/memory.swap.max" || true; }
	[ -f "$OWN/memory.memsw.limit_in_bytes" ] && { echo $((160 * 1048576)) >"$OWN/memory.memsw.limit_in_bytes" || true; }
	run in_own "$XL run --try-infeasible capped -- $(job 240)"
	[ "$rc" -ne 0 ] || fail "a 240 MiB job under a 160 MiB cgroup ended 0"
	expect_err "oom (killed by the kernel OOM killer at the cgroup limit (of the cgroup xlaunch runs in, or one above it))" \
		"an OOM kill at the limit of the cgroup xlaunch runs in is named"
	expect_err "limits.memory is not enforced: cgroup v" "limits.memory not enforced there, said so"
	expect_err "which xlaunch runs in alone, is read, not limited" "and why"
	# a cgroup of the launch's own made under it, without a limit of its
	# own: the limit met is the one above, and said so
	run sh -c 'echo $$ >"$1/cgroup.procs"; exec "$2" run plain -- python3 -c "b = bytearray(240 * 1048576)"' sh "$OWN" "$XL"
	[ "$rc" -ne 0 ] || fail "a 240 MiB job under a 160 MiB parent cgroup ended 0"
	expect_err "oom (killed by the kernel OOM killer at the cgroup limit (of a cgroup above the launch's own" \
		"an OOM kill at the limit of a cgroup above the launch's own is named"
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
