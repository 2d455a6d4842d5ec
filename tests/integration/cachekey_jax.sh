# cachekey_jax.sh - the JAX rules of etc/cachekeys.yaml against real JAX
# and a real persistent cache directory: a setting that is out of the key
# leaves every entry in use (no new file, every program a cache hit); one
# that is in the key writes a new entry for every program.
. "$(dirname "$0")/lib.sh"
cd "$SRC"
venv=$(tools/venv.sh demo 2>"$T/venv.err") || { cat "$T/venv.err"; skip "$(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"; }
PY="$SRC/$venv/bin/python"
RULES="$SRC/etc/cachekeys.yaml"
export JAX_PLATFORMS=cpu JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0 JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES=0
unset JAX_COMPILATION_CACHE_DIR JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES JAX_LOG_COMPILES
C="$T/cache"

# job DIR [VAR=VALUE...]: runs the job against cache DIR; sets $new (entries
# written) and $line (the job's "compiles: N, persistent cache hits: H")
job() {
	dir=$1; shift
	mkdir -p "$dir"
	before=$(ls "$dir" | wc -l)
	run env JAX_COMPILATION_CACHE_DIR="$dir" "$@" "$PY" "$SRC/examples/jax_shape_drift.py" 3 --steady
	[ "$rc" -eq 0 ] || { cat "$T/out" "$T/err"; fail "the job failed under: $*"; }
	new=$(( $(ls "$dir" | wc -l) - before ))
	line=$(grep '^compiles: ' "$T/out")
}
warm() {  # warm DESCRIPTION DIR [VAR=VALUE...]: nothing new, every program a hit
	what=$1; shift
	job "$@"
	expect_eq "$new" 0 "$what: no new cache entries"
	expect_eq "$line" "compiles: 0, persistent cache hits: $N" "$what: every program from the cache"
}
cold() {  # cold DESCRIPTION DIR [VAR=VALUE...]: a new entry for every program
	what=$1; shift
	job "$@"
	expect_eq "$new" "$N" "$what: a new cache entry per program"
	expect_eq "$line" "compiles: $N, persistent cache hits: 0" "$what: every program compiled"
}
partly() {  # partly DESCRIPTION K DIR [VAR=VALUE...]: K programs change, the rest are hits
	what=$1 k=$2; shift 2
	job "$@"
	expect_eq "$new" "$k" "$what: $k new cache entries"
	expect_eq "$line" "compiles: $k, persistent cache hits: $((N - k))" "$what: only the changed programs compiled"
}
excluded() { grep -qx -- "      - $1" "$RULES" || fail "etc/cachekeys.yaml does not exclude $1"; ok "rules exclude $1"; }
not_excluded() { ! grep -qx -- "      - $1" "$RULES" || fail "etc/cachekeys.yaml excludes $1"; ok "rules hash $1"; }

job "$C"
N=$new
[ "$N" -ge 1 ] || fail "the first run wrote no cache entry"
expect_eq "$line" "compiles: $N, persistent cache hits: 0" "cold cache: every program compiled"
warm "same settings" "$C"

# Excluded flags: the dump really happens, the key does not change.
excluded --xla_dump_to
excluded --xla_dump_hlo_as_text
warm "--xla_dump_to" "$C" XLA_FLAGS="--xla_dump_to=$T/dump1"
[ -n "$(ls "$T/dump1" 2>/dev/null)" ] || fail "--xla_dump_to wrote nothing: XLA did not read the flag"
ok "XLA dumped to the excluded flag's directory"
warm "another --xla_dump_to and --xla_dump_hlo_as_text" "$C" XLA_FLAGS="--xla_dump_to=$T/dump2 --xla_dump_hlo_as_text"

# Hashed flags: a real change, and an explicit default value, both count.
not_excluded --xla_cpu_enable_fast_math
cold "--xla_cpu_enable_fast_math=true" "$C" XLA_FLAGS=--xla_cpu_enable_fast_math=true
cold "--xla_cpu_enable_fast_math=false (the default, named)" "$C" XLA_FLAGS=--xla_cpu_enable_fast_math=false

