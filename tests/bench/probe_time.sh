# probe_time.sh - wall time of the probe per backend (median of 5).
set -eu
XL=$(cd "$(dirname "${1:-./xlaunch}")" && pwd)/$(basename "${1:-./xlaunch}")
T=$(mktemp -d "${TMPDIR:-/tmp}/xlbench.XXXXXX"); trap 'rm -rf "$T"' EXIT
export XDG_STATE_HOME="$T/state" XLAUNCH_DATADIR="$(pwd)"
echo "probe wall time per backend (seconds, median of 5)"
for b in cpu opencl cuda pjrt; do
	for i in 1 2 3 4 5; do
		s=$(date +%s.%N); "$XL" probe --backend $b --no-record --json >"$T/$b.$i.json" 2>/dev/null || true; e=$(date +%s.%N)
		awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f\n", b - a }'
	done | sort -n | sed -n 3p >"$T/$b.med"
	state=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(x["name"]+"="+x["state"] for x in d["backends"]))' "$T/$b.1.json")
	printf '  %-8s %6s s   %s\n' "$b" "$(cat "$T/$b.med")" "$state"
done
# a real PJRT plugin, when tools/venv.sh pjrt has made its environment
if [ -x build/venv-pjrt/bin/python ]; then
	for i in 1 2 3 4 5; do
		s=$(date +%s.%N); VIRTUAL_ENV="$(pwd)/build/venv-pjrt" "$XL" probe --backend pjrt --no-record --json >"$T/pj.$i.json" 2>/dev/null || true; e=$(date +%s.%N)
		awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f\n", b - a }'
	done | sort -n | sed -n 3p >"$T/pj.med"
	state=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(x["name"]+"="+x["state"] for x in d["backends"]))' "$T/pj.1.json")
	printf '  %-8s %6s s   %s (XLA CPU plugin, build/venv-pjrt)\n' "pjrt" "$(cat "$T/pj.med")" "$state"
fi
