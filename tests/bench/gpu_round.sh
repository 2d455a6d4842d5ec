#!/bin/sh
# gpu_round.sh - everything xlaunch can only show on a host with an NVIDIA
# GPU, in one run of a few minutes, each part under its own time limit so
# that one that hangs leaves the others' results:
#   1. the host: GPU, driver, the jobs' Python and its jax / plugin / torch
#   2. probe_gpu.sh: cuda and pjrt against a 1 GiB device-to-device copy
#   3. the whole probe as JSON, and --timeout 0.05s (hung at installed, 69)
#   4. bundle_gpu.sh: bundle show/check against importlib.metadata and pip
#   5. a real JAX training launch that runs out of device memory and is
#      retried with the next candidate (fresh store: nothing predicted)
#   6. the attention ladder of PROBE-GPU.md: three launches teach the
#      family, the prediction of every other rung against its truth, and the
#      frontier run from the three-launch store
#   sh tests/bench/gpu_round.sh ./xlaunch [PYTHON] [OUTDIR]
# PYTHON: the interpreter of the environment with jax, a CUDA PJRT plugin
# and torch (default: /opt/torch/.venv/bin/python if there, else python3).
# PARTS (default "probe bundle oom ladder") picks parts 2-3, 4, 5 and 6.
# OOM_SEQS, LADDER, TEACH and TRUTH change the sequence lengths of parts 5
# and 6 (for a try on a CPU host with small ones, with GPU_ROUND_ANYWHERE=1).
# OUTDIR (default ./gpu-round) receives every part's output; summary.txt is
# what tests/bench/PROBE-GPU.md records.  Exits 0; the parts say what failed.
set -u
# its launches are sized for a GPU of 80 GiB or more; without an NVIDIA
# driver there is nothing to measure (make bench runs every script here)
if ! { [ -e /proc/driver/nvidia/version ] || ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; } &&
	[ -z "${GPU_ROUND_ANYWHERE:-}" ]; then
	echo "gpu_round: no NVIDIA driver on this host: nothing measured"
	exit 0
fi
XL=$(cd "$(dirname "${1:-./xlaunch}")" && pwd)/$(basename "${1:-./xlaunch}")
PY=${2:-}
O=${3:-./gpu-round}
mkdir -p "$O"; O=$(cd "$O" && pwd)
SRC=$(pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/xlgpu.XXXXXX"); trap 'rm -rf "$T"' EXIT
export XLAUNCH_DATADIR="$SRC" XDG_STATE_HOME="$T/state" XDG_CACHE_HOME="$T/cache"
S="$O/summary.txt"
say() { echo "$*" | tee -a "$S"; }
# the whole round stops starting parts after ROUND_LIMIT seconds (default 480)
START=$(date +%s); ROUND_LIMIT=${ROUND_LIMIT:-480}
# part NAME LIMIT CMD...: runs CMD under LIMIT seconds, its output in NAME.log
part() {
	n=$1 lim=$2; shift 2
	left=$((START + ROUND_LIMIT - $(date +%s)))
	[ "$left" -gt 5 ] || { say "== $n: not run (the round's $ROUND_LIMIT s are spent)"; return 0; }
	[ "$lim" -le "$left" ] || lim=$left
	t0=$(date +%s.%N)
	timeout -k 5 "$lim" "$@" >"$O/$n.log" 2>&1; rc=$?
	t1=$(date +%s.%N)
	say "== $n: exit $rc in $(awk "BEGIN {printf \"%.1f\", $t1 - $t0}") s (limit $lim s)"
	tail -n 40 "$O/$n.log" >>"$S"
	return 0
}

if [ -z "$PY" ]; then
	for p in /opt/torch/.venv/bin/python "$(command -v python3)"; do
		[ -x "$p" ] && "$p" -c 'import jax, torch' 2>/dev/null && { PY=$p; break; }
	done
fi
: "${PY:=python3}"
say "date: $(date -u +%FT%TZ); host $(hostname)"
say "gpu: $(nvidia-smi -L 2>&1 | head -2 | tr '\n' ' ')"
say "driver: $(cat /sys/module/nvidia/version 2>/dev/null); $(head -1 /proc/driver/nvidia/version 2>/dev/null)"
say "python: $PY ($("$PY" -c 'import sys; print(sys.version.split()[0])' 2>&1))"
say "packages: $("$PY" -m pip list 2>/dev/null | grep -Ei '^(jax|jaxlib|jax-cuda|torch |nvidia-cuda-runtime|numpy )' | tr -s ' ' | paste -sd, -)"
say "xlaunch: $("$XL" --version 2>&1)"
VENV=$(cd "$(dirname "$PY")/.." && pwd)

want() { case " ${PARTS:-probe bundle oom ladder} " in *" $1 "*) return 0 ;; esac; return 1; }

