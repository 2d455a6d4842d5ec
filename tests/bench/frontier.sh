# frontier.sh - the memory frontier of real training jobs on the CPU under an
# address-space limit, on families of more than one shape, and how each
# strategy reaches a family's largest rung that fits, on the same ground
# truth.  The families (FRONTIER_FAMILIES, all by default):
#   affine     examples/train_wide.py over micro batches (memory a line)
#   quadratic  examples/train_attention.py over sequence lengths, the
#              profile declaring train.micro_batch and model.seq (attention
#              without a fused kernel: memory grows with seq squared)
#   piecewise  examples/train_wide.py over micro batches with gradient
#              accumulation past 24576 rows per pass: memory steps up
#              where accumulation starts, then grows with the batch alone
#   torch      examples/train_torch_attention.py (PyTorch/XLA on the CPU,
#              build/venv-torch) over sequence lengths; skipped, and said
#              so, without that venv
# For each family:
#   1. the truth: every rung launched under the limit (fits, or runs out of
#      memory), and the rungs that do not fit launched again without it for
#      their true peak address space;
#   2. xlaunch's prediction of every rung, with its band, from stores
#      holding only the two and the three smallest rungs' launches, and a
#      real `xlaunch run --retry=oom` over the whole ladder after them;
#   3. the peers replayed on the measured truth: halving on OOM
#      (accelerate's find_executable_batch_size), shrinking by 10%, binary
#      search (Lightning's BatchSizeFinder in binsearch mode) and the affine
#      fit xlaunch had before curves (a least-squares line, its band twice
#      the in-sample standard error with floors of 3% and 5%), fed the same
#      calibration launches.
# tests/bench/frontier.py turns what was measured into a markdown report
# (tests/bench/RESULTS.md has one).
#   sh tests/bench/frontier.sh [XLAUNCH]
#   FRONTIER_FAMILIES="affine quadratic"   a subset
#   FRONTIER_KEEP=DIR    keep the truth (stores, exports, the jobs) in DIR;
#                        jobs already there are kept as they are, so that
#                        the truths kept with them stay theirs
#   FRONTIER_REUSE=DIR   take the truth kept in DIR instead of measuring it
#                        again (the predictions and xlaunch's runs are new)
#   FRONTIER_ARENAS=default leaves glibc's malloc arenas as they are (the
#   profiles set MALLOC_ARENA_MAX=1 otherwise: per-thread arenas reserve
#   address space in 64 MiB steps, which an address-space limit counts)
set -eu
SRC=$(pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/xlbench.XXXXXX"); trap 'rm -rf "$T"' EXIT
# a copy of the binary: a rebuild while the benchmark runs changes nothing
cp "${1:-./xlaunch}" "$T/xlaunch"
XL=$T/xlaunch
venv=$(tools/venv.sh demo) || { echo "frontier: needs .venv with jax (tools/venv.sh demo)" >&2; exit 1; }
PY="$SRC/$venv/bin/python"
export HOME="$T/home" XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config" XLAUNCH_DATADIR="$SRC"
export XLAUNCH_PROFILE_PATH="$T/profiles" PYTHONDONTWRITEBYTECODE=1
unset XLA_FLAGS XLAUNCH_STORE
mkdir -p "$HOME" "$T/profiles"
FAMILIES=${FRONTIER_FAMILIES:-"affine quadratic piecewise torch"}
KEEP=${FRONTIER_REUSE:-${FRONTIER_KEEP:-$T/keep}}
mkdir -p "$KEEP/jobs"
# the jobs from outside any git work tree: named by their content, so that
# editing the source tree during the run changes nothing (and a kept truth
# keeps its signatures)
for j in train_wide.py train_attention.py train_torch_attention.py; do
	[ -n "${FRONTIER_REUSE:-}" ] || [ -f "$KEEP/jobs/$j" ] || cp "$SRC/examples/$j" "$KEEP/jobs/$j"
done

# family NAME: sets JOB, LIMIT, RUNGS, and writes the profiles NAME (under
# the limit) and NAME-free (without it), candidates best (largest) first
family() {
	arenas="MALLOC_ARENA_MAX: 1"
	[ "${FRONTIER_ARENAS:-one}" = default ] && arenas="XLAUNCH_BENCH: 1"
	case $1 in
	affine)
		JOB="$PY $KEEP/jobs/train_wide.py 1" LIMIT=3GiB
		RUNGS="16384 32768 65536 98304 131072 163840 196608 229376 262144 327680 393216 458752 524288"
		env="{JAX_PLATFORMS: cpu, FEATURES: 1024, $arenas}" sig="" var=MICRO_BATCH ;;
	piecewise)
		JOB="$PY $KEEP/jobs/train_wide.py 1" LIMIT=2GiB
		RUNGS="16384 32768 65536 98304 131072 196608 262144 327680 393216 458752 524288"
		env="{JAX_PLATFORMS: cpu, FEATURES: 1024, PASS_ROWS: 24576, $arenas}" sig="" var=MICRO_BATCH ;;
	quadratic)
		JOB="$PY $KEEP/jobs/train_attention.py 1" LIMIT=3GiB
		RUNGS="512 768 1024 1280 1536 2048 2560 3072 3584 4096"
		env="{JAX_PLATFORMS: cpu, $arenas}" sig="{train: {micro_batch: 1}}" var=SEQ ;;
	torch)
		JOB="$SRC/build/venv-torch/bin/python $KEEP/jobs/train_torch_attention.py 1" LIMIT=6GiB
		RUNGS="256 512 768 1024 1536 2048 2560 3072"
		env="{PJRT_DEVICE: CPU, $arenas}" sig="{train: {micro_batch: 1}}" var=SEQ ;;
	esac
	for p in "$1" "$1-free"; do
		{
			echo "description: the memory frontier of the $1 family"
			echo "extends: [xla-base]"
			echo "env: $env"
			[ "$p" = "$1" ] && echo "limits: {address_space: $LIMIT}"
			[ -n "$sig" ] && echo "signature: $sig"
			echo "candidates:"
			for r in $(echo "$RUNGS" | tr ' ' '\n' | sort -rn); do
				if [ "$var" = SEQ ]; then
					echo "  - {name: r$r, env: {SEQ: $r}, signature: {model: {seq: $r}}}"
				else
					echo "  - {name: r$r, env: {$var: $r}}"
				fi
			done
		} >"$T/profiles/$p.yaml"
	done
}

