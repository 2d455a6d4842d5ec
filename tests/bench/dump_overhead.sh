# dump_overhead.sh - what reading compilations from XLA's dump costs a job:
# the same JAX job under `xlaunch run` with the dump `run` adds (the default)
# and without it (--no-xla-dump), in alternating pairs so that drift of a
# shared machine falls on both sides, the order flipped every pair.  The job
# times its own steps (after five of warm-up), so xlaunch's start and end
# are not in the ratios:
#   steady   one shape: it compiles at start, then runs (target: under 1%
#            slower with the dump)
#   storm    a new shape every step: every step compiles (what the dump's
#            files cost XLA to write, compilation included)
# Each step is measured twice: its wall time, and the job's CPU time over it
# (all its threads), which a loaded machine's scheduling does not stretch.
# Also xlaunch's own CPU time per second of job (the reader's polls are
# in it), and the bytes: what XLA wrote into the dump, what stayed after the
# run, and the most the directory held while the job ran (sampled every
# 50 ms).
#   sh tests/bench/dump_overhead.sh [XLAUNCH]    (BENCH_PAIRS, default 8)
set -eu
XL=$(cd "$(dirname "${1:-./xlaunch}")" && pwd)/$(basename "${1:-./xlaunch}")
SRC=$(pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/xlbench.XXXXXX"); trap 'rm -rf "$T"' EXIT
export HOME="$T/home" XDG_CONFIG_HOME="$T/config" XLAUNCH_DATADIR="$SRC"
export XLAUNCH_STORE="$T/calib.db" XLAUNCH_PROFILE_PATH="$T/profiles"
unset XLA_FLAGS JAX_LOG_COMPILES JAX_COMPILATION_CACHE_DIR
mkdir -p "$HOME" "$T/profiles"
venv=$(cd "$SRC" && tools/venv.sh demo 2>/dev/null) || { echo "(no .venv with jax: the dump's cost not measured; tools/venv.sh demo)"; exit 0; }
PY="$SRC/$venv/bin/python"
# no persistent cache: every launch compiles what it runs
printf 'description: JAX on the CPU, no compile cache\nenv: {JAX_PLATFORMS: cpu}\n' >"$T/profiles/jax.yaml"
N=${BENCH_PAIRS:-8}

cat >"$T/job.py" <<'PY'
import json, resource, sys, time
import jax, jax.numpy as jnp, numpy as np
mode, steps = sys.argv[1], int(sys.argv[2])
@jax.jit
def step(w, x):
    h = jnp.tanh(x @ w)
    return w - 1e-3 * (x.T @ h) / x.shape[0]
rng = np.random.default_rng(0)
w = jnp.asarray(rng.standard_normal((512, 512)).astype(np.float32))
wall, cpu = [], []
t_start = time.perf_counter()
for i in range(steps):
    rows = 1024 + (i if mode == "storm" else 0)
    x = rng.standard_normal((rows, 512)).astype(np.float32)
    t0, c0 = time.perf_counter(), time.process_time()
    w = step(w, x)
    w.block_until_ready()
    wall.append(time.perf_counter() - t0)
    cpu.append(time.process_time() - c0)
med = lambda v: sorted(v)[len(v) // 2]
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall_med": 1e3 * med(wall[5:]), "wall_mean": 1e3 * sum(wall[5:]) / len(wall[5:]),
                  "cpu_med": 1e3 * med(cpu[5:]), "cpu_mean": 1e3 * sum(cpu[5:]) / len(cpu[5:]),
                  "job_cpu": ru.ru_utime + ru.ru_stime, "job_wall": time.perf_counter() - t_start}))
PY

