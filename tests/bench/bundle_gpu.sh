#!/bin/sh
# bundle_gpu.sh - the bundle check against the interpreter's own view, in one
# run: `bundle show --all` against importlib.metadata (name for name, version
# for version), `bundle check`'s requires-dist findings against `pip check`
# over the ML lane packages, and the NVIDIA driver version xlaunch reads
# against nvidia-smi's and /sys/module/nvidia/version.  Meant for a GPU host
# (tests/bench/BUNDLE-GPU.md); runs anywhere (the driver part says when
# there is no driver).
#   sh tests/bench/bundle_gpu.sh ./xlaunch [PYTHON]
# PYTHON: the interpreter of the environment the jobs run in (default
# python3).  Exits 1 when a comparison differs.
set -eu
XL=$(cd "$(dirname "${1:-./xlaunch}")" && pwd)/$(basename "${1:-./xlaunch}")
PY=${2:-python3}
T=$(mktemp -d "${TMPDIR:-/tmp}/xlbundle.XXXXXX"); trap 'rm -rf "$T"' EXIT
export XLAUNCH_DATADIR="$(pwd)"
PYBIN=$(command -v "$PY")
case "$PYBIN" in /*) ;; *) PYBIN=$(cd "$(dirname "$PYBIN")" && pwd)/$(basename "$PYBIN") ;; esac
status=0

echo "host: $(hostname); $(nvidia-smi -L 2>/dev/null | head -1 || true)"
echo "python: $PYBIN"
"$XL" bundle show --python "$PYBIN" --all --json >"$T/show.json"
set +e
"$XL" bundle check --python "$PYBIN" --json >"$T/check.json"
echo "bundle check: exit $?"
(cd "$T" && "$PYBIN" -m pip check >"$T/pipcheck.txt" 2>&1)
echo "pip check: exit $?"
set -e
mkdir -p "$T/cwd"
(cd "$T/cwd" && "$PYBIN" - "$T/show.json" "$T/check.json" "$T/pipcheck.txt") <<'PY' || status=1
import importlib.metadata as md, json, re, sys
show = json.load(open(sys.argv[1]))
check = json.load(open(sys.argv[2]))
pip = open(sys.argv[3]).read().splitlines()
key = lambda n: re.sub(r"[-_.]+", "-", n).lower()
bad = 0

mine = {p["name"]: p["version"] for p in show["packages"]}
ref = {}
for d in md.distributions():
    if d.metadata["Name"]:
        ref.setdefault(key(d.metadata["Name"]), d.version)
diff = sorted(set(mine) ^ set(ref)) + sorted(k for k in set(mine) & set(ref) if mine[k] != ref[k])
print("site dirs: %s" % ", ".join(show["python"]["site_dirs"]))
print("distributions: xlaunch %d, importlib.metadata %d, lane %d; differing: %s"
      % (len(mine), len(ref), show["lane_count"], diff or "none"))
bad += bool(diff)
print("verdict: %s (%d errors, %d warnings)" % (check["verdict"], check["errors"], check["warnings"]))
if check["verdict"] == "empty" and show["lane_count"]:
    print("MISMATCH: verdict empty with lane packages installed"); bad += 1

# pip check's complaints about lane packages, against requires-dist errors
lane = {p["name"] for p in show["packages"] if p["lane"]}
pipset = set()
for line in pip:
    m = re.match(r"(\S+) (\S+) (?:has requirement (\S+?)[\s<>=!~;\[(]|requires (\S+?),)", line)
    if m and key(m.group(1)) in lane:
        pipset.add((key(m.group(1)), key(m.group(3) or m.group(4))))
xl = set()
for r in check["reasons"]:
    if r["rule"] == "requires-dist" and r["severity"] == "error":
        m = re.match(r"(\S+) \S+ requires ([^\s,]+)", r["message"])
        if m:
            xl.add((key(m.group(1)), key(m.group(2))))
    elif r["rule"] == "lockstep-jax" and r["severity"] == "error" and "outside the range" in r["message"]:
        xl.add(("jax", "jaxlib"))   # jax's own jaxlib pin, reported under its lock-step rule
print("pip check over the lane: %d findings; bundle check requires-dist: %d errors" % (len(pipset), len(xl)))
for p in sorted(pipset - xl):
    print("MISSED by bundle check: %s -> %s" % p); bad += 1
for p in sorted(xl - pipset):
    print("NOT in pip check: %s -> %s" % p); bad += 1
for r in check["reasons"]:
    if r["severity"] != "note":
        print("  %-7s %-19s %s" % (r["severity"], r["rule"], r["message"]))
sys.exit(1 if bad else 0)
PY

# the driver version: xlaunch's reading against the driver's own
kmod=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cuda"]["kernel_module"] or "")' "$T/show.json")
smi=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1 || true)
sysv=$(cat /sys/module/nvidia/version 2>/dev/null || true)
echo "driver: xlaunch '$kmod', nvidia-smi '$smi', /sys/module/nvidia/version '$sysv'"
echo "/proc/driver/nvidia/version: $(head -1 /proc/driver/nvidia/version 2>/dev/null || echo none)"
if [ -n "$smi" ] && [ "$kmod" != "$smi" ]; then
	echo "MISMATCH: the driver version read is not nvidia-smi's"; status=1
fi
[ -n "$smi$sysv" ] || echo "no NVIDIA driver on this host: the driver part is not compared"
exit $status
