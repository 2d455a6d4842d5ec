# probe_opencl_devices.sh - every OpenCL device is reported on its own.  PoCL
# with two of its device drivers (POCL_DEVICES="basic pthread": a one-thread
# and a multi-threaded CPU device) gives two devices, each with its own kind,
# memory, stage and figures, timed by its profiling events over the working
# set the host's shape calls for (tests/integration/host_llc.py --rule: four
# times the last-level cache, 64 MiB at least, 1 GiB where the cache is
# unknown, a quarter of the available memory at most), or less where the
# device caps it (a quarter of its memory, three of its largest
# allocations) and says so; the backend's
# figures are those of the device it names; the table shows one line per
# device, each with that device's figures.
. "$(dirname "$0")/lib.sh"
[ -e /etc/OpenCL/vendors/pocl.icd ] || skip "PoCL is not installed (tools/deps.sh installs it)"
expect=$(python3 "$SRC/tests/integration/host_llc.py" --rule)
export POCL_DEVICES="basic pthread"
# --timeout $PROBE_LIMIT (lib.sh): PoCL builds the kernels for each device,
# and with a load average of 7 the backend took past the default 10 s
run "$XL" probe --backend opencl --json --no-record --timeout $PROBE_LIMIT
expect_rc 0 "two PoCL devices alive"
python3 - "$T/out" "$expect" <<'PY' || fail "per-device probe document"
import json, os, sys
b = json.load(open(sys.argv[1]))["backends"][0]
ws, rule = sys.argv[2].split("\t")
ws = int(ws)
caps = ("a quarter of the device's memory", "three of the device's largest allocations")
assert b["name"] == "opencl" and b["state"] == "alive" and b["stage"] == "verified", b
devs = b["devices"]
assert len(devs) == 2, devs
assert [x["kind"].split("-")[0] for x in devs] == ["basic", "pthread"], [x["kind"] for x in devs]
assert devs[0]["compute_units"] == 1, devs[0]
for x in devs:
    assert x["stage"] == "verified" and "error" not in x, x
    assert x["type"] == "cpu" and x["memory_bytes"] > 0, x
    assert x["bandwidth_gbs"] > 0 and x["gflops"] > 0, x
    assert x["timing"] == "device events", x
    assert x["triad_runs"] >= 3, x
    if x["working_set_rule"] in caps:
        assert x["working_set_bytes"] <= ws, (x["working_set_bytes"], ws, x["working_set_rule"])
    else:
        assert x["working_set_rule"] == rule, (x["working_set_rule"], rule)
        assert ws <= x["working_set_bytes"] < ws + 12, (x["working_set_bytes"], ws)
m = b["details"]["measured_device"]
assert b["details"]["device_count"] == 2
assert (b["bandwidth_gbs"], b["gflops"]) == (devs[m]["bandwidth_gbs"], devs[m]["gflops"]), b
PY
ok "each device with its own stage, working set and figures"

run "$XL" probe --backend opencl --no-record --timeout $PROBE_LIMIT
expect_rc 0 "table"
[ "$(grep -c 'cpu: basic-.*GB/s, .*GFLOP/s' "$T/out")" -eq 1 ] || { cat "$T/out"; fail "no line of its own for the basic device"; }
[ "$(grep -c 'cpu: pthread-.*GB/s, .*GFLOP/s' "$T/out")" -eq 1 ] || { cat "$T/out"; fail "no line of its own for the pthread device"; }
[ "$(grep -c '^opencl ' "$T/out")" -eq 1 ] || fail "one backend line for opencl"
grep -q ' x .*skylake\| x pthread\| x basic' "$T/out" && fail "two devices shown as one"
ok "one line per device"
done_ok
