# runtime_check.sh - `run` and `exec` stop before the start (69) when the
# Python the command names (argv[0], a script's #!) lacks the runtime the
# profile is for (JAX_PLATFORMS: jax; PJRT_DEVICE: torch_xla; without
# either, any runtime whose variables it sets) and every other runtime it
# sets variables for (one of those: a warning), name the interpreter and
# one near that has it (VIRTUAL_ENV), and launch anyway with
# --no-runtime-check; a command that names no Python is never stopped.
# Two venvs without pip, one with jax's metadata only: the detection reads
# metadata, it imports nothing.
. "$(dirname "$0")/lib.sh"
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P" XLAUNCH_STORE="$T/store/calib.db"
unset VIRTUAL_ENV
python3 -m venv --without-pip "$T/bare" >/dev/null 2>&1 || skip "python3 -m venv does not work here"
python3 -m venv --without-pip "$T/withjax" >/dev/null 2>&1 || skip "python3 -m venv does not work here"
sp=$("$T/withjax/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir -p "$sp/jax-0.10.2.dist-info"
printf 'Metadata-Version: 2.1\nName: jax\nVersion: 0.10.2\n' >"$sp/jax-0.10.2.dist-info/METADATA"
BARE="$T/bare/bin/python" JAXPY="$T/withjax/bin/python"
printf 'description: JAX\nenv: {JAX_PLATFORMS: cpu}\n' >"$P/forjax.yaml"
printf 'description: PyTorch/XLA\nenv: {PJRT_DEVICE: CPU}\n' >"$P/forxla.yaml"
printf 'description: either\nenv: {JAX_COMPILATION_CACHE_DIR: /tmp/x, XLA_PERSISTENT_CACHE_PATH: /tmp/y}\n' >"$P/either.yaml"
printf 'description: none\nenv: {PLAIN: yes}\n' >"$P/plain.yaml"

run "$XL" exec forjax -- "$BARE" -c 'print("started")'
expect_rc 69 "exec: the command's Python has no jax"
expect_err "profile 'forjax' is for JAX (it sets JAX_PLATFORMS) and $BARE (the command) has no jax" "names the interpreter and what it lacks"
expect_err "launch anyway with --no-runtime-check" "names the way round"
expect_no_out started "nothing started"
run env VIRTUAL_ENV="$T/withjax" "$XL" exec forjax -- "$BARE" -c 'print("started")'
expect_rc 69 "still stopped with a VIRTUAL_ENV that has it"
expect_err "$JAXPY (VIRTUAL_ENV) has it" "names the one that has it"
run "$XL" exec --no-runtime-check forjax -- "$BARE" -c 'print("started")'
expect_rc 0 "--no-runtime-check launches anyway"
expect_out started "started"
run "$XL" exec forjax -- "$JAXPY" -c 'print("started")'
expect_rc 0 "a Python with jax"
printf '#!%s\nprint("script")\n' "$BARE" >"$T/job.py"; chmod +x "$T/job.py"
run "$XL" exec forjax -- "$T/job.py"
expect_rc 69 "a script's #!"
expect_err "(the script's #!) has no jax" "says where the interpreter came from"
run "$XL" exec forjax -- sh -c 'echo shell'
expect_rc 0 "a command that names no Python is never stopped"
run "$XL" exec forxla -- "$JAXPY" -c 'print("started")'
expect_rc 69 "PJRT_DEVICE: torch_xla"
expect_err "is for PyTorch/XLA (it sets PJRT_DEVICE)" "the runtime named"
printf 'description: TPU, PyTorch/XLA or JAX\nenv: {PJRT_DEVICE: TPU, JAX_COMPILATION_CACHE_DIR: /tmp/x}\n' >"$P/shared.yaml"
run "$XL" exec shared -- "$JAXPY" -c 'print("started")'
expect_rc 0 "a Python with another runtime the profile sets variables for is not stopped"
expect_err "warning: profile 'shared' is for PyTorch/XLA (it sets PJRT_DEVICE) and $JAXPY has no torch_xla: launching" "but told"
expect_out started "started"
run "$XL" exec either -- "$JAXPY" -c 'print("started")'
expect_rc 0 "no marker: any runtime whose variables it sets"
run "$XL" exec either -- "$BARE" -c 'print("started")'
expect_rc 69 "none of them"
expect_err "has no jax or torch_xla" "either named"
run "$XL" exec plain -- "$BARE" -c 'print("started")'
expect_rc 0 "a profile for no runtime"

run "$XL" run forjax -- "$BARE" -c 'print("started")'
expect_rc 69 "run stops too"
expect_no_out started "nothing started"
[ ! -d "$XDG_STATE_HOME/xlaunch/runs" ] || [ -z "$(ls "$XDG_STATE_HOME/xlaunch/runs")" ] ||
	fail "a run directory was made for a launch that was stopped"
ok "no run directory"
run "$XL" run --dry-run forjax -- "$BARE" -c 'print("started")'
expect_rc 0 "a dry run plans all the same"
run "$XL" run --no-runtime-check --no-record forjax -- "$BARE" -c 'print("started")'
expect_rc 0 "run --no-runtime-check"
expect_out started "started"

# --explain shows torch_xla's start-up defaults only for a job that loads it
printf 'description: JAX with shared caches\nenv: {JAX_PLATFORMS: cpu, XLA_PERSISTENT_CACHE_PATH: /tmp/y}\n' >"$P/jaxcache.yaml"
run "$XL" profile show --explain jaxcache
expect_rc 0 "explain a JAX profile"
expect_no_out "TPU_ML_PLATFORM" "no torch_xla defaults for a JAX job"
expect_no_out "added by the runtime at start" "nothing added"
printf 'description: TPU\nenv: {PJRT_DEVICE: TPU}\n' >"$P/xlatpu.yaml"
# ... and only where the interpreter the launch would start has torch_xla;
# the explanation says which runtime it assumed, and why
python3 -m venv --without-pip "$T/withxla" >/dev/null 2>&1 || skip "python3 -m venv does not work here"
sp=$("$T/withxla/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir -p "$sp/torch_xla-2.9.0.dist-info"
printf 'Metadata-Version: 2.1\nName: torch_xla\nVersion: 2.9.0\n' >"$sp/torch_xla-2.9.0.dist-info/METADATA"
run env VIRTUAL_ENV="$T/withxla" "$XL" profile show --explain xlatpu
expect_out "TPU_ML_PLATFORM=PyTorch/XLA" "torch_xla's defaults for a torch_xla job"
expect_out "runtime assumed: PyTorch/XLA ($T/withxla/bin/python has torch_xla 2.9.0)" "the runtime assumed, and why"
run env VIRTUAL_ENV="$T/withjax" "$XL" profile show --explain xlatpu
expect_no_out "TPU_ML_PLATFORM" "no torch_xla defaults where the interpreter has JAX only"
expect_out "runtime assumed: JAX ($JAXPY, found by VIRTUAL_ENV, has no torch_xla)" "says it assumed JAX"
run env VIRTUAL_ENV="$T/bare" "$XL" profile show --explain xlatpu
expect_no_out "TPU_ML_PLATFORM" "no torch_xla defaults where the interpreter has neither runtime"
expect_out "runtime assumed: neither JAX nor PyTorch/XLA ($BARE" "says it assumed neither"
run env VIRTUAL_ENV= PATH=/nonexistent "$XL" profile show --explain xlatpu
expect_out "runtime assumed: PyTorch/XLA, from the profile (no interpreter to ask" "no interpreter: the profile decides, said so"
expect_out "TPU_ML_PLATFORM=PyTorch/XLA" "and its defaults shown"

# a variable every XLA runtime reads (TF_CPP_MIN_LOG_LEVEL, set by the
# shipped xla-base) names no runtime: a JAX job under a profile that
# extends xla-base is launched, with no word of PyTorch/XLA
printf 'description: old\nextends: xla-base\nflags: {XLA_FLAGS: {xla_cpu_enable_fast_math: false}}\n' >"$P/old.yaml"
run "$XL" exec old -- "$JAXPY" -c 'print("started")'
expect_rc 0 "a JAX interpreter under a profile extending xla-base"
expect_out started "started"
if grep -q "PyTorch/XLA" "$T/err"; then cat "$T/err"; fail "TF_CPP_MIN_LOG_LEVEL taken for PyTorch/XLA"; fi
ok "no runtime decided from TF_CPP_MIN_LOG_LEVEL"
run "$XL" exec old -- "$BARE" -c 'print("started")'
expect_rc 0 "nor is an interpreter with neither runtime stopped by it"
run "$XL" profile show --explain old
expect_no_out "TPU_ML_PLATFORM" "no torch_xla defaults for xla-base's logging variable"

# profile check: a misspelt runtime variable and names no runtime has are
# warned about with what they would be; the job's own variables are not
cat >"$P/typos.yaml" <<'Y'
description: misspellings
env:
  JAX_ENABLE_X46: "1"
  JAX_PLATFORMS: "cpu,cpux"
  PJRT_DEVICE: tpu
  MICRO_BATCH: "8"
Y
run "$XL" profile check typos
expect_rc 0 "warnings, not refusals"
expect_err "typos.yaml:3:19: JAX_ENABLE_X46: not in any catalog; did you mean 'JAX_ENABLE_X64'?" "did you mean, with the place"
expect_err "JAX_PLATFORMS: 'cpux' is not a platform xlaunch knows (cpu, cuda, rocm, tpu, gpu, or an installed PJRT plugin's name)" "the platforms"
expect_err "did you mean 'cpu'?" "the nearest platform"
expect_err "PJRT_DEVICE: 'tpu' is not a device xlaunch knows (CPU, CUDA, TPU, XPU, NEURON" "PJRT_DEVICE's devices"
expect_err "did you mean 'TPU'?" "case matters"
grep -q MICRO_BATCH "$T/err" && fail "the job's own variable was warned about"
ok "the job's own variable passes"
[ "$(grep -c "JAX_ENABLE_X46" "$T/err")" -eq 1 ] || fail "said more than once"
ok "said once"
done_ok
