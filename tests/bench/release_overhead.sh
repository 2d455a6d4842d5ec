# release_overhead.sh - what finding the release the job will load costs
# `exec`, as paired ratios against `env VARS... true` measured in the same
# rounds (the variants alternate, round by round, so a busy machine moves
# them together).
#   sh tests/bench/release_overhead.sh [XLAUNCH]   (make bench runs it)
# Variants: the command is no Python and no VIRTUAL_ENV is set (python3 on
# PATH is found and its bundle read from the cache); VIRTUAL_ENV names a
# venv with jax and jaxlib (tools/venv.sh demo); and the same with an empty
# cache every launch, which makes each launch start that Python (the cost
# the cache saves).  Exits 1 when the median ratio of the cached venv
# variant is above LIMIT (default 1.2).
set -eu
XL=$(cd "$(dirname "${1:-./xlaunch}")" && pwd)/$(basename "${1:-./xlaunch}")
SRC=$(pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/xlbench.XXXXXX"); trap 'rm -rf "$T"' EXIT
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
# fill the cache once for both interpreters
"$XL" exec cpu-jax -- "$TRUE" 2>/dev/null
VIRTUAL_ENV="$venv" "$XL" exec cpu-jax -- "$TRUE" 2>/dev/null
med() { "$T/timer" "$PER" "$@" | awk '{print $1}'; }
: >"$T/rounds"
i=0
while [ $i -lt "$ROUNDS" ]; do
	b=$(med env "$@" "$TRUE")
	p=$(med "$XL" exec cpu-jax -- "$TRUE")
	v=$(VIRTUAL_ENV="$venv" "$T/timer" "$PER" "$XL" exec cpu-jax -- "$TRUE" | awk '{print $1}')
	echo "$b $p $v" >>"$T/rounds"
	i=$((i + 1))
done
# the cost the cache saves: every launch reads the venv again (few runs)
cold=$(VIRTUAL_ENV="$venv" XDG_STATE_HOME="$T/nostate" "$T/timer" 5 sh -c \
	'rm -rf "$XDG_STATE_HOME"; exec "$0" exec cpu-jax -- "$1"' "$XL" "$TRUE" | awk '{print $1}')
python3 - "$T/rounds" "$cold" "$LIMIT" <<'PY'
import statistics as st, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
cold, limit = float(sys.argv[2]), float(sys.argv[3])
b = st.median(r[0] for r in rows)
print("exec with the release detection: paired rounds (%d), medians in microseconds" % len(rows))
print("  %-58s %8.0f" % ("env VARS... true (baseline)", b))
names = ["xlaunch exec cpu-jax -- true (python3 on PATH, cached)",
         "the same, VIRTUAL_ENV a venv with jaxlib (cached)"]
worst = 0.0
for i, n in enumerate(names, 1):
    ratios = [r[i] / r[0] for r in rows]
    m = st.median(ratios)
    worst = max(worst, m) if i == 2 else worst
    print("  %-58s %8.0f  %.2fx baseline (rounds %.2f-%.2f)" % (
        n, st.median(r[i] for r in rows), m, min(ratios), max(ratios)))
print("  %-58s %8.0f  %.1fx baseline" % ("the same without a cache (a Python start each launch)", cold, cold / b))
sys.exit(1 if worst > limit else 0)
PY