# Tokens: sorted, split on any whitespace, duplicates counted.
cold "two flags" "$C" XLA_FLAGS="--xla_cpu_enable_fast_math=false --xla_backend_optimization_level=2"
warm "the same two flags in the other order" "$C" XLA_FLAGS="--xla_backend_optimization_level=2 --xla_cpu_enable_fast_math=false"
warm "the same two flags split by a tab" "$C" XLA_FLAGS="--xla_backend_optimization_level=2	--xla_cpu_enable_fast_math=false"
cold "a flag given twice" "$C" XLA_FLAGS="--xla_cpu_enable_fast_math=false --xla_cpu_enable_fast_math=false"

# LIBTPU_INIT_ARGS is hashed even where no TPU reads it.
cold "LIBTPU_INIT_ARGS on the CPU" "$C" LIBTPU_INIT_ARGS=--xla_tpu_enable_flash_attention=false

# Excluded tokens whose effect still reaches the key.
excluded --xla_dump_include_timestamp
warm "--xla_dump_include_timestamp=false (the default)" "$C" XLA_FLAGS=--xla_dump_include_timestamp=false
cold "--xla_dump_include_timestamp=true" "$C" XLA_FLAGS=--xla_dump_include_timestamp=true
excluded --xla_force_host_platform_device_count
cold "--xla_force_host_platform_device_count=2" "$C" XLA_FLAGS=--xla_force_host_platform_device_count=2

# Settings that only decide whether an entry is written, or what is logged.
warm "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS" "$C" JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0.0001
warm "JAX_LOG_COMPILES and JAX_EXPLAIN_CACHE_MISSES" "$C" JAX_LOG_COMPILES=1 JAX_EXPLAIN_CACHE_MISSES=1
warm "JAX_DUMP_IR_TO" "$C" JAX_DUMP_IR_TO="$T/ir"
warm "TF_CPP_MIN_LOG_LEVEL" "$C" TF_CPP_MIN_LOG_LEVEL=0

# Options that go into the hashed compile options.
cold "JAX_OPTIMIZATION_LEVEL" "$C" JAX_OPTIMIZATION_LEVEL=O1
cold "JAX_MEMORY_FITTING_LEVEL" "$C" JAX_MEMORY_FITTING_LEVEL=O0
cold "JAX_EXEC_TIME_OPTIMIZATION_EFFORT" "$C" JAX_EXEC_TIME_OPTIMIZATION_EFFORT=0.5
cold "JAX_USE_SHARDY_PARTITIONER" "$C" JAX_USE_SHARDY_PARTITIONER=0
cold "JAX_COMPILER_ENABLE_REMAT_PASS" "$C" JAX_COMPILER_ENABLE_REMAT_PASS=0
cold "JAX_DISABLE_MOST_OPTIMIZATIONS" "$C" JAX_DISABLE_MOST_OPTIMIZATIONS=1
cold "JAX_COMPILATION_CACHE_INCLUDE_METADATA_IN_KEY" "$C" JAX_COMPILATION_CACHE_INCLUDE_METADATA_IN_KEY=1
# ... or into some programs only: the two small programs (fewer operations
# than the default threshold of 10), the one with a matrix product, none
# (every program is float32 already).
partly "JAX_COMPILER_DETAILED_LOGGING_MIN_OPS=1" 2 "$C" JAX_COMPILER_DETAILED_LOGGING_MIN_OPS=1
partly "JAX_DEFAULT_MATMUL_PRECISION" 1 "$C" JAX_DEFAULT_MATMUL_PRECISION=highest
warm "JAX_ENABLE_X64" "$C" JAX_ENABLE_X64=1

# The cache directory's spelling is in the key by default ...
cp -R "$C" "$T/copy"
cold "the same entries copied to another directory" "$T/copy"
ln -s "$C" "$T/link"
cold "the same directory through a symbolic link" "$T/link"
warm "the same directory with a trailing slash" "$C/"
cd "$T"
cold "the same directory spelled relative to the working directory" cache
cd "$SRC"
# ... and not once the XLA caches that carry it are off.
job "$T/c2" JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES=none
cp -R "$T/c2" "$T/c2copy"
warm "a copy, with JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES=none" "$T/c2copy" JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES=none
cold "the setting itself back to its default" "$T/c2copy"
done_ok
