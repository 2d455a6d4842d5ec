# probe_cpu_bandwidth.sh - the cpu probe measures memory, not cache: its
# working set is the one the host's shape calls for, at least four times
# the last-level cache where memory allows (read here from sysfs on our
# own, and compared with what the probe read), and its figure
# is within 25% of a plain multi-threaded triad of the same size and thread
# count (tests/bench/triad_ref.c, which shares no code with the probe)
# measured in the same run.  The machine is shared, so the two are measured
# in turn, up to five rounds, and the best figure of each so far is compared
# after every round: both are the fastest pass of a triad, and the best of
# several rounds is what the host gives when the CPU hog beside the test
# (make test-load) lets the threads run together.  The bound is 25% either
# way on a quiet host; on a busy one (a load average of at least the CPUs
# plus a half when the test starts) it is the stated margin of a 2-core
# host shared with a CPU hog: the probe's best between 0.6 and 1.6 times
# the reference's.  Under make test-load the best of five rounds stood at
# 0.72 to 0.95 of the reference's (2026-11-27), single rounds at 0.44 to
# 2.3; the probe that started its threads for every pass stood at 0.42.
# A figure from the cache would stand far above, and the working set is
# checked on its own (host_llc.py --rule).  The reference
# is built as the xlaunch under test is: with ASan and UBSan when that is the
# sanitizer build (build/san), whose instrumented loops run slower.
# test: alone (a bandwidth against a reference: a test beside it would share the memory bus)
. "$(dirname "$0")/lib.sh"
CC=${CC:-cc}
command -v "$CC" >/dev/null || skip "no C compiler ($CC) to build the reference triad"
case "$XL" in
*/build/san/*) refflags="-O1 -fsanitize=address,undefined -fno-omit-frame-pointer" ;;
*) refflags="-O2" ;;
esac
$CC $refflags -pthread -o "$T/triad_ref" "$SRC/tests/bench/triad_ref.c" || fail "cannot build the reference triad"

# the last-level cache as sysfs describes it, read on our own
llc=$(python3 "$SRC/tests/integration/host_llc.py")
[ "$llc" -gt 0 ] || skip "neither sysfs nor the C library describes a cache on this machine: a bandwidth out of the cache cannot be told from one out of memory (probe_host_shapes checks the probe's rule for such a host)"
expect=$(python3 "$SRC/tests/integration/host_llc.py" --rule)

round=0
bestp=0 bestr=0
read -r load1 _ </proc/loadavg
ncpu=$(python3 -c 'import os; print(len(os.sched_getaffinity(0)))')
if python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= int(sys.argv[2]) + 0.5 else 1)' "$load1" "$ncpu"; then
	lo=0.6 hi=1.6 how="busy host (load average $load1 on $ncpu CPUs)"
else
	lo=0.75 hi=1.25 how="quiet host (load average $load1 on $ncpu CPUs)"
fi
echo "bound: the probe's best between $lo and $hi times the reference's: $how"
while :; do
	round=$((round + 1))
	run "$XL" probe --backend cpu --json --no-record --timeout $PROBE_LIMIT
	expect_rc 0 "cpu probe alive"
	set -- $(python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))["backends"][0]; d=b["details"]
print(d["working_set_bytes"], d["llc_bytes"], d["threads"], b["bandwidth_gbs"], d["llc_source"])' "$T/out")
	ws=$1 pllc=$2 threads=$3 probe=$4 src=$5
	expect_eq "$pllc" "$llc" "the probe reads the last-level cache the host describes"
	case "$src" in sysfs | sysconf) ok "cache sizes from $src" ;; *) fail "cache sizes from '$src'" ;; esac
	# the rule this host's shape calls for (host_llc.py --rule), in whole
	# 24-byte elements (three doubles)
	want=${expect%%	*}
	[ "$ws" -ge "$want" ] && [ "$ws" -lt $((want + 24)) ] ||
		fail "working set $ws bytes, the host's shape calls for $want (${expect#*	})"
	ok "working set $ws bytes: ${expect#*	}"
	[ "$threads" -eq "$(python3 -c 'import os; print(len(os.sched_getaffinity(0)))')" ] ||
		fail "the probe ran $threads threads, not one per CPU it may use"
	ok "one thread per CPU"
	ref=$("$T/triad_ref" "$ws" "$threads" 10 | sed -n 's/^GB\/s //p')
	[ -n "$ref" ] || fail "the reference triad gave no figure"
	bestp=$(python3 -c 'import sys; print(max(map(float, sys.argv[1:])))' "$bestp" "$probe")
	bestr=$(python3 -c 'import sys; print(max(map(float, sys.argv[1:])))' "$bestr" "$ref")
	echo "round $round: working set $ws bytes (last-level cache $llc), $threads threads: probe $probe GB/s, reference $ref GB/s (best so far: $bestp, $bestr)"
	if python3 -c 'import sys; p, r, lo, hi = map(float, sys.argv[1:]); sys.exit(0 if lo * r <= p <= hi * r else 1)' "$bestp" "$bestr" "$lo" "$hi"; then
		ok "probe's best within $lo-$hi x the reference triad's best ($round rounds, $how)"
		break
	fi
	[ $round -lt 5 ] || fail "the probe's best $bestp GB/s is not within $lo-$hi x the reference triad's best $bestr GB/s (five rounds, $how)"
done
done_ok