# truth NAME: every rung under the limit, and without it where it did not
# fit (ran out of memory, or failed otherwise: near the limit an allocation
# can fail inside a library that does not say it was memory, as XNNPACK's
# "operation failed" does)
truth() {
	start=$(date +%s)
	"$XL" --store "$KEEP/$1-truth.db" probe --backend cpu >/dev/null 2>&1 || true
	"$XL" --store "$KEEP/$1-free.db" probe --backend cpu >/dev/null 2>&1 || true
	for r in $RUNGS; do
		# shellcheck disable=SC2086
		"$XL" --store "$KEEP/$1-truth.db" run -q -c "r$r" --try-infeasible "$1" -- $JOB >/dev/null 2>&1 || true
		if ! "$XL" --store "$KEEP/$1-truth.db" calib history --limit 1 --json | grep -q '"outcome": "ok"'; then
			# shellcheck disable=SC2086
			"$XL" --store "$KEEP/$1-free.db" run -q -c "r$r" "$1-free" -- $JOB >/dev/null 2>&1 || true
		fi
	done
	echo $(( $(date +%s) - start )) >"$KEEP/$1-truth-seconds"
	"$XL" --store "$KEEP/$1-truth.db" calib history --limit 0 --json >"$KEEP/$1-truth.json"
	"$XL" --store "$KEEP/$1-free.db" calib history --limit 0 --json >"$KEEP/$1-free.json"
	"$XL" --store "$KEEP/$1-truth.db" calib export "$KEEP/$1-all.jsonl"
}

# predict NAME: stores of the 2 and 3 smallest rungs' launches; xlaunch's
# predictions and order from each, then its real frontier run
predict() {
	# shellcheck disable=SC2046
	set -- "$1" $(echo "$RUNGS" | tr ' ' '\n' | sort -n | head -3)
	for n in 2 3; do
		want="r$2 r$3"; [ "$n" = 3 ] && want="$want r$4"
		# shellcheck disable=SC2086
		python3 - "$KEEP/$1-all.jsonl" "$T/$1-cal$n.jsonl" $want <<'PY'
import json, sys
src, dst, want = sys.argv[1], sys.argv[2], set(sys.argv[3:])
with open(dst, "w") as out:
    for line in open(src):
        d = json.loads(line)
        if d.get("type") == "probe" or (d.get("candidate") in want and d.get("outcome") == "ok"):
            out.write(line)
PY
		"$XL" --store "$T/$1-cal$n.db" calib import "$T/$1-cal$n.jsonl" >/dev/null
		"$XL" --store "$T/$1-cal$n.db" calib history --limit 0 --json >"$T/$1-cal$n.json"
		# shellcheck disable=SC2086
		"$XL" --store "$T/$1-cal$n.db" calib predict "$1" --json -- $JOB >"$T/$1-pred$n.json"
		# shellcheck disable=SC2086
		"$XL" --store "$T/$1-cal$n.db" calib order "$1" --json -- $JOB >"$T/$1-order$n.json"
		# shellcheck disable=SC2086
		"$XL" --store "$T/$1-cal$n.db" run --retry=oom "$1" -- $JOB >"$T/$1-run$n.out" 2>"$T/$1-run$n.err" || true
		"$XL" --store "$T/$1-cal$n.db" calib history --limit 0 --json >"$T/$1-after$n.json"
	done
}

done_families=""
for fam in $FAMILIES; do
	family "$fam"
	if [ "$fam" = torch ] && ! [ -x "$SRC/build/venv-torch/bin/python" ]; then
		echo "frontier: family torch skipped: no build/venv-torch (tools/venv.sh torch)" >&2
		continue
	fi
	echo "frontier: family $fam, ladder $RUNGS under $LIMIT" >&2
	[ -n "${FRONTIER_REUSE:-}" ] || truth "$fam"
	predict "$fam"
	echo "$RUNGS" >"$T/$fam-rungs"
	echo "$LIMIT" >"$T/$fam-limit"
	cp "$KEEP/$fam-truth.json" "$KEEP/$fam-free.json" "$KEEP/$fam-truth-seconds" "$T/" 2>/dev/null || true
	done_families="$done_families $fam"
done
# shellcheck disable=SC2086
python3 "$SRC/tests/bench/frontier.py" "$T" $done_families
