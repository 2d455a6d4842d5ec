# cachekey_torch_xla.sh - the torch_xla rules of etc/cachekeys.yaml against
# real torch_xla on PJRT_DEVICE=CPU.  torch_xla names each persistent-cache
# file by the graph hash, which folds in its environment hash: the same file
# name means the same key.  On the CPU the file is written but cannot be read
# back, which is checked too, with torch_xla's own words.
. "$(dirname "$0")/lib.sh"
# the sanitizer pass of CI: what it would add is run there by other tests
case "$XL" in */build/san/*) skip "under the sanitizer build: its time goes to torch_xla compiling and reloading; the cache-key C runs under the sanitizers in cachekey_jax and cachekey_warn" ;; esac
cd "$SRC"
venv=$(tools/venv.sh torch 2>"$T/venv.err") || { cat "$T/venv.err"; skip "$(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"; }
PY="$SRC/$venv/bin/python"
RULES="$SRC/etc/cachekeys.yaml"
export PJRT_DEVICE=CPU
unset XLA_PERSISTENT_CACHE_PATH XLA_PERSISTENT_CACHE_READ_ONLY PT_XLA_DEBUG_LEVEL PT_XLA_DEBUG \
	TPU_MEGACORE XLA_IR_DEBUG XLA_HLO_DEBUG

# key NAME [VAR=VALUE...]: runs two steps with a cache of its own in
# $T/cache-NAME and sets $key to the one file torch_xla wrote there
key() {
	name=$1; shift
	run env XLA_PERSISTENT_CACHE_PATH="$T/cache-$name" "$@" "$PY" "$SRC/examples/train_torch_xla.py" 2
	[ "$rc" -eq 0 ] || { cat "$T/out" "$T/err"; fail "$name: the job failed"; }
	set -- "$T/cache-$name"/*
	[ $# -eq 1 ] && [ -f "$1" ] || fail "$name: expected one cache file, found: $*"
	key=$(basename "$1")
}
excluded() { sed -n '/^torch_xla:/,$p' "$RULES" | grep -qx -- "      - $1" || fail "etc/cachekeys.yaml: torch_xla does not exclude $1"; ok "rules exclude $1"; }

key base
base=$key
expect_out "compiles: 1, persistent cache hits: 0, misses: 1, failed loads: 0" "first launch: one compilation, written"

# The second launch finds the file and cannot load it on the CPU.
run env XLA_PERSISTENT_CACHE_PATH="$T/cache-base" "$PY" "$SRC/examples/train_torch_xla.py" 2
expect_rc 0 "second launch"
expect_err "Failed to deserialize executable: UNIMPLEMENTED: Deserializing serialized executable not supported." "torch_xla says why the entry is unusable"
expect_out "compiles: 1, persistent cache hits: 0, misses: 0, failed loads: 1" "second launch: a failed load and a compilation"
expect_eq "$(ls "$T/cache-base")" "$base" "the entry is written again under the same name"

excluded --xla_dump_to
key dump XLA_FLAGS="--xla_dump_to=$T/xla-dump"
expect_eq "$key" "$base" "--xla_dump_to is out of the key"
[ -n "$(ls "$T/xla-dump" 2>/dev/null)" ] || fail "--xla_dump_to wrote nothing: XLA did not read the flag"
ok "XLA dumped to the excluded flag's directory"

excluded --xla_dump_include_timestamp
key stamp XLA_FLAGS=--xla_dump_include_timestamp=true
expect_eq "$key" "$base" "--xla_dump_include_timestamp=true is out of the key (unlike JAX)"

key fastmath XLA_FLAGS=--xla_cpu_enable_fast_math=true
[ "$key" != "$base" ] || fail "--xla_cpu_enable_fast_math=true left the key unchanged"
ok "--xla_cpu_enable_fast_math=true changes the key"

key opt XLA_FLAGS=--xla_backend_optimization_level=2
opt=$key
[ "$opt" != "$base" ] || fail "--xla_backend_optimization_level=2 left the key unchanged"
ok "--xla_backend_optimization_level=2 changes the key"
key optfast XLA_FLAGS="--xla_cpu_enable_fast_math=false --xla_backend_optimization_level=2"
expect_eq "$key" "$opt" "--xla_cpu_enable_fast_math=false, which torch_xla adds itself, leaves the key as it was"
key opttab XLA_FLAGS="--xla_cpu_enable_fast_math=false	--xla_backend_optimization_level=2"
[ "$key" != "$opt" ] || fail "a tab split the flags: torch_xla was expected to split on spaces only"
ok "a tab does not split tokens"

key megacore TPU_MEGACORE=megacore_dense
[ "$key" != "$base" ] || fail "TPU_MEGACORE left the key unchanged"
ok "TPU_MEGACORE is hashed, even on the CPU"

key hlodebug XLA_HLO_DEBUG=1
[ "$key" != "$base" ] || fail "XLA_HLO_DEBUG left the key unchanged"
ok "XLA_HLO_DEBUG is hashed"
key irdebug XLA_IR_DEBUG=1
[ "$key" != "$base" ] || fail "XLA_IR_DEBUG left the key unchanged"
ok "XLA_IR_DEBUG is hashed"

key debug PT_XLA_DEBUG_LEVEL=1
expect_eq "$key" "$base" "PT_XLA_DEBUG_LEVEL is out of the key"
expect_err "Compilation Analysis: Compilation Cause" "PT_XLA_DEBUG_LEVEL=1 printed its analysis"

# The dump flags `xlaunch run` adds to an XLA job for XLA's memory-usage
# reports, exactly as it adds them, into a directory of the run: the key is
# the same, and XLA wrote a report.
mkdir -p "$T/profiles"
printf 'description: torch_xla on the CPU\nenv: {PJRT_DEVICE: CPU}\n' >"$T/profiles/txla.yaml"
run env XLAUNCH_PROFILE_PATH="$T/profiles" XLAUNCH_STORE="$T/calib.db" "$XL" run txla --no-record -- true
expect_rc 0 "a run under a torch_xla profile"
m=$(ls -d "$XDG_STATE_HOME"/xlaunch/runs/* | sort | tail -1)
tokens=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["xla_dump"]["tokens"])' "$m/manifest.json")
case "$tokens" in --xla_dump_to=*) ;; *) fail "xlaunch added no dump flags: $tokens" ;; esac
for t in $tokens; do excluded "${t%%=*}"; done
tokens=$(echo "$tokens" | sed "s|--xla_dump_to=[^ ]*|--xla_dump_to=$T/xl-dump|")
key xldump XLA_FLAGS="$tokens"
expect_eq "$key" "$base" "the dump flags xlaunch adds are out of the key"
ls "$T/xl-dump" | grep -q -- '-memory-usage-report.txt$' || fail "no memory-usage report in the dump"
ok "torch_xla wrote its memory-usage report"
done_ok
