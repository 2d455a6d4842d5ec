# frontier.sh - the memory frontier of a real JAX training job on the CPU
# (examples/train_wide.py, one step) under an address-space limit, across a
# ladder of micro batches, and how each strategy reaches its largest rung
# that fits, on the same ground truth:
#   1. the truth: every rung launched under the limit (fits or runs out of
#      memory), and the rungs that do not fit launched again without it for
#      their true peak address space;
#   2. (a) xlaunch's prediction of every rung from the two and from the three
#      smallest rungs' launches (stores holding only those launches);
#   3. (b) launches wasted on out-of-memory to reach the largest rung that
#      fits, and (c) feasible rungs passed over: xlaunch (the calibration
#      launches, then one real `run --retry=oom` over the whole ladder)
#      against halving on OOM (accelerate's find_executable_batch_size),
#      shrinking by 10%, and binary search (Lightning's BatchSizeFinder in
#      binsearch mode: doubling from the smallest rung, then bisecting),
#      the three replayed on the measured truth.
# Prints a markdown report (tests/bench/RESULTS.md has one).
#   sh tests/bench/frontier.sh [XLAUNCH]
#   FRONTIER_LIMIT=3GiB FRONTIER_RUNGS="16384 32768 ..." to change the ladder;
#   FRONTIER_ARENAS=default leaves glibc's malloc arenas as they are (the
#   profile sets MALLOC_ARENA_MAX=1 otherwise: per-thread arenas reserve
#   address space in 64 MiB steps, which an address-space limit counts)
set -eu
XL=$(cd "$(dirname "${1:-./xlaunch}")" && pwd)/$(basename "${1:-./xlaunch}")
SRC=$(pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/xlbench.XXXXXX"); trap 'rm -rf "$T"' EXIT
venv=$(tools/venv.sh demo) || { echo "frontier: needs .venv with jax (tools/venv.sh demo)" >&2; exit 1; }
PY="$SRC/$venv/bin/python"
export HOME="$T/home" XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config" XLAUNCH_DATADIR="$SRC"
export XLAUNCH_PROFILE_PATH="$T/profiles" PYTHONDONTWRITEBYTECODE=1
unset XLA_FLAGS XLAUNCH_STORE
mkdir -p "$HOME" "$T/profiles"
LIMIT=${FRONTIER_LIMIT:-3GiB}
RUNGS=${FRONTIER_RUNGS:-"16384 32768 65536 98304 131072 163840 196608 229376 262144 327680 393216 458752 524288"}
# the job from outside any git work tree: named by its content, so that
# editing the source tree during the run changes nothing
cp "$SRC/examples/train_wide.py" "$T/train_wide.py"
JOB="$PY $T/train_wide.py 1"

# the ladder, best (largest) first; the same job without the limit
profile() {  # profile NAME LIMITS
	{
		echo "description: the memory frontier of examples/train_wide.py"
		echo "extends: [xla-base]"
		if [ "${FRONTIER_ARENAS:-one}" = default ]; then
			echo "env: {JAX_PLATFORMS: cpu, FEATURES: 1024}"
		else
			echo "env: {JAX_PLATFORMS: cpu, FEATURES: 1024, MALLOC_ARENA_MAX: 1}"
		fi
		[ -n "$2" ] && echo "limits: {address_space: $2}"
		echo "candidates:"
		for r in $(echo "$RUNGS" | tr ' ' '\n' | sort -rn); do
			echo "  - {name: r$r, env: {MICRO_BATCH: $r}}"
		done
	} >"$T/profiles/$1.yaml"
}
profile frontier "$LIMIT"
profile unlimited ""
"$XL" --store "$T/truth.db" probe --backend cpu >/dev/null 2>&1 || true
"$XL" --store "$T/free.db" probe --backend cpu >/dev/null 2>&1 || true

# 1. the truth
start=$(date +%s)
for r in $RUNGS; do
	# shellcheck disable=SC2086
	"$XL" --store "$T/truth.db" run -q -c "r$r" --try-infeasible frontier -- $JOB >/dev/null 2>&1 || true
	if "$XL" --store "$T/truth.db" calib history --limit 1 --json | grep -q '"outcome": "oom"'; then
		# shellcheck disable=SC2086
		"$XL" --store "$T/free.db" run -q -c "r$r" unlimited -- $JOB >/dev/null 2>&1 || true
	fi
done
truth_s=$(( $(date +%s) - start ))
"$XL" --store "$T/truth.db" calib history --limit 0 --json >"$T/truth.json"
"$XL" --store "$T/free.db" calib history --limit 0 --json >"$T/free.json"

# 2. stores holding the smallest rungs' launches only
"$XL" --store "$T/truth.db" calib export "$T/all.jsonl"
small=$(echo "$RUNGS" | tr ' ' '\n' | sort -n | head -3 | tr '\n' ' ')
# shellcheck disable=SC2086
set -- $small
for n in 2 3; do
	want="r$1 r$2"; [ "$n" = 3 ] && want="$want r$3"
	# shellcheck disable=SC2086
	python3 - "$T/all.jsonl" "$T/cal$n.jsonl" $want <<'PY'
import json, sys
src, dst, want = sys.argv[1], sys.argv[2], set(sys.argv[3:])
with open(dst, "w") as out:
    for line in open(src):
        d = json.loads(line)
        if d.get("type") == "probe" or d.get("candidate") in want:
            out.write(line)
PY
	"$XL" --store "$T/cal$n.db" calib import "$T/cal$n.jsonl" >/dev/null
	# shellcheck disable=SC2086
	"$XL" --store "$T/cal$n.db" calib predict frontier --json -- $JOB >"$T/pred$n.json"
	# shellcheck disable=SC2086
	"$XL" --store "$T/cal$n.db" calib order frontier --json -- $JOB >"$T/order$n.json"
	# 3. the frontier run itself, for real
	# shellcheck disable=SC2086
	"$XL" --store "$T/cal$n.db" run --retry=oom frontier -- $JOB >"$T/run$n.out" 2>"$T/run$n.err" || true
	"$XL" --store "$T/cal$n.db" calib history --limit 0 --json >"$T/after$n.json"
done

python3 - "$T" "$LIMIT" "$truth_s" "$RUNGS" "$XL" <<'PY'
import json, os, re, subprocess, sys
T, limit, truth_s, rungs, xl = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
rungs = sorted(int(r) for r in rungs.split())
load = lambda p: json.load(open(os.path.join(T, p)))
truth = {}
for a in load("truth.json"):
    r = int(a["candidate"][1:])
    if r not in truth:
        truth[r] = a
free = {int(a["candidate"][1:]): a for a in load("free.json")}
fits = {r: truth[r]["outcome"] == "ok" for r in rungs}
def vm(a):
    f = [f for f in a["figures"] if f["role"] == "observed" and f["kind"] == "host_peak_vm"] if a else []
    return f[0]["bytes"] if f else None
def peak(r):
    return vm(truth[r] if fits[r] else free.get(r))
best = max([r for r in rungs if fits[r]], default=None)
gb = lambda b: "%.2f" % (b / 1e9) if b is not None else "-"

print("Ladder of %d rungs (micro batch = rows per step), `limits.address_space: %s`, malloc arenas: %s; truth measured in %s s."
      % (len(rungs), limit, os.environ.get("FRONTIER_ARENAS") or "one (MALLOC_ARENA_MAX=1)", truth_s))
print("Largest rung that fits: %s.\n" % best)
print("| rung | true peak address space (GB) | fits | after 2 launches: predicted (error) | after 3 launches: predicted (error) | verdict after 3 |")
print("|---:|---:|:---:|---:|---:|---|")
preds = {}
for n in (2, 3):
    preds[n] = {int(p["candidate"][1:]): p for p in load("pred%d.json" % n)}
errs = {2: [], 3: []}
for r in sorted(rungs, reverse=True):
    cells = []
    for n in (2, 3):
        p = preds[n][r]
        calib = sorted(rungs)[:n]
        if r in calib:
            cells.append("calibration")
            continue
        if p["predicted_bytes"] is None or peak(r) is None:
            cells.append("-")
            continue
        e = (p["predicted_bytes"] - peak(r)) / peak(r)
        errs[n].append(abs(e))
        cells.append("%s +/- %s (%+.1f%%)" % (gb(p["predicted_bytes"]), gb(p["error_bytes"]), 100 * e))
    p3 = preds[3][r]
    verdict = {True: "fits", False: "predicted-infeasible", None: "no verdict"}[p3["feasible"]]
    print("| %d | %s | %s | %s | %s | %s |" % (r, gb(peak(r)), "yes" if fits[r] else "**oom**", cells[0], cells[1], verdict))
for n in (2, 3):
    if errs[n]:
        print("\nAfter %d launches: mean absolute error %.2f%%, largest %.2f%% over %d unseen rungs."
              % (n, 100 * sum(errs[n]) / len(errs[n]), 100 * max(errs[n]), len(errs[n])), end="")
print("\n")

# (b), (c): the strategies on the same truth
def halve(rs, f):
    i, tried = len(rs) - 1, []
    while i >= 0:
        tried.append(rs[i])
        if f[rs[i]]:
            return tried
        target = rs[i] / 2
        i = max([k for k in range(len(rs)) if rs[k] <= target], default=-1)
    return tried
def shrink10(rs, f):
    i, tried = len(rs) - 1, []
    while i >= 0:
        tried.append(rs[i])
        if f[rs[i]]:
            return tried
        target = rs[i] * 0.9
        i = max([k for k in range(len(rs)) if rs[k] <= target], default=-1)
    return tried
def binsearch(rs, f):
    lo, hi, i, tried = None, None, 0, []
    while True:
        tried.append(rs[i])
        if f[rs[i]]:
            lo = i
            if hi is None:
                nxt = min([k for k in range(len(rs)) if rs[k] >= 2 * rs[i]], default=len(rs) - 1)
                if nxt == i:
                    return tried
                i = nxt
                continue
        else:
            hi = i
            if lo is None:
                return tried
        if hi - lo <= 1:
            return tried
        i = (lo + hi) // 2
def summary(name, launches, ooms, final, skipped_infeasible, note=""):
    above = len([r for r in rungs if fits[r] and final is not None and r > final])
    print("| %s | %d | **%d** | %s | %s | %d | %s |" % (name, launches, ooms, final, "yes" if final == best else "no",
                                                      skipped_infeasible if skipped_infeasible is not None else above, note))
print("| strategy | launches | wasted on oom | ends at rung | the largest that fits? | feasible rungs passed over | |")
print("|---|---:|---:|---:|:---:|---:|---|")
for n in (2, 3):
    after = load("after%d.json" % n)
    run = after[:len(after) - n]
    ooms = len([a for a in run if a["outcome"] == "oom"])
    final = next((int(a["candidate"][1:]) for a in run if a["outcome"] == "ok"), None)
    order = load("order%d.json" % n)["order"]
    infeas = [int(c["name"][1:]) for c in order if c["place"] == "predicted-infeasible"]
    wrong = [r for r in infeas if fits[r]]
    above = len([r for r in rungs if fits[r] and final is not None and r > final])
    print("| xlaunch, %d calibration launches (smallest rungs) | %d | **%d** | %s | %s | %d | %d marked predicted-infeasible, %d of them wrongly; %d fitting rungs above the one it ran |"
          % (n, n + len(run), ooms, final, "yes" if final == best else "no", len(wrong), len(infeas), len(wrong), above))
for name, fn, note in (("halving on oom (accelerate find_executable_batch_size)", halve, "from the largest rung"),
                       ("shrinking by 10% on oom", shrink10, "from the largest rung"),
                       ("binary search (Lightning BatchSizeFinder, binsearch)", binsearch, "doubling from the smallest rung, then bisecting")):
    tried = fn(rungs, fits)
    final = tried[-1] if fits[tried[-1]] else None
    if fn is binsearch:
        ok = [r for r in tried if fits[r]]
        final = max(ok) if ok else None
    summary(name, len(tried), len([r for r in tried if not fits[r]]), final, None, note)
print("\n\"feasible rungs passed over\": for xlaunch, rungs it marked predicted-infeasible that fit; for the others, fitting rungs above the one they end at (a search does not mark rungs).")
PY
echo
echo "xlaunch's frontier run after 3 calibration launches (stderr):"
sed 's/^/    /' "$T/run3.err" | grep -E "predicted infeasible|attempt [0-9]+/[0-9]+: [a-z]" | head -20
