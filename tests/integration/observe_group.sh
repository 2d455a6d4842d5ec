# observe_group.sh - what `run` measures from outside the job.  The process
# group's resident memory is sampled and summed over every member, children
# of children included (wait4 alone sees the largest process); the address
# space of its largest process is kept; NVML's per-process GPU memory is
# read when libnvidia-ml.so.1 loads and said to be absent when it does not
# (checked where the host has none).  A fake libnvidia-ml.so.1 (tests/fakes/
# fake_nvml.c: fault injection, no GPU) tests the reading and the summing:
# the group's processes on a device add up, other processes and figures
# NVML cannot give do not count, the busiest device is the peak, a buffer
# NVML calls too small is grown, and a driver that fails is named.
. "$(dirname "$0")/lib.sh"
CC=${CC:-cc}
cat >"$T/p.yaml" <<'YAML'
description: observation test
YAML
mkdir -p "$T/profiles"
cp "$T/p.yaml" "$T/profiles/plain.yaml"
export XLAUNCH_PROFILE_PATH="$T/profiles" XLAUNCH_STORE="$T/calib.db"
last_manifest() { ls -d "$XDG_STATE_HOME"/xlaunch/runs/* | sort | tail -1; }

# a parent holding 100 MB, a child and a grandchild holding 200 MB each, all
# three at once for 5 s: 50 of run's samples (one each 0.1 s), so that a
# busy host that delays many still has the group sampled whole
cat >"$T/group.py" <<'PY'
import os, subprocess, sys, time
mb = 1 << 20
def hold(n):
    b = bytearray(n * mb)
    for i in range(0, len(b), 4096):
        b[i] = 1
    return b
if len(sys.argv) > 1:
    held = hold(int(sys.argv[1]))
    if sys.argv[1] == "200" and len(sys.argv) == 2:
        subprocess.run([sys.executable, __file__, "200", "leaf"])
    else:
        time.sleep(5)
    sys.exit(0)
held = hold(100)
subprocess.run([sys.executable, __file__, "200"])
PY
# the sampler itself: no cgroup of the launch's own (run_memcg tests that)
XLAUNCH_MEMCG=0 run "$XL" run plain -- python3 "$T/group.py"
expect_rc 0 "the group job"
m=$(last_manifest)
python3 - "$m/manifest.json" <<'PY' || fail "group figures"
import ctypes, json, sys
d = json.load(open(sys.argv[1]))
figs = {(f["role"], f["kind"]): f for f in d["figures"]}
rss = figs[("observed", "host_peak_rss")]
# 100 + 200 + 200 MB held at once, and three interpreters
assert rss["bytes"] > 500 << 20, rss
assert "process group" in rss["source"], rss
# wait4 sees the largest process only
assert d["host_peak_rss_bytes"] < 300 << 20, d["host_peak_rss_bytes"]
assert d["observation"]["members_max"] >= 3, d["observation"]
vm = figs[("observed", "host_peak_vm")]
assert vm["bytes"] > 200 << 20, vm
# NVML is absent, and said so, where libnvidia-ml.so.1 does not load (the
# same dlopen); where it does, it is asked, and this job uses no GPU
try:
    ctypes.CDLL("libnvidia-ml.so.1")
    assert not d["observation"]["nvml"]["state"].startswith("absent"), d["observation"]
    print("note: this host has a libnvidia-ml.so.1: NVML absent not checked")
except OSError:
    assert d["observation"]["nvml"]["state"].startswith("absent: libnvidia-ml.so.1"), d["observation"]
assert d["observation"]["tpu"].startswith("unavailable"), d["observation"]
assert ("observed", "device_peak") not in figs, figs
PY
ok "the whole group, children of children, summed; NVML absent and said so where it is"

# sampling off: wait4's figure alone, and said so
XLAUNCH_MEMCG=0 XLAUNCH_SAMPLE_MS=0 run "$XL" run plain -- python3 "$T/group.py"
expect_rc 0 "sampling off"
m=$(last_manifest)
python3 - "$m/manifest.json" <<'PY' || fail "sampling off"
import json, sys
d = json.load(open(sys.argv[1]))
figs = {(f["role"], f["kind"]): f for f in d["figures"]}
assert "sampling off" in figs[("observed", "host_peak_rss")]["source"], figs
assert d["observation"]["samples"] == 0 and ("observed", "host_peak_vm") not in figs, d
PY
ok "sampling off: wait4 only"

# NVML through the fake
command -v "$CC" >/dev/null || skip "no C compiler ($CC) to build the fake libnvidia-ml.so.1"
mkdir -p "$T/nvml" "$T/nvml-v1" "$T/nvml-fail"
$CC -shared -fPIC -O1 -o "$T/nvml/libnvidia-ml.so.1" "$SRC/tests/fakes/fake_nvml.c" ||
	fail "cannot build the fake libnvidia-ml.so.1"
$CC -shared -fPIC -O1 -DFAKE_V1 -o "$T/nvml-v1/libnvidia-ml.so.1" "$SRC/tests/fakes/fake_nvml.c" ||
	fail "cannot build the older driver's fake"
$CC -shared -fPIC -O1 -DFAKE_INIT_FAIL -o "$T/nvml-fail/libnvidia-ml.so.1" "$SRC/tests/fakes/fake_nvml.c" ||
	fail "cannot build the failing fake"
cat >"$T/gpu.sh" <<'S'
# device 0: this shell 1.0 GB, its child 0.5 GB, a stranger 7 GB, one
# figure not available; device 1: this shell 0.3 GB; for 5 s (50 samples)
sleep 5 &
child=$!
{
	echo "0 $$ 1000000000"
	echo "0 $child 500000000"
	echo "0 1 7000000000"
	echo "0 $$ na"
	echo "1 $$ 300000000"
} >"$FAKE_NVML_PROCS"
wait
S
export FAKE_NVML_PROCS="$T/procs"
: >"$FAKE_NVML_PROCS"
LD_LIBRARY_PATH="$T/nvml" run "$XL" run plain -- sh "$T/gpu.sh"
expect_rc 0 "job under the fake NVML"
m=$(last_manifest)
python3 - "$m/manifest.json" <<'PY' || fail "NVML figures"
import json, sys
d = json.load(open(sys.argv[1]))
n = d["observation"]["nvml"]
assert n["state"] == "loaded: 2 devices", n
assert n["samples"] >= 1, n
assert n["device_peak_bytes"] == 1500000000, n
figs = {(f["role"], f["kind"]): f for f in d["figures"]}
dp = figs[("observed", "device_peak")]
assert dp["bytes"] == 1500000000 and "NVML" in dp["source"], dp
assert d["observed_kind"] == "device_peak" and d["observed_bytes"] == 1500000000, d
PY
ok "NVML: the group's processes on the busiest device, strangers left out"
# an older driver (the first process call, records without instance ids):
# the same figure
: >"$FAKE_NVML_PROCS"
LD_LIBRARY_PATH="$T/nvml-v1" run "$XL" run plain -- sh "$T/gpu.sh"
expect_rc 0 "job under the older driver's fake NVML"
m=$(last_manifest)
python3 -c 'import json, sys
n = json.load(open(sys.argv[1]))["observation"]["nvml"]
assert n["device_peak_bytes"] == 1500000000, n' "$m/manifest.json" || fail "NVML figures of an older driver"
ok "NVML of an older driver: the same sum"

LD_LIBRARY_PATH="$T/nvml-fail" run "$XL" run plain -- sh -c 'sleep 0.3'
expect_rc 0 "job under a failing NVML"
m=$(last_manifest)
expect_eq "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["observation"]["nvml"]["state"])' "$m/manifest.json")" \
	"failed: nvmlInit: Driver Not Loaded (9)" "a failing NVML named with its own words"
done_ok
