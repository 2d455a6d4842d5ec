# probe_gpu.sh - on a host with an NVIDIA GPU: the probe's cuda and pjrt
# bandwidths against a plain device-to-device copy of 1 GiB (PyTorch,
# timed with CUDA events) measured in the same run, before and after the
# probe.  Targets: cuda within 10% of the copy, pjrt within 25% of cuda.
#   sh tests/bench/probe_gpu.sh ./xlaunch [PYTHON]
# PYTHON is an interpreter of a virtual environment that holds torch (with
# CUDA) and a CUDA PJRT plugin (jax-cuda12-pjrt or jax-cuda13-pjrt); default
# python3.  Without an NVIDIA driver it says so and exits 0 (nothing to
# measure); a missed target exits 1.  See tests/bench/PROBE-GPU.md.
set -eu
XL=$(cd "$(dirname "${1:-./xlaunch}")" && pwd)/$(basename "${1:-./xlaunch}")
PY=${2:-python3}
T=$(mktemp -d "${TMPDIR:-/tmp}/xlbench.XXXXXX"); trap 'rm -rf "$T"' EXIT
export XDG_STATE_HOME="$T/state" XLAUNCH_DATADIR="$(pwd)"

if ! { [ -e /proc/driver/nvidia/version ] || ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; }; then
	echo "probe_gpu: no NVIDIA driver on this host: nothing measured"
	exit 0
fi
PYBIN=$(command -v "$PY")
VENV=$(cd "$(dirname "$PYBIN")/.." && pwd)
echo "host: $(hostname); $(nvidia-smi -L 2>/dev/null | head -1)"
echo "driver: $(cat /sys/module/nvidia/version 2>/dev/null || nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
echo "python: $PYBIN ($VENV)"

copy_ref() {  # prints the GB/s of a 1 GiB device-to-device copy (read + write)
	"$PYBIN" - <<'PY'
import torch
n = 1 << 28                       # 2^28 floats: 1 GiB per buffer
src = torch.rand(n, device="cuda")
dst = torch.empty_like(src)
for _ in range(5):
    dst.copy_(src)
torch.cuda.synchronize()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
best = None
for _ in range(3):
    start.record()
    for _ in range(20):
        dst.copy_(src)
    end.record()
    end.synchronize()
    t = start.elapsed_time(end) / 1000 / 20
    best = t if best is None or t < best else best
print("%.1f" % (2 * n * 4 / best / 1e9))
PY
}

before=$(copy_ref)
VIRTUAL_ENV="$VENV" "$XL" probe --backend cuda,pjrt --timeout 60s --json --no-record >"$T/probe.json" || true
after=$(copy_ref)
"$PYBIN" - "$T/probe.json" "$before" "$after" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
copy = max(float(sys.argv[2]), float(sys.argv[3]))
print("device-to-device copy, 1 GiB: %s GB/s before, %s GB/s after the probe" % (sys.argv[2], sys.argv[3]))
bw, failed = {}, False
for b in doc["backends"]:
    d = b.get("details") or {}
    print("%-28s %-9s %-9s %8s GB/s  %s" % (b["name"], b["state"], b["stage"], b["bandwidth_gbs"],
          "; ".join("%s=%s" % (k, d[k]) for k in ("working_set_bytes", "executions_queued",
                    "allocator", "buffer_bytes") if k in d)))
    for dv in b["devices"][:1]:
        print("%28s device 0: %s, memory %s%s" % ("", dv.get("kind"), dv.get("memory_bytes"),
              " (" + dv["memory_unknown"] + ")" if dv.get("memory_unknown") else ""))
    which = "cuda" if b["name"] == "cuda" else "pjrt" if "cuda" in b["name"] else None
    if which and b["state"] != "alive":
        print("  not alive: %s" % b["error"])
        failed = True
    elif which:
        bw[which] = b["bandwidth_gbs"]
if "cuda" in bw:
    r = bw["cuda"] / copy
    print("cuda / copy = %.3f (target 0.90 - 1.10)" % r)
    failed |= not 0.9 <= r <= 1.1
if "cuda" in bw and "pjrt" in bw:
    r = bw["pjrt"] / bw["cuda"]
    print("pjrt / cuda = %.3f (target 0.75 - 1.25)" % r)
    failed |= not 0.75 <= r <= 1.25
if len(bw) < 2:
    print("cuda and a pjrt plugin must both be alive to compare")
    failed = True
sys.exit(1 if failed else 0)
PY
