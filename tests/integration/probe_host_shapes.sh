# probe_host_shapes.sh - the cpu probe sizes its working set by the host it
# reads, for hosts of every shape, on whichever host runs the suite:
# XLAUNCH_HOST_ROOT stands a directory of host files (the caches under
# sys/devices/system/cpu, proc/meminfo) for /, and tests/integration/host_llc.py
# states the rule on its own.  Each branch of the rule gets a host: a
# 2-core VM's 8 MiB cache (the 64 MiB floor), exactly 16 MiB (four times,
# at the floor), 256 MiB (four times), no cache described (1 GiB, with no
# fallback to this host's own figure), and a 256 MiB cache with 512 MiB
# available (a quarter of what is available).  Each probe is real: the
# triad runs over that working set and is verified.
. "$(dirname "$0")/lib.sh"
MIB=$((1 << 20))
shape() {
	name=$1 llc=$2 avail=${3:-}
	rm -rf "$T/host"
	# shellcheck disable=SC2086
	python3 "$SRC/tests/integration/host_llc.py" --make "$T/host" "$llc" $avail
	export XLAUNCH_HOST_ROOT="$T/host"
	expect=$(python3 "$SRC/tests/integration/host_llc.py" --rule)
	run "$XL" probe --backend cpu --json --no-record --timeout $PROBE_LIMIT
	unset XLAUNCH_HOST_ROOT
	expect_rc 0 "cpu probe alive ($name)"
	python3 - "$T/out" "$expect" "$llc" <<'PY' || fail "$name: working set"
import json, sys
ws, rule = sys.argv[2].split("\t")
ws, llc = int(ws), int(sys.argv[3])
b = json.load(open(sys.argv[1]))["backends"][0]
d = b["details"]
assert b["state"] == "alive" and b["stage"] == "verified", b
assert d["llc_bytes"] == llc, (d["llc_bytes"], llc)
assert d["llc_source"] == ("sysfs" if llc else "unknown"), d["llc_source"]
assert d["working_set_rule"] == rule, (d["working_set_rule"], rule)
# whole 24-byte elements (three doubles)
assert ws <= d["working_set_bytes"] < ws + 24, (d["working_set_bytes"], ws)
print("%s: %d bytes, %s" % (sys.argv[2].split("\t")[1], d["working_set_bytes"], d["llc_source"]))
PY
	ok "$name: ${expect#*	}"
}
shape "an 8 MiB last-level cache" $((8 * MIB))
shape "a 16 MiB last-level cache" $((16 * MIB))
shape "a 256 MiB last-level cache" $((256 * MIB))
shape "no cache described" 0
shape "a 256 MiB cache with 512 MiB available" $((256 * MIB)) $((512 * MIB))
# the rules' words are the probe's, on every branch
grep -q "a quarter of the available memory" "$T/out" || fail "the capped shape's rule"
done_ok
