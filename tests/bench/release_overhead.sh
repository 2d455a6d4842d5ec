# release_overhead.sh - what finding the release the job will load costs
# `exec`, as ratios against `env VARS... true` measured in the same run: the
# variants are interleaved run by run (spawn_timer -i), so a busy moment of
# the machine falls on all of them alike, and the figure is the median of
# the run-by-run ratios.
#   sh tests/bench/release_overhead.sh [XLAUNCH]   (make bench runs it)
# Variants: the command is no Python and no VIRTUAL_ENV is set (python3 on
# PATH is found and its bundle read from the cache); VIRTUAL_ENV names a
# venv with jax and jaxlib (tools/venv.sh demo); and the same with an empty
# cache every launch, which makes each launch start that Python (the cost
# the cache saves).  Exits 1 when the median ratio of the cached venv
# variant is above LIMIT (default 1.2).
# The variants run an installed copy of XLAUNCH, written in one go as
# `make install`, pip and the Makefile's own link step write it: the same
# bytes start measurably slower from a file the linker wrote piece by piece
# (tests/bench/RESULTS.md, "libm on first use").
set -eu
XL_BUILT=$(cd "$(dirname "${1:-./xlaunch}")" && pwd)/$(basename "${1:-./xlaunch}")
SRC=$(pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/xlbench.XXXXXX"); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/bin"
install -m 755 "$XL_BUILT" "$T/bin/xlaunch"
XL="$T/bin/xlaunch"
export HOME="$T/home" XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config" XLAUNCH_DATADIR="$SRC"
export XLAUNCH_PROFILE_PATH="$SRC/profiles"
unset XLAUNCH_STORE XLA_FLAGS VIRTUAL_ENV
mkdir -p "$HOME"
cd "$T"
ROUNDS=${BENCH_ROUNDS:-30}
PER=${BENCH_RUNS:-40}
LIMIT=${LIMIT:-1.2}
cc -O2 -o "$T/timer" "$SRC/tests/bench/spawn_timer.c"
venv=$(cd "$SRC" && tools/venv.sh demo 2>/dev/null) || { echo "SKIP: no venv (tools/venv.sh demo)"; exit 0; }
case "$venv" in /*) ;; *) venv="$SRC/$venv" ;; esac
TRUE=$(command -v true)
"$XL" env cpu-jax --format json >"$T/env.json"
python3 - "$T/env.json" "$T/vars" <<'PY'
import json, sys
env = json.load(open(sys.argv[1]))["env"]
open(sys.argv[2], "w").write("".join(f"{k}={v}\n" for k, v in env.items()))
PY
set -- $(cat "$T/vars")
# fill the cache once for both interpreters.  The two get compile caches of
# their own: a cache directory shared by two runtimes has its cache-key
# stamp rewritten at every change of runtime (exec says so), which is not
# what a launch costs.
"$XL" exec cpu-jax -- "$TRUE" 2>/dev/null
VIRTUAL_ENV="$venv" XDG_CACHE_HOME="$T/cache-venv" "$XL" exec cpu-jax -- "$TRUE" 2>/dev/null
N=$((ROUNDS * PER))
"$T/timer" -i "$N" env "$@" "$TRUE" :: "$XL" exec cpu-jax -- "$TRUE" :: \
	VIRTUAL_ENV="$venv" XDG_CACHE_HOME="$T/cache-venv" "$XL" exec cpu-jax -- "$TRUE" >"$T/rounds"
# the cost the cache saves: every launch reads the venv again (few runs)
cold=$(VIRTUAL_ENV="$venv" XDG_STATE_HOME="$T/nostate" "$T/timer" 5 sh -c \
	'rm -rf "$XDG_STATE_HOME"; exec "$0" exec cpu-jax -- "$1"' "$XL" "$TRUE" | awk '{print $1}')
python3 - "$T/rounds" "$cold" "$LIMIT" "$N" <<'PY'
import sys
rows = {int(l.split()[0]): list(map(float, l.split()[1:])) for l in open(sys.argv[1])}
cold, limit, n = float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
b = rows[0][0]
print("exec with the release detection: %d interleaved runs each, medians in microseconds" % n)
print("  %-58s %8.0f" % ("env VARS... true (baseline)", b))
names = ["xlaunch exec cpu-jax -- true (python3 on PATH, cached)",
         "the same, VIRTUAL_ENV a venv with jaxlib (cached)"]
worst = 0.0
for i, name in enumerate(names, 1):
    med, lo, hi, ratio = rows[i][:4]
    worst = max(worst, ratio) if i == 2 else worst
    print("  %-58s %8.0f  %.3fx baseline (median of run-by-run ratios; ratio of medians %.3f)" % (
        name, med, ratio, med / b))
print("  %-58s %8.0f  %.1fx baseline" % ("the same without a cache (a Python start each launch)", cold, cold / b))
sys.exit(1 if worst > limit else 0)
PY
