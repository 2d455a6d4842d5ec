# host_peak.sh - the host peak a launch records, sampled (every 100 ms, the
# launch's cgroup off: XLAUNCH_MEMCG=0) against the kernel's (the launch's
# own memory cgroup), on a job whose peak lasts 40 ms: a parent holding 64
# MiB and two workers that hold 256 MiB each at the same moment for 40 ms
# (wait4 sees one worker; the group's sum is at its peak only then).
# Alternates the two, RUNS (default 8) each, and prints both figures: the
# truth is 576 MiB plus three interpreters.
#   sh tests/bench/host_peak.sh [XLAUNCH]
set -eu
XL=$(cd "$(dirname "${1:-./xlaunch}")" && pwd)/$(basename "${1:-./xlaunch}")
T=$(mktemp -d "${TMPDIR:-/tmp}/xlbench.XXXXXX"); trap 'rm -rf "$T"' EXIT
export HOME="$T/home" XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
export XLAUNCH_STORE="$T/calib.db" XLAUNCH_PROFILE_PATH="$T/profiles"
mkdir -p "$HOME" "$T/profiles"
printf 'description: plain\n' >"$T/profiles/plain.yaml"
cat >"$T/job.py" <<'PY'
import subprocess, sys, time
def hold(mb):
    return b"\x01" * (mb << 20)
if len(sys.argv) > 1:
    # a worker: 256 MiB from the given moment on, for 40 ms
    time.sleep(max(0, float(sys.argv[1]) - time.time()))
    spike = hold(256)
    time.sleep(0.04)
    sys.exit(0)
base = hold(64)
at = time.time() + 1.5
workers = [subprocess.Popen([sys.executable, __file__, str(at)]) for _ in range(2)]
for w in workers:
    w.wait()
time.sleep(2)
PY
peak() { sqlite3 "$XLAUNCH_STORE" "select f.bytes, f.source from figures f join attempts a on a.id = f.attempt where f.kind = 'host_peak_rss' and f.role = 'observed' order by a.time desc limit 1"; }
echo "| run | sampled (MiB) | kernel (MiB) |"
echo "|---:|---:|---:|"
for i in $(seq "${RUNS:-8}"); do
	XLAUNCH_MEMCG=0 "$XL" run -q plain -- python3 "$T/job.py" >/dev/null 2>&1
	s=$(peak)
	"$XL" run -q plain -- python3 "$T/job.py" >/dev/null 2>&1
	k=$(peak)
	case $k in *"the kernel"*) ;; *) echo "host_peak: skipped, no cgroup of the launch's own here (${k#*|})"; exit 0 ;; esac
	echo "| $i | $(( ${s%%|*} >> 20 )) | $(( ${k%%|*} >> 20 )) |"
done
