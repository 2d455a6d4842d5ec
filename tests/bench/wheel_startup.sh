# wheel_startup.sh - the wheel's size, and the start-up of the binary it
# installs against the one `make` builds, measured in the same run: each
# command run by both binaries alternately, one run each per round, so load
# on the machine falls on both alike; the ratio is the median of the
# per-round ratios.
#   sh tests/bench/wheel_startup.sh [XLAUNCH]    (make bench runs it)
set -eu
XL=$(cd "$(dirname "${1:-./xlaunch}")" && pwd)/$(basename "${1:-./xlaunch}")
SRC=$(pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/xlbench.XXXXXX"); trap 'rm -rf "$T"' EXIT
N=${BENCH_RUNS:-300}
whl=$(QUIET=1 WHEEL_DIST="$SRC/build/wheel/dist" tools/wheel.sh wheel) || {
	rc=$?; [ $rc -eq 77 ] && { echo "SKIP: the wheel cannot be built here (PyPI or the Debian archive unreachable)"; exit 0; }
	exit $rc; }
/usr/bin/python3 -m venv "$T/venv"
"$T/venv/bin/pip" install -q --no-index --disable-pip-version-check "$whl"
W="$T/venv/bin/xlaunch"
cc -O2 -o "$T/timer" "$SRC/tests/bench/spawn_timer.c"
export HOME="$T/home" XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
unset XLAUNCH_DATADIR XLAUNCH_PROFILE_PATH XLAUNCH_STORE XLA_FLAGS
mkdir -p "$HOME"
cd "$T"
"$XL" env cpu-jax >"$T/a" && "$W" env cpu-jax >"$T/b" && cmp -s "$T/a" "$T/b" ||
	{ echo "the two binaries resolve cpu-jax differently"; exit 1; }

# pair NAME ARG...: N rounds of (make's, the wheel's), alternating which goes first
pair() {
	name=$1; shift
	: >"$T/pairs"
	i=0
	while [ $i -lt "$N" ]; do
		if [ $((i % 2)) -eq 0 ]; then
			a=$("$T/timer" 1 "$XL" "$@" | awk '{print $1}')
			b=$("$T/timer" 1 "$W" "$@" | awk '{print $1}')
		else
			b=$("$T/timer" 1 "$W" "$@" | awk '{print $1}')
			a=$("$T/timer" 1 "$XL" "$@" | awk '{print $1}')
		fi
		echo "$a $b" >>"$T/pairs"
		i=$((i + 1))
	done
	python3 - "$T/pairs" "$name" <<'PY'
import statistics, sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
a = statistics.median(r[0] for r in rows)
b = statistics.median(r[1] for r in rows)
ratios = sorted(r[1] / r[0] for r in rows)
q = lambda p: ratios[int(p * (len(ratios) - 1))]
print(f"  {sys.argv[2]:<28} make {a:8.0f} us  wheel {b:8.0f} us  "
      f"ratio {statistics.median(ratios):.2f} (quartiles {q(0.25):.2f}-{q(0.75):.2f})")
PY
}

echo "wheel: $(basename "$whl")"
echo "  wheel file                   $(wc -c <"$whl") bytes"
echo "  installed (bin + share)      $(du -sb "$T/venv/bin/xlaunch" "$T/venv/share/xlaunch" "$T/venv/share/man/man1/xlaunch.1" | awk '{s += $1} END {print s}') bytes"
echo "  binary: make's               $(wc -c <"$XL") bytes"
echo "  binary: the wheel's          $(wc -c <"$W") bytes"
echo "start-up, $N rounds, median per binary and median of per-round ratios (wheel / make)"
pair "xlaunch version" version
pair "xlaunch env cpu-jax" env cpu-jax