# one launch: prints "wall_med wall_mean cpu_med cpu_mean xlaunch_cpu_per_s
# kept_bytes written_bytes peak_bytes"
launch() {  # launch MODE STEPS with|without
	python3 - "$XL" "$PY" "$T/job.py" "$1" "$2" "$3" "$T/state-$$" <<'PY'
import glob, json, os, resource, shutil, subprocess, sys, threading, time
xl, py, job, mode, steps, how, state = sys.argv[1:]
shutil.rmtree(state, ignore_errors=True)
env = dict(os.environ, XDG_STATE_HOME=state)
peak = [0]
done = threading.Event()
def sample():
    while not done.is_set():
        total = 0
        for d in glob.glob(state + "/xlaunch/runs/*/xla-dump"):
            for root, _, files in os.walk(d):
                for f in files:
                    try:
                        total += os.lstat(os.path.join(root, f)).st_size
                    except OSError:
                        pass
        peak[0] = max(peak[0], total)
        time.sleep(0.05)
th = threading.Thread(target=sample); th.start()
argv = [xl, "run", "jax", "-q", "--no-record"] + (["--no-xla-dump"] if how == "without" else []) + ["--", py, job, mode, steps]
t0 = time.perf_counter()
r = subprocess.run(argv, capture_output=True, text=True, env=env)
wall = time.perf_counter() - t0
done.set(); th.join()
if r.returncode:
    sys.exit("launch failed: " + r.stderr[-2000:])
m = json.loads(r.stdout.strip().splitlines()[-1])
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
xl_cpu = ru.ru_utime + ru.ru_stime - m["job_cpu"]
kept = written = 0
for man in glob.glob(state + "/xlaunch/runs/*/manifest.json"):
    rd = json.load(open(man))["xla_dump"]["read"]
    if rd:
        kept = rd["kept"]["bytes"]
        written = kept + rd["dropped"]["bytes"]
print("%.4f %.4f %.4f %.4f %.5f %d %d %d" % (m["wall_med"], m["wall_mean"], m["cpu_med"], m["cpu_mean"],
      xl_cpu / wall, kept, written, peak[0]))
PY
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f\n", a / b }'; }

echo "XLA's dump read by xlaunch, against --no-xla-dump (median of $N alternating pairs)"
for mode in steady storm; do
	steps=300; [ "$mode" = storm ] && steps=60
	for f in wmed wmean cmed cmean base xl_with xl_without kept written peak; do : >"$T/$f"; done
	i=0
	while [ $i -lt "$N" ]; do
		if [ $((i % 2)) -eq 0 ]; then order="with without"; else order="without with"; fi
		for how in $order; do
			launch $mode $steps $how >"$T/one.$how"
		done
		set -- $(cat "$T/one.with"); w1=$1 w2=$2 w3=$3 w4=$4 wx=$5 kept=$6 written=$7 peak=$8
		set -- $(cat "$T/one.without"); o1=$1 o2=$2 o3=$3 o4=$4 ox=$5
		ratio "$w1" "$o1" >>"$T/wmed"; ratio "$w2" "$o2" >>"$T/wmean"
		ratio "$w3" "$o3" >>"$T/cmed"; ratio "$w4" "$o4" >>"$T/cmean"
		echo "$o1 $o2 $o3 $o4" >>"$T/base"
		echo "$wx" >>"$T/xl_with"; echo "$ox" >>"$T/xl_without"
		echo "$kept" >>"$T/kept"; echo "$written" >>"$T/written"; echo "$peak" >>"$T/peak"
		i=$((i + 1))
	done
	printf '  %s, %d steps, with / without the dump:\n' "$mode" "$steps"
	printf '    step, median: wall %sx, CPU %sx (without: wall %s ms, CPU %s ms)\n' \
		"$(median <"$T/wmed")" "$(median <"$T/cmed")" "$(cut -d' ' -f1 "$T/base" | median)" "$(cut -d' ' -f3 "$T/base" | median)"
	printf '    step, mean:   wall %sx, CPU %sx (without: wall %s ms, CPU %s ms)\n' \
		"$(median <"$T/wmean")" "$(median <"$T/cmean")" "$(cut -d' ' -f2 "$T/base" | median)" "$(cut -d' ' -f4 "$T/base" | median)"
	printf '    xlaunch CPU per second of job: %s s with, %s s without\n' "$(median <"$T/xl_with")" "$(median <"$T/xl_without")"
	printf '    dump: %s bytes written, %s kept after the run, at most %s on disk during it\n' \
		"$(median <"$T/written")" "$(median <"$T/kept")" "$(sort -n "$T/peak" | tail -1)"
	printf '    spread of the CPU median ratios: %s .. %s\n' "$(sort -n "$T/cmed" | head -1)" "$(sort -n "$T/cmed" | tail -1)"
done
