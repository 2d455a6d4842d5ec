# storm_culprit.sh - the function a compile storm names, from real JAX jobs
# on the CPU (examples/jax_recompile.py under the shipped cpu-jax profile,
# nothing logged): the user's jitted function first when JAX's own
# programs (jnp.ones, jax.random.normal for each new shape) recompile in
# the same steps, those listed after it as JAX's; two functions of the
# user's storming at different rates; the place and cause from JAX's own
# log when it is on; the same verdict run after run (STORM_REPEAT times,
# default 2); one count in the line; a healthy job whose start compiles
# JAX's programs in several shapes is ok and prints no "recompiled:" line.
. "$(dirname "$0")/lib.sh"
cd "$SRC"
venv=$(tools/venv.sh demo 2>"$T/venv.err") || { cat "$T/venv.err"; skip "$(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"; }
PY="$SRC/$venv/bin/python"
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P:$SRC/profiles" XLAUNCH_STORE="$T/store/calib.db"
unset JAX_LOG_COMPILES JAX_EXPLAIN_CACHE_MISSES JAX_COMPILATION_CACHE_DIR
n=0
job() {  # job PROFILE MODE [ARG...]: a compile cache of its own (cold)
	n=$((n + 1))
	prof=$1; shift
	XLAUNCH_CACHE_ROOT="$T/cache-$n" run "$XL" run "$prof" -c mb256 -- "$PY" examples/jax_recompile.py "$@"
	expect_rc 0 "$* exits 0"
}
expect_no_err() {
	! grep -qF -- "$1" "$T/err" || { echo "--- stderr"; cat "$T/err"; fail "$2: stderr has '$1'"; }
	ok "$2"
}
outcome_line() { grep 'attempt 1/1: [a-z-]* (' "$T/err" | tail -1; }

# jnp.ones and jnp.arange for a new shape every step: JAX's own programs
# recompile more often than train_step, in the same steps; the user's is
# named, with the input that changed, and theirs listed after it
i=0
repeat=${STORM_REPEAT:-2}
while [ $i -lt "$repeat" ]; do
	i=$((i + 1))
	job cpu-jax ones 40
	m=$(announced_manifest)
	expect_eq "$(jget "$m" outcome)" compile-storm "ones, run $i: a storm"
	expect_err "compile-storm (jit(train_step) recompiled " "ones, run $i: the user's function named"
	expect_err "input 1 (x.1) changed at every recompilation: f32[100,64] -> f32[101,64] -> ... -> f32[139,64]" "ones, run $i: the input that changed"
	expect_err "; JAX's own programs recompiling with it: jit(broadcast_in_dim) (" "ones, run $i: JAX's own listed as such"
	expect_eq "$(jget "$m" compile.storm_functions.0.name)" "jit(train_step)" "ones, run $i: first in the manifest's ranking"
	expect_eq "$(jget "$m" compile.storm_functions.1.internal)" True "ones, run $i: then JAX's own"
	# one count of recompilations in the line: "compiled N times" and the
	# summary's "(N recompilations)" are gone from it
	outcome_line | grep -Eq '[^e]compiled [0-9]+ times| [0-9]+ recompilations\)| recompiled .* recompiled ' &&
		fail "ones, run $i: more than one count: $(outcome_line)"
	ok "ones, run $i: one count"
done

# jax.random.normal for a new shape every step: JAX's _normal recompiles
# beside train_step; with JAX's own log on (debug-recompile), the place
# it names is the headline's and the manifest's
printf 'description: cpu-jax, compile logging on\nextends: [cpu-jax, debug-recompile]\n' >"$P/jaxlog.yaml"
job jaxlog normal 40
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" compile-storm "normal: a storm"
expect_err "compile-storm (jit(train_step) (jax_recompile.py:" "normal: the user's function, at the place JAX's log gave"
expect_err "JAX's own programs recompiling with it: " "normal: _normal listed as JAX's"
place=$(jget "$m" compile.storm_functions.0.place)
case "$place" in *jax_recompile.py:[0-9]*) ok "the manifest's place: $place" ;; *) fail "the manifest's place: $place" ;; esac
expect_err "different input types" "normal: the cause in JAX's words"

# two functions of the user's, storming at different rates: the costlier
# one named, the other listed
job cpu-jax rates 40 --every 3
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" compile-storm "rates: a storm"
expect_err "compile-storm (jit(train_step) recompiled " "rates: the function recompiling every step named"
expect_err "; also recompiling: jit(eval_step) (" "rates: the other listed"
expect_eq "$(jget "$m" compile.storm_functions.1.name)" "jit(eval_step)" "rates: second in the manifest"

# healthy: a model's parameters made in several shapes at start, then one
# shape: ok, and no "recompiled:" line for JAX's own programs
job cpu-jax model 60
m=$(announced_manifest)
expect_eq "$(jget "$m" outcome)" ok "model: ok"
expect_no_err "recompiled:" "model: quiet"
rec=$(python3 -c 'import json,sys; print(sum(1 for f in json.load(open(sys.argv[1]))["compile"]["functions"] if f["internal"] and f["compiles"] > 1))' "$m")
[ "$rec" -gt 0 ] || fail "model: no recompilation of JAX's own programs in the manifest"
ok "model: $rec of JAX's own programs recompiled at start, in the manifest only"
done_ok
