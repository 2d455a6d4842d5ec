# cachekey_warn.sh - `run` and `exec` say before the child starts that the
# JAX compile cache will be cold, and why, and are silent when it stays
# warm; real JAX against a real cache directory agrees every time (a warned
# launch compiles every program, a silent one loads them all).  `profile
# diff --json` marks the same differences as invalidating jax or nothing.
. "$(dirname "$0")/lib.sh"
cd "$SRC"
venv=$(tools/venv.sh demo 2>"$T/venv.err") || { cat "$T/venv.err"; skip "$(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"; }
PY="$SRC/$venv/bin/python"
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P" XLAUNCH_STORE="$T/store/calib.db"
C="$T/cache"
base() {  # base NAME FLAGS-YAML
	cat >"$P/$1.yaml" <<Y
description: JAX on the CPU with a persistent cache that keeps every program
env:
  JAX_PLATFORMS: cpu
  JAX_COMPILATION_CACHE_DIR: $C
  JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS: 0
  JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES: 0
flags:
  XLA_FLAGS: {$2}
Y
}
base dump1 "xla_dump_to: $T/dump1"
base dump2 "xla_dump_to: $T/dump2, xla_dump_hlo_as_text: true"
base fast "xla_dump_to: $T/dump1, xla_cpu_enable_fast_math: true"
base opt "xla_dump_to: $T/dump1, xla_backend_optimization_level: 1"

COLD="the JAX compile cache in $C will be cold"
# launch HOW PROFILE warm|cold [WHY]: the warning (or none) and what JAX did
launch() {
	how=$1 prof=$2 want=$3 why=${4:-}
	run "$XL" "$how" "$prof" -- "$PY" examples/jax_shape_drift.py 3 --steady
	expect_rc 0 "$how $prof"
	line=$(grep '^compiles: ' "$T/out")
	if [ "$want" = cold ]; then
		expect_err "$COLD: $why" "$how $prof: warned before the start"
		expect_eq "$line" "compiles: $N, persistent cache hits: 0" "$how $prof: JAX agrees, every program compiled"
	else
		! grep -q "will be cold" "$T/err" || { cat "$T/err"; fail "$how $prof: warned, but the cache should be warm"; }
		ok "$how $prof: silent"
		expect_eq "$line" "compiles: 0, persistent cache hits: $N" "$how $prof: JAX agrees, every program loaded"
	fi
}

run "$XL" run dump1 -- "$PY" examples/jax_shape_drift.py 3 --steady
expect_rc 0 "first launch"
! grep -q "will be cold" "$T/err" || fail "the first launch of an empty directory has nothing to compare with"
N=$(sed -n 's/^compiles: \([0-9]*\), persistent cache hits: 0$/\1/p' "$T/out")
[ -n "$N" ] && [ "$N" -ge 1 ] || { cat "$T/out"; fail "the first launch compiled nothing"; }
ok "first launch compiled $N programs"
[ -f "$C/.xlaunch-cachekey-jax.json" ] || fail "no key file kept in the cache directory"
ok "the key file is kept in the cache directory"
first=$(grep -o ' run [0-9]\{8\}T[^ ]*' "$T/err" | head -1 | sed 's/^ run //')

launch run dump2 warm                     # dump flags are out of the key
launch exec dump1 warm
launch run fast cold "--xla_cpu_enable_fast_math added since run "
launch run fast warm
launch exec opt cold "--xla_backend_optimization_level added, --xla_cpu_enable_fast_math removed since run "
launch run dump1 warm                     # settings seen before: their entries are there
launch exec fast warm
# the line comes before the child's first word
printf 'description: x\nenv: {JAX_COMPILATION_CACHE_DIR: %s}\nflags: {XLA_FLAGS: {xla_cpu_enable_fast_math: false}}\n' "$C" >"$P/other.yaml"
run sh -c '"$1" run other -- echo CHILD-STARTS 2>&1' sh "$XL"
awk '/will be cold/ {w = NR} /CHILD-STARTS/ {c = NR} END {exit !(w && c && w < c)}' "$T/out" ||
	{ cat "$T/out"; fail "the warning should precede the child's output"; }
ok "warned before the child started"
# a key file that does not parse is as good as absent, and is rewritten
echo 'not json' >"$C/.xlaunch-cachekey-jax.json"
launch run dump1 warm
grep -q '"seen"' "$C/.xlaunch-cachekey-jax.json" || fail "a broken key file is not rewritten"
ok "a broken key file is rewritten"

# profile diff --json: the same rules, before any launch
run "$XL" profile diff dump1 dump2 --json
expect_rc 1 "diff dump1 dump2"
python3 - "$T/out" <<'PY' || fail "dump flags should invalidate nothing"
import json, sys
d = json.load(open(sys.argv[1]))
ch = [c for c in d["changes"] if c.get("flag", "").startswith("xla_dump")]
assert len(ch) == 2 and all(c["invalidates"] == [] for c in ch), ch
PY
ok "a dump-path change invalidates nothing"
run "$XL" profile diff dump1 fast --json
python3 - "$T/out" <<'PY' || fail "fast math should invalidate jax"
import json, sys
d = json.load(open(sys.argv[1]))
ch = [c for c in d["changes"] if c.get("flag") == "xla_cpu_enable_fast_math"]
assert len(ch) == 1 and "jax" in ch[0]["invalidates"], ch
PY
ok "a compile-affecting flag invalidates jax"
run "$XL" profile diff dump1 fast
expect_out "+ XLA_FLAGS --xla_cpu_enable_fast_math: (none) -> true    (cold cache: jax, torch_xla)" "the text says which cache goes cold"
done_ok