# 2 and 3: the probe
if want probe; then
part probe_gpu 150 sh tests/bench/probe_gpu.sh "$XL" "$PY"
part probe_all 120 env VIRTUAL_ENV="$VENV" "$XL" probe --no-record
VIRTUAL_ENV="$VENV" timeout 120 "$XL" probe --no-record --json >"$O/probe.json" 2>"$O/probe.json.err"
say "== probe --json: exit $?"
part probe_timeout 30 env VIRTUAL_ENV="$VENV" "$XL" probe --backend cuda,pjrt --timeout 0.05s --no-record
fi

# 4: the bundle
if want bundle; then
part bundle_gpu 90 sh tests/bench/bundle_gpu.sh "$XL" "$PY"
part bundle_check 30 "$XL" bundle check --python "$PY"
fi

# 5 and 6: launches of examples/train_attention.py (JAX on the GPU)
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P"
JOB="$PY $SRC/examples/train_attention.py 2"
ladder() {  # ladder NAME SEQ...: the attention profile with one candidate per SEQ
	name=$1; shift
	{
		echo "description: attention on one GPU, over sequence lengths"
		echo "extends: [xla-base]"
		echo "env: {XLA_PYTHON_CLIENT_PREALLOCATE: 'false', MICRO_BATCH: 8, HEADS: 16, LAYERS: 4, DIM: 1024}"
		echo "signature: {train: {micro_batch: 8}}"
		echo "candidates:"
		for s in "$@"; do echo "  - {name: s$s, env: {SEQ: $s}, signature: {model: {seq: $s}}}"; done
	} >"$P/$name.yaml"
}
# 5: a fresh store and no probe in it: the first candidate (seq 8192, far
# beyond the device) is launched, runs out of memory, and the launch is
# retried with the next
if want oom; then
ladder oom-gpu ${OOM_SEQS:-8192 2048}
part oom_retry 150 env XLAUNCH_STORE="$T/oom.db" "$XL" run --retry=oom oom-gpu -- $JOB
part oom_history 20 env XLAUNCH_STORE="$T/oom.db" "$XL" calib history --profile oom-gpu
XLAUNCH_STORE="$T/oom.db" "$XL" calib history --profile oom-gpu --json >"$O/oom-history.json" 2>&1
# and a second launch of it: seq 8192 is now known-bad and ordered last
part oom_order 20 env XLAUNCH_STORE="$T/oom.db" "$XL" calib order oom-gpu -- $JOB
fi

# 6: the ladder
if want ladder; then
ladder attn-gpu ${LADDER:-4096 3584 3072 2560 2048 1536 1024 768 512 384 256}
export XLAUNCH_STORE="$T/gpu-calib.db"
part ladder_probe 120 env VIRTUAL_ENV="$VENV" "$XL" probe --backend cuda,pjrt
for s in ${TEACH:-256 384 512}; do part "teach_s$s" 60 "$XL" run -c "s$s" attn-gpu -- $JOB; done
cp "$T/gpu-calib.db" "$T/gpu-three.db"
part predict 60 "$XL" calib predict attn-gpu -- $JOB
"$XL" calib predict attn-gpu --json -- $JOB >"$O/gpu-pred.json" 2>"$O/gpu-pred.err"
part order 30 "$XL" calib order attn-gpu -- $JOB
for s in ${TRUTH:-1024 2048 3072 3584 4096}; do
	part "truth_s$s" 60 "$XL" run -c "s$s" --try-infeasible attn-gpu -- $JOB
done
"$XL" calib history --profile attn-gpu --json >"$O/gpu-truth.json" 2>&1
part frontier 150 "$XL" --store "$T/gpu-three.db" run --retry=oom attn-gpu -- $JOB
"$XL" --store "$T/gpu-three.db" calib history --profile attn-gpu --json >"$O/gpu-frontier.json" 2>&1
fi
cp "$T"/*.db "$O"/ 2>/dev/null
say "done: $(date -u +%FT%TZ)"
exit 0
