# launch_overhead.sh - what xlaunch costs in front of a launch, as ratios
# against baselines measured in the same run (medians of many runs).
#   sh tests/bench/launch_overhead.sh [XLAUNCH [OLD_XLAUNCH]]   (make bench runs it)
# With OLD_XLAUNCH (another build), the history section times it beside
# XLAUNCH, run by run, in the same state directories.
# BENCH_HISTORY_RUNS, BENCH_HISTORY_ROWS: the history's run directories and
# store rows (10,000 and 100,000).
set -eu
XL=$(cd "$(dirname "${1:-./xlaunch}")" && pwd)/$(basename "${1:-./xlaunch}")
OLD=
[ -z "${2:-}" ] || OLD=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
SRC=$(pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/xlbench.XXXXXX"); trap 'rm -rf "$T"' EXIT
# an installed copy, as `make install` and pip write it (release_overhead.sh
# says why it matters)
mkdir -p "$T/bin"
install -m 755 "$XL" "$T/bin/xlaunch"
XL="$T/bin/xlaunch"
export HOME="$T/home" XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config" XLAUNCH_DATADIR="$SRC"
unset XLAUNCH_PROFILE_PATH XLAUNCH_STORE XLA_FLAGS
mkdir -p "$HOME"
# launches happen outside a git work tree here, so run's cost is the manifest
# and the store; inside one, run also asks git for the code state (below)
cd "$T"
N=${BENCH_RUNS:-300}
cc -O2 -o "$T/timer" "$SRC/tests/bench/spawn_timer.c"
export XLAUNCH_PROFILE_PATH="$SRC/profiles"
med() { "$T/timer" "$N" "$@" | awk '{print $1}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
TRUE=$(command -v true)
# the baseline gets exactly the variables the profile resolves to
"$XL" env cpu-jax --format json >"$T/env.json"
python3 - "$T/env.json" "$T/vars" <<'PY'
import json, sys
env = json.load(open(sys.argv[1]))["env"]
open(sys.argv[2], "w").write("".join(f"{k}={v}\n" for k, v in env.items()))
PY
set -- $(cat "$T/vars")
base=$(med env "$@" "$TRUE")
xexec=$(med "$XL" exec cpu-jax -- "$TRUE")
# with the release detection finding a real venv (jax and jaxlib 0.10.2,
# tools/venv.sh demo) through VIRTUAL_ENV: its answer comes from the bundle
# cache (the first launch fills it), so a launch pays a few stat() calls
venv=$(cd "$SRC" && tools/venv.sh demo 2>/dev/null) || venv=
case "$venv" in ""|/*) ;; *) venv="$SRC/$venv" ;; esac
xexec_venv=
if [ -n "$venv" ]; then
	VIRTUAL_ENV="$venv" "$XL" exec cpu-jax -- "$TRUE"
	xexec_venv=$(VIRTUAL_ENV="$venv" "$T/timer" "$N" "$XL" exec cpu-jax -- "$TRUE" | awk '{print $1}')
fi
# the interpreter itself, not a version-manager shim in front of it
PY=$(python3 -c 'import sys; print(sys.executable)')
pyexec=$(med "$PY" -c "import os,json; os.environ.update(json.load(open('$T/env.json'))['env']); os.execvp('$TRUE', ['$TRUE'])")
xenv=$(med "$XL" env cpu-jax)
run_norec=$(med "$XL" run cpu-jax --no-record -q -- "$TRUE")
run_rec=$(med "$XL" run cpu-jax -q -- "$TRUE")
echo "exec overhead (median of $N runs, microseconds)"
printf '  %-52s %8s\n' "env VARS... true (baseline)" "$base"
printf '  %-52s %8s  %sx baseline\n' "xlaunch exec cpu-jax -- true" "$xexec" "$(ratio "$xexec" "$base")"
[ -z "$xexec_venv" ] ||
	printf '  %-52s %8s  %sx baseline\n' "the same, VIRTUAL_ENV a venv with jaxlib (detection)" "$xexec_venv" \
		"$(ratio "$xexec_venv" "$base")"
printf '  %-52s %8s  %sx baseline\n' "xlaunch env cpu-jax" "$xenv" "$(ratio "$xenv" "$base")"
printf '  %-52s %8s  %sx baseline, xlaunch exec is %sx of it\n' "python3 -c (os.environ.update + os.execvp)" "$pyexec" "$(ratio "$pyexec" "$base")" "$(ratio "$xexec" "$pyexec")"
printf '  %-52s %8s  %sx exec\n' "xlaunch run --no-record -- true" "$run_norec" "$(ratio "$run_norec" "$xexec")"
printf '  %-52s %8s  %sx exec\n' "xlaunch run -- true (manifest + store)" "$run_rec" "$(ratio "$run_rec" "$xexec")"

ingit=$(cd "$SRC" && med "$XL" run cpu-jax --no-record -q -- "$TRUE")
printf '  %-52s %8s  %sx exec\n' "xlaunch run --no-record, inside a git work tree" "$ingit" "$(ratio "$ingit" "$xexec")"

# A history: 10,000 run directories in the state directory and 100,000
# attempts in the store, against a state directory of few runs, with exec
# in the same interleaved runs (spawn_timer -i: run i of each command one
# after the other, so a busy moment falls on all alike).  The history is
# made as launches leave it: each run directory a copy of a real one
# (manifest, logs, settled), each row a copy of a real attempt with its
# figures, a tenth of them of the launch's own signature, the rest spread
# over 999 signatures of other families (other models).  How much of a
# family the prediction reads is bounded by the store (the newest 256
# signatures of a family, 10 launches of each: calib/backend.h), not by
# the history.
HR=${BENCH_HISTORY_RUNS:-10000} HROWS=${BENCH_HISTORY_ROWS:-100000}
mkdir -p "$T/few" "$T/hist"
for bin in "$XL" $OLD; do
	XDG_STATE_HOME="$T/few" "$bin" run cpu-jax -q -- "$TRUE"
	XDG_STATE_HOME="$T/hist" "$bin" run cpu-jax -q -- "$TRUE"
done
python3 - "$T/hist/xlaunch" "$HR" "$HROWS" <<'PY'
import json, os, shutil, sqlite3, sys
root, nruns, nrows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs = os.path.join(root, "runs")
src = sorted(d for d in os.listdir(runs) if not d.startswith("."))[0]
for i in range(nruns):
    rid = "20200101T%06d.%06dZ-hist-%d-r0-a1" % (i // 1000000, i % 1000000, 100000 + i)
    d = os.path.join(runs, rid)
    os.mkdir(d, 0o700)
    for f in os.listdir(os.path.join(runs, src)):
        if os.path.isfile(os.path.join(runs, src, f)):
            shutil.copyfile(os.path.join(runs, src, f), os.path.join(d, f))
c = sqlite3.connect(os.path.join(root, "calib.db"))
cols = [r[1] for r in c.execute("PRAGMA table_info(attempts)")]
fcols = [r[1] for r in c.execute("PRAGMA table_info(figures)")]
rid0 = c.execute("SELECT id FROM attempts ORDER BY time LIMIT 1").fetchone()[0]
sig = c.execute("SELECT signature FROM attempts WHERE id = ?", (rid0,)).fetchone()[0]
other = [c for c in cols if c not in ("id", "time", "signature")]
fother = [c for c in fcols if c != "attempt"]
with c:
    c.execute("INSERT INTO signatures SELECT printf('%064x', n.i), shape_hash, stack_hash,"
              " hardware_kind, json, first_seen, scheme, printf('%064x', n.i), coords FROM signatures,"
              " (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 999)"
              " SELECT i FROM n) n WHERE hash = ?", (sig,))
    c.execute("WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
              " INSERT INTO attempts (id, time, signature, %s) SELECT 'hist-' || n.i,"
              " 1600000000 + n.i, CASE WHEN n.i %% 10 = 0 THEN signature ELSE"
              " printf('%%064x', n.i %% 999 + 1) END, %s FROM n, attempts WHERE id = ?"
              % (", ".join(other), ", ".join(other)), (nrows - 1, rid0))
    c.execute("INSERT INTO figures (attempt, %s) SELECT a.id, %s FROM attempts a, figures f"
              " WHERE a.id LIKE 'hist-%%' AND f.attempt = ?"
              % (", ".join(fother), ", ".join("f." + x for x in fother)), (rid0,))
PY
echo "a history of $HR run directories and $HROWS store rows (medians of $N interleaved runs)"
set -- "$XL" exec cpu-jax -- "$TRUE"
names="exec"
for bin in "$XL" $OLD; do
	tag=new; [ "$bin" = "$XL" ] || tag=old
	[ -n "$OLD" ] || tag=this
	for st in few hist; do
		set -- "$@" :: XDG_STATE_HOME="$T/$st" "$bin" run cpu-jax -q -- "$TRUE" \
			:: XDG_STATE_HOME="$T/$st" "$bin" run cpu-jax --no-record -q -- "$TRUE"
		names="$names $tag:run:$st $tag:run--no-record:$st"
	done
done
"$T/timer" -i "$N" "$@" >"$T/hist.out"
echo "$names" | tr ' ' '\n' | paste -d ' ' - "$T/hist.out" | awk '
	{
		split($1, w, ":")
		what = "xlaunch exec cpu-jax -- true"
		if ($1 != "exec") {
			how = w[2] == "run" ? "run" : "run --no-record"
			where = w[3] == "hist" ? "history" : "few runs"
			what = w[1] " " how " -- true, " where
		}
		med[$1] = $3
		order[NR] = $1
		printf "  %-52s %8s  %sx exec\n", what, $3, $6
	}
	END {
		for (i = 1; i <= NR; i++) {
			k = order[i]
			if (k !~ /:hist$/)
				continue
			f = k
			sub(/:hist$/, ":few", f)
			printf "  %-52s %8.3f\n", k " / few runs", med[k] / med[f]
		}
	}'

# resolution against the number of profiles on the path, and against depth
for count in 10 1000; do
	d="$T/p$count"; mkdir -p "$d"
	i=0; while [ $i -lt $count ]; do printf 'description: p%d\nenv: {V%d: %d}\n' $i $i $i >"$d/p$i.yaml"; i=$((i + 1)); done
done
unset XLAUNCH_PROFILE_PATH
r10=$(XLAUNCH_PROFILE_PATH="$T/p10" med "$XL" env p5)
r1000=$(XLAUNCH_PROFILE_PATH="$T/p1000" med "$XL" env p5)
echo "resolution against profiles on the path (lazy: only the chain is read)"
printf '  %-52s %8s\n' "10 profiles on the path" "$r10"
printf '  %-52s %8s  %sx\n' "1,000 profiles on the path" "$r1000" "$(ratio "$r1000" "$r10")"
echo "resolution against the depth of extends (expected linear)"
for depth in 1 10 100; do
	d="$T/d$depth"; mkdir -p "$d"
	printf 'env: {D0: 0}\n' >"$d/l0.yaml"
	i=1; while [ $i -lt $depth ]; do printf 'extends: l%d\nenv: {D%d: %d}\n' $((i - 1)) $i $i >"$d/l$i.yaml"; i=$((i + 1)); done
	t=$(XLAUNCH_PROFILE_PATH="$d" med "$XL" env "l$((depth - 1))")
	eval "dep$depth=$t"
	printf '  %-52s %8s\n' "depth $depth" "$t"
done
printf '  %-52s %8s\n' "per extra level, 10 -> 100" "$(awk -v a="$dep100" -v b="$dep10" 'BEGIN { printf "%.1f", (a - b) / 90 }')"

# 64 concurrent runs on one host, one store
# burst BINARY: 64 launches at once; the wall time (µs) in $wall, the lines
# they wrote on stderr in $errs
burst() {
	rm -f "$T"/c*.err
	start=$(date +%s.%N)
	i=0; while [ $i -lt 64 ]; do "$1" run cpu-jax -q -- "$TRUE" >/dev/null 2>"$T/c$i.err" & i=$((i + 1)); done
	wait
	end=$(date +%s.%N)
	errs=$(cat "$T"/c*.err | wc -l)
	wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.0f", (b - a) * 1e6 }')
	[ "$errs" -eq 0 ] || { cat "$T"/c*.err | head; exit 1; }
}
# old_burst LABEL: with OLD_XLAUNCH, its one run and its 64 at once, in the same store
old_burst() {
	[ -n "$OLD" ] || return 0
	o1=$(med "$OLD" run cpu-jax -q -- "$TRUE")
	burst "$OLD"
	printf '  %-52s %8s\n' "old: one run" "$o1"
	printf '  %-52s %8s  %sx of 64 x one run\n' "old: 64 at once, wall" "$wall" "$(ratio "$wall" "$(awk -v a="$o1" 'BEGIN{print a*64}')")"
}
export XLAUNCH_PROFILE_PATH="$SRC/profiles"
echo "64 concurrent runs (one store, one host)"
t1=$(med "$XL" run cpu-jax -q -- "$TRUE")
burst "$XL"
rows=$("$XL" calib history --json --limit 100000 | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
printf '  %-52s %8s\n' "one run" "$t1"
printf '  %-52s %8s  %sx of 64 x one run\n' "64 at once, wall" "$wall" "$(ratio "$wall" "$(awk -v a="$t1" 'BEGIN{print a*64}')")"
printf '  %-52s %8s\n' "lines on stderr (errors, 'database is locked')" "$errs"
printf '  %-52s %8s\n' "attempts in the store (all runs of this script)" "$rows"
old_burst

# the same with a PostgreSQL store (a private server, tools/pg.sh)
if "$SRC/tools/pg.sh" available 2>/dev/null; then
	PGD=$("$SRC/tools/pg.sh" new)
	trap '"$SRC/tools/pg.sh" destroy "$PGD"; rm -rf "$T"' EXIT
	XLAUNCH_STORE=$("$SRC/tools/pg.sh" url "$PGD")
	export XLAUNCH_STORE
	"$XL" run cpu-jax -q -- "$TRUE"
	pg1=$(med "$XL" run cpu-jax -q -- "$TRUE")
	echo "PostgreSQL store (server on a Unix socket of this host)"
	printf '  %-52s %8s  %sx exec, %sx the SQLite run\n' "xlaunch run -- true (manifest + store)" "$pg1" "$(ratio "$pg1" "$xexec")" "$(ratio "$pg1" "$run_rec")"
	burst "$XL"
	rows=$("$XL" calib history --json --limit 0 | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
	printf '  %-52s %8s  %sx of 64 x one run\n' "64 at once, wall" "$wall" "$(ratio "$wall" "$(awk -v a="$pg1" 'BEGIN{print a*64}')")"
	printf '  %-52s %8s\n' "lines on stderr (errors)" "$errs"
	printf '  %-52s %8s  (expected %s)\n' "attempts in the store" "$rows" "$((N + 1 + 64))"
	[ "$rows" -eq $((N + 1 + 64)) ] || { echo "launches lost"; exit 1; }
	old_burst
else
	echo "PostgreSQL store: left out (no server programs; tools/deps.sh installs them)"
fi
