#!/bin/sh
# run, exec, flags lint/explain and profile show judge flags against the
# release the job will load: the interpreter the command starts and the
# jaxlib it has installed (real venvs from PyPI: jaxlib 0.6.2 and 0.10.2).
# A flag jaxlib 0.6.2 registers launches under 0.6.2 (its XLA starts) and
# is refused under 0.10.2 with the releases that have it and its successor;
# under jaxlib 0.12.0.1, known by what its wheel registers, a flag it
# registers launches and one it dropped is refused; under a release newer
# than the knowledge an unknown flag is a warning, never a refusal.  The interpreter is looked up in the environment the
# profile gives the job (tests/integration/release_detect.sh covers the
# rest with fake venvs).
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"

old=$(cd "$SRC" && tools/venv.sh jaxlib 0.6.2 2>"$T/venv.err") ||
	skip "$(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"
cur=$(cd "$SRC" && tools/venv.sh demo 2>"$T/venv.err") ||
	skip "$(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"
case "$old" in /*) ;; *) old="$SRC/$old" ;; esac
case "$cur" in /*) ;; *) cur="$SRC/$cur" ;; esac
unset VIRTUAL_ENV
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P"
cat >"$P/graphs.yaml" <<'EOF'
description: CUDA graphs the old way
env: {JAX_PLATFORMS: cpu}
flags:
  XLA_FLAGS: {xla_gpu_graph_level: 1}
EOF
JOB='import jax; jax.devices(); print("xla started")'

# jaxlib 0.6.2 registers it: the launch goes ahead and its XLA takes it
run "$XL" run graphs --no-record -- "$old/bin/python" -c "$JOB"
expect_rc 0 "run under jaxlib 0.6.2"
expect_out "xla started" "jaxlib 0.6.2's XLA took xla_gpu_graph_level"
run "$XL" exec graphs -- "$old/bin/python" -c "$JOB"
expect_rc 0 "exec under jaxlib 0.6.2"
expect_out "xla started" "exec: jaxlib 0.6.2's XLA took it"

# jaxlib 0.10.2 does not: refused before the launch, with the releases that
# have it and the successor upstream names
run "$XL" run graphs --no-record -- "$cur/bin/python" -c "$JOB"
expect_rc 65 "run under jaxlib 0.10.2 is refused"
expect_err "'xla_gpu_graph_level' is registered by jaxlib 0.4.30 to 0.7.1" "the refusal names the releases"
expect_err "has jaxlib 0.10.2, whose XLA aborts on it" "and the release the job loads"
expect_err "upstream replaced it with --xla_gpu_enable_command_buffer" "and the successor"
expect_no_out "xla started" "nothing launched"
run "$XL" exec graphs -- "$cur/bin/python" -c "$JOB"
expect_rc 65 "exec under jaxlib 0.10.2 is refused"
# the interpreter of a script's "#!" line counts the same
printf '#!%s\nimport jax; jax.devices(); print("xla started")\n' "$old/bin/python" >"$T/job.py"
chmod +x "$T/job.py"
run "$XL" exec graphs -- "$T/job.py"
expect_rc 0 "a script whose #! is the 0.6.2 venv's Python"
expect_out "xla started" "its XLA took the flag"
# without a Python in argv: $VIRTUAL_ENV's
VIRTUAL_ENV="$cur" run "$XL" exec graphs -- true
expect_rc 65 "VIRTUAL_ENV's jaxlib 0.10.2 when the command is no Python"
# the python the child runs is the one on the PATH the profile gives it,
# not the shell's: judged against that one, and its XLA takes the flag
cat >"$P/oldpath.yaml" <<EOF
description: CUDA graphs the old way, the 0.6.2 venv first on the job's PATH
env: {JAX_PLATFORMS: cpu, PATH: "$old/bin:\${PATH}"}
flags:
  XLA_FLAGS: {xla_gpu_graph_level: 1}
EOF
PATH="$cur/bin:$PATH" run "$XL" exec oldpath -- python -c "$JOB"
expect_rc 0 "exec: the profile's PATH gives jaxlib 0.6.2 (the shell's gives 0.10.2)"
expect_out "xla started" "exec: the 0.6.2 venv's XLA took it"
PATH="$cur/bin:$PATH" run "$XL" run oldpath --no-record -- python -c "$JOB"
expect_rc 0 "run: the profile's PATH"
expect_out "xla started" "run: the 0.6.2 venv's XLA took it"

# a release known by what its wheel registers (releases.yaml `observed`):
# the real jaxlib 0.12.0.1 where a Python 3.12 is found.  A flag only
# releases after 0.11.0 register launches, with no warning; a flag 0.11.1
# dropped is refused, and its own XLA aborts on it.
cat >"$P/newer.yaml" <<'EOF'
description: a flag only releases after 0.11.0 register
env: {JAX_PLATFORMS: cpu}
flags:
  XLA_FLAGS: {xla_gpu_async_copy_min_bytes: 0}
EOF
cat >"$P/dropped.yaml" <<'EOF'
description: a flag jaxlib 0.11.1 dropped
env: {JAX_PLATFORMS: cpu}
flags:
  XLA_FLAGS: {xla_llvm_force_inline_before_split: true}
EOF
if new=$(cd "$SRC" && tools/venv.sh jaxlib 0.12.0.1 2>"$T/venv.err"); then
	case "$new" in /*) ;; *) new="$SRC/$new" ;; esac
	run "$XL" run newer --no-record -- "$new/bin/python" -c "$JOB"
	expect_rc 0 "jaxlib 0.12.0.1: launched"
	expect_out "xla started" "and its XLA took the flag its wheel registers"
	! grep -q "warning:" "$T/err" || { cat "$T/err"; fail "a warning for a flag the wheel registers"; }
	ok "no warning: the wheel's names are known"
	run "$XL" run dropped --no-record -- "$new/bin/python" -c "$JOB"
	expect_rc 65 "jaxlib 0.12.0.1: a flag 0.11.1 dropped is refused"
	expect_err "is registered by jaxlib 0.4.30 to 0.11.0" "with the releases that have it"
	expect_err "has jaxlib 0.12.0.1, whose XLA aborts on it" "and what this one does"
	run env XLA_FLAGS=--xla_llvm_force_inline_before_split=true JAX_PLATFORMS=cpu \
		"$new/bin/python" -c "$JOB"
	[ "$rc" -ne 0 ] || fail "jaxlib 0.12.0.1's XLA took a flag its wheel does not register"
	expect_err "xla_llvm_force_inline_before_split" "its own XLA aborts on it, naming it"
else
	echo "jaxlib 0.12.0.1 not checked: $(grep SKIP "$T/venv.err" | tail -1)"
fi

# a release newer than the knowledge: a fake one, a throwaway venv whose
# only jaxlib is a METADATA file saying 0.13.0 (named so: nothing of jaxlib
# is installed there)
python3 -m venv --without-pip "$T/fake-newer" || fail "python3 -m venv"
site=$("$T/fake-newer/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir -p "$site/jaxlib-0.13.0.dist-info"
printf 'Metadata-Version: 2.1\nName: jaxlib\nVersion: 0.13.0\n' >"$site/jaxlib-0.13.0.dist-info/METADATA"
run "$XL" run dropped --no-record -- "$T/fake-newer/bin/python" -c 'print("launched")'
expect_rc 0 "a fake jaxlib 0.13.0 (METADATA only): launched"
expect_out "launched" "the child ran"
expect_err "warning:" "a warning"
expect_err "jaxlib 0.13.0" "the warning names the release"
expect_err "newer than every release xlaunch knows" "and says why"

# flags lint and explain take --python and --release (not as flag text)
run "$XL" flags lint --python "$old/bin/python" -- --xla_gpu_graph_level=1
expect_rc 0 "lint --python: 0.6.2 registers it"
expect_out "judged against jaxlib 0.6.2" "lint says what it judged against"
run "$XL" flags lint --python "$cur/bin/python" -- --xla_gpu_graph_level=1
expect_rc 65 "lint --python: 0.10.2 does not"
expect_out "[not-in-release]" "the code of the report"
run "$XL" flags lint --release jaxlib==0.13.0 -- --xla_gpu_graph_level=1
expect_rc 0 "a newer release: a warning, exit 0"
expect_out "warning:" "said as a warning"
run "$XL" flags lint --json --release jaxlib==0.4.35 -- --xla_gpu_enable_priority_fusion=true
expect_rc 0 "lint --release jaxlib==0.4.35"
expect_out '"judged_as": "0.4.35"' "json: the release judged as"
expect_out '"reader_model"' "json: the reader model's release"
run "$XL" flags lint --release torch_xla==2.9.0 --var GPU_NUM_DEVICES 2
expect_rc 65 "a torch_xla variable 2.9.0 no longer reads"
expect_out "is read by torch_xla 2.5.0 to 2.8.1" "named with its releases"
run "$XL" flags lint --release torch_xla==2.8.0 --var GPU_NUM_DEVICES 2
expect_rc 0 "and fine for 2.8.0"
run "$XL" flags explain xla_gpu_graph_level --python "$cur/bin/python"
expect_rc 0 "explain a flag of older releases"
expect_out "releases:    jaxlib 0.4.30 to 0.7.1 and torch_xla 2.5.0 to 2.9.0" "its releases"
expect_out "replaced by: xla_gpu_enable_command_buffer" "its successor"
expect_out "removed:     openxla/xla" "the change that removed it"
expect_out "whose XLA aborts on it" "what the job's release makes of it"
run "$XL" flags lint --python "$T/none/bin/python" -- --xla_dump_to=x
expect_rc 66 "--python that does not exist"
expect_err "not found or not executable" "says so"
run "$XL" flags lint --release jaxlib -- --xla_dump_to=x
expect_rc 64 "--release without ==VERSION"
expect_err "'jaxlib' is not PKG==VERSION" "says so"
run "$XL" flags lint --release numpy==2.0 -- --xla_dump_to=x
expect_rc 64 "--release of a package without flags"
run "$XL" flags lint --release jaxlib==not.a.version -- --xla_dump_to=x
expect_rc 64 "--release with a bad version"
run "$XL" flags lint --python "$cur/bin/python" --release jaxlib==0.6.2 -- --xla_dump_to=x
expect_rc 64 "--python and --release together"

# libtpu: a name the libtpu the job loads does not register is refused,
# naming that release (jax[tpu] 0.10.2's, where tools/venv.sh tpu has it);
# tests/integration/libtpu_flags.sh checks the verdicts against libtpu itself
if tpu=$(cd "$SRC" && tools/venv.sh tpu 2>/dev/null); then
	case "$tpu" in /*) ;; *) tpu="$SRC/$tpu" ;; esac
	run "$XL" flags lint --python "$tpu/bin/python" --var LIBTPU_INIT_ARGS -- --xla_tpu_not_published=1
	expect_rc 65 "an unknown libtpu flag is refused"
	expect_out "libtpu 0.0.42.1 exits at start" "naming the libtpu release"
fi

# profile show --explain says which release each flag is judged against
VIRTUAL_ENV="$old" run "$XL" profile show graphs --explain
expect_rc 0 "profile show --explain"
expect_out "judged against (the release the job will load):" "a section for it"
expect_out "jaxlib 0.6.2 (installed for $old/bin/python)" "the release and the Python"
VIRTUAL_ENV="$cur" run "$XL" profile show graphs --explain
expect_out "--xla_gpu_graph_level: 'xla_gpu_graph_level' is registered by jaxlib 0.4.30 to 0.7.1" "the flag 0.10.2 lacks"
done_ok
