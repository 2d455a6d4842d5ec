#!/bin/sh
# flags list/explain/lint on the command line, and the checks wired into
# env/profile check: exit codes 0, 64, 65, 66, 77 and the messages.
. "$(dirname "$0")/lib.sh"

run "$XL" flags list --family xla
expect_rc 0 "flags list --family xla"
n=$(wc -l <"$T/out")
[ "$n" -ge 200 ] || fail "flags list --family xla: only $n flags"
ok "xla family has $n flags"
expect_out "xla_dump_to" "list names xla_dump_to"

run "$XL" flags list --family jaxx
expect_rc 64 "unknown family"
expect_err "did you mean 'jax'?" "family suggestion"

run "$XL" flags list --json
expect_rc 0 "flags list --json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["families"])>=6; assert all("source" in f for f in d["families"]); assert len(d["flags"])>500' "$T/out" \
	|| fail "flags list --json shape"
ok "json shape"

run "$XL" flags explain -- --xla_gpu_per_fusion_autotune_cache_dir
expect_rc 0 "explain"
expect_out "tags:        cache" "explain shows tags"
expect_out "openxla/xla" "explain shows the source"

run "$XL" flags explain xla_gpu_enable_trition_gemm
expect_rc 66 "explain unknown"
expect_err "did you mean 'xla_gpu_enable_triton_gemm'?" "explain suggestion"

# MaxText's published LIBTPU_INIT_ARGS mistakes, as libtpu reads them: it
# ignores a word that is not a flag, reads the rest and takes the last of
# two values (it starts: warnings; libtpu_flags.sh checks it against libtpu)
run "$XL" flags lint --var LIBTPU_INIT_ARGS "--xla_tpu_enable_async_collective_fusion=true --xla_enable_async_all_gather=true TPU_MEGACORE=MEGACORE_DENSE --xla_tpu_enable_async_collective_fusion=false"
expect_rc 0 "maxtext string: libtpu starts"
expect_out "'TPU_MEGACORE=MEGACORE_DENSE' is not a flag: libtpu ignores it" "bare assignment named"
expect_out "TPU_MEGACORE is an environment variable" "and where it belongs"
expect_out "[duplicate]" "the flag set twice"
expect_out "libtpu takes the last value" "and which value counts"
run "$XL" flags lint --var LIBTPU_INIT_ARGS "--xla_dump_to=/tmp/x"
expect_rc 65 "an XLA flag in LIBTPU_INIT_ARGS is refused"
expect_out "[xla-flag]" "as an XLA flag"

run "$XL" flags lint --xla_gpu_enable_triton_gemm=false --xla_gpu_enable_latency_hiding_scheduler=true
expect_rc 0 "clean string (unquoted words)"
expect_out "0 errors" "clean summary"

run "$XL" flags lint --json --timing "--xla_dump_to=/tmp/x"
expect_rc 65 "timing lint"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["reports"][0]; assert r["code"]=="debug-in-timing" and r["token"]=="--xla_dump_to=/tmp/x" and d["errors"]==1' "$T/out" \
	|| fail "lint --json report"
ok "lint json"

run "$XL" flags lint --var XLA_PYTHON_CLIENT_PREALLOCATE no
expect_rc 65 "preallocate=no"
expect_out "[misread-bool]" "misread boolean"

run "$XL" flags lint
expect_rc 64 "lint without a string"

# the checks wired into profile resolution
mkdir -p "$T/p"
cat >"$T/p/typo.yaml" <<'Y'
flags:
  XLA_FLAGS:
    xla_gpu_enable_trition_gemm: false
Y
cat >"$T/p/remote.yaml" <<'Y'
policy: {cache: local}
env:
  XLA_PERSISTENT_CACHE_PATH: gs://bucket/xla
Y
cat >"$T/p/timed.yaml" <<'Y'
policy: {timing: true}
env:
  PT_XLA_DEBUG_LEVEL: 1
Y
cat >"$T/p/good.yaml" <<'Y'
policy: {cache: local}
env:
  PJRT_DEVICE: TPU
  JAX_ENABLE_X64: "yes"
  JAX_COMPILATION_CACHE_DIR: ${CACHE_ROOT}/jax
Y
export CACHE_ROOT="$T/cache"
run "$XL" --profile-path "$T/p" env typo
expect_rc 65 "unknown XLA flag refused"
expect_err "typo.yaml:3:" "provenance of the flag"
expect_err "did you mean 'xla_gpu_enable_triton_gemm'?" "suggestion"
run "$XL" --profile-path "$T/p" env remote
expect_rc 77 "remote cache refused"
expect_err "policy 'cache: local'" "rule named"
expect_err "XLA_PERSISTENT_CACHE_PATH" "variable named"
run "$XL" --profile-path "$T/p" env timed
expect_rc 77 "debug in timing refused"
expect_err "policy 'timing: true'" "timing rule named"
run "$XL" --profile-path "$T/p" env good
expect_rc 0 "good profile"
expect_out "JAX_ENABLE_X64='true'" "boolean normalized for JAX"
[ ! -e "$T/cache" ] || fail "env created a cache directory"
ok "env creates no cache directory"
run "$XL" --profile-path "$T/p" exec good -- true
expect_rc 0 "exec good profile"
[ -d "$T/cache/jax" ] || fail "exec did not create the cache directory"
ok "exec creates the cache directory"
done_ok
