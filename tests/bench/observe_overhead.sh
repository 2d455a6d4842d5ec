# observe_overhead.sh - what watching a job from outside costs it: the same
# CPU-bound job under `xlaunch run` with the process-group sampler off
# (XLAUNCH_SAMPLE_MS=0, the baseline), at its default period (100 ms) and at
# ten times that rate, one process and eight; runs alternate so that drift
# of a shared machine falls on both.  The job times its own work, so
# xlaunch's start and end are not in the ratio; xlaunch's own CPU time per
# second of job is measured too.  Then a JAX job with and without XLA's
# memory-usage dump (--no-xla-dump).
#   sh tests/bench/observe_overhead.sh [XLAUNCH]    (make bench runs it)
set -eu
XL=$(cd "$(dirname "${1:-./xlaunch}")" && pwd)/$(basename "${1:-./xlaunch}")
SRC=$(pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/xlbench.XXXXXX"); trap 'rm -rf "$T"' EXIT
export HOME="$T/home" XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config" XLAUNCH_DATADIR="$SRC"
export XLAUNCH_STORE="$T/calib.db" XLAUNCH_PROFILE_PATH="$T/profiles"
unset XLA_FLAGS
mkdir -p "$HOME" "$T/profiles"
printf 'description: plain\n' >"$T/profiles/plain.yaml"
N=${BENCH_PAIRS:-10}

# the job: PROCS processes, each spinning for a fixed amount of work; prints
# the wall time of the work and the CPU time of all of it (microseconds)
cat >"$T/busy.c" <<'C'
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
int main(int argc, char **argv)
{
	int procs = atoi(argv[1]);
	long iters = atol(argv[2]);
	volatile unsigned long x = 1;
	double t0 = now();
	struct rusage a, b;
	for (int p = 1; p < procs; p++)
		if (fork() == 0) { for (long i = 0; i < iters; i++) x = x * 6364136223846793005UL + 1; _exit(0); }
	for (long i = 0; i < iters; i++) x = x * 6364136223846793005UL + 1;
	while (wait(NULL) > 0)
		;
	getrusage(RUSAGE_SELF, &a);
	getrusage(RUSAGE_CHILDREN, &b);
	printf("%.0f %.0f\n", now() - t0, (a.ru_utime.tv_sec + a.ru_stime.tv_sec + b.ru_utime.tv_sec + b.ru_stime.tv_sec) * 1e6 +
	       a.ru_utime.tv_usec + a.ru_stime.tv_usec + b.ru_utime.tv_usec + b.ru_stime.tv_usec);
	return 0;
}
C
cc -O1 -o "$T/busy" "$T/busy.c"
# about three seconds of work for one process on this machine
ITERS=${BENCH_ITERS:-1200000000}

# one launch: prints "job_wall_us job_cpu_us xlaunch_and_job_cpu_us"
launch() {  # launch SAMPLE_MS PROCS
	XLAUNCH_SAMPLE_MS=$1 python3 - "$XL" "$T/busy" "$2" "$ITERS" <<'PY'
import os, resource, subprocess, sys
xl, busy, procs, iters = sys.argv[1:]
r = subprocess.run([xl, "run", "plain", "-q", "--no-record", "--", busy, procs, iters],
                   capture_output=True, text=True, check=True)
wall, cpu = r.stdout.split()
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, cpu, int((ru.ru_utime + ru.ru_stime) * 1e6))
PY
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "job's own time under xlaunch run, sampler on against off (median of $N alternating pairs;"
echo "the 'off' rows put the sampler off on both sides: the noise of this machine)"
for procs in 1 8; do
	for ms in off 100 10; do
		: >"$T/ratios"; : >"$T/cpu_extra"; : >"$T/walls"
		i=0
		while [ $i -lt "$N" ]; do
			# shellcheck disable=SC2046
			set -- $(launch 0 "$procs")
			off_wall=$1; off_overhead=$(($3 - $2))
			# shellcheck disable=SC2046
			set -- $(launch "$([ "$ms" = off ] && echo 0 || echo "$ms")" "$procs")
			on_wall=$1; on_overhead=$(($3 - $2))
			awk -v a="$on_wall" -v b="$off_wall" 'BEGIN { printf "%.4f\n", a / b }' >>"$T/ratios"
			# xlaunch's own CPU with the sampler less without, per second of job
			awk -v a="$on_overhead" -v b="$off_overhead" -v w="$on_wall" \
				'BEGIN { printf "%.3f\n", (a - b) / (w / 1e6) / 1000 }' >>"$T/cpu_extra"
			echo "$off_wall" >>"$T/walls"
			i=$((i + 1))
		done
		printf '  %d process%s, every %3s ms: job time %sx of unsampled (%s s of work); sampler CPU %s ms per second of job\n' \
			"$procs" "$([ "$procs" = 1 ] && echo "  " || echo "es")" "$ms" "$(median <"$T/ratios")" \
			"$(median <"$T/walls" | awk '{ printf "%.2f", $1 / 1e6 }')" "$(median <"$T/cpu_extra")"
	done
done

# XLA's memory-usage dump: a JAX job with it (the default) and without
venv=$(cd "$SRC" && tools/venv.sh demo 2>/dev/null) || { echo "(no .venv with jax: dump overhead not measured)"; exit 0; }
PY="$SRC/$venv/bin/python"
cat >"$T/profiles/jax.yaml" <<'YAML'
description: a JAX job on the CPU
env: {JAX_PLATFORMS: cpu}
YAML
: >"$T/dump_ratio"; : >"$T/dump_wall"
i=0
while [ $i -lt "${BENCH_JAX_PAIRS:-5}" ]; do
	t_with=0 t_without=0
	for mode in with without; do
		flag=; [ $mode = without ] && flag=--no-xla-dump
		s=$(date +%s%N)
		# shellcheck disable=SC2086
		"$XL" run jax -q --no-record $flag -- "$PY" "$SRC/examples/train_mlp.py" 3 >/dev/null 2>&1
		e=$(date +%s%N)
		if [ $mode = with ]; then t_with=$(( (e - s) / 1000 )); else t_without=$(( (e - s) / 1000 )); fi
	done
	awk -v a="$t_with" -v b="$t_without" 'BEGIN { printf "%.4f\n", a / b }' >>"$T/dump_ratio"
	echo "$t_without" >>"$T/dump_wall"
	i=$((i + 1))
done
printf 'JAX job (examples/train_mlp.py 3, 5 compiled programs), whole launch with the dump: %sx of without (%s s without; median of %s pairs)\n' \
	"$(median <"$T/dump_ratio")" "$(median <"$T/dump_wall" | awk '{ printf "%.2f", $1 / 1e6 }')" "${BENCH_JAX_PAIRS:-5}"
