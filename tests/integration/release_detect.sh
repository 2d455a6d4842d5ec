#!/bin/sh
# The release a job will load is found the way the job will find it, and
# flags are judged against every release it loads.  Fake venvs only (a
# venv without pip whose jaxlib is a METADATA file), so nothing is
# downloaded and nothing of jax is imported:
#   - exec, run and profile show look the interpreter up in the environment
#     the profile gives the child (PATH, VIRTUAL_ENV, PYTHONPATH);
#   - the bundle cache is keyed by PYTHONPATH and the other site variables;
#   - a pyenv shim is followed to the version it will run (PYENV_VERSION,
#     .python-version, ROOT/version);
#   - a relative --python is made absolute against the working directory;
#   - --python naming no Python exits 66;
#   - a value is checked against jaxlib's and torch_xla's releases both;
#   - an assumed release (none found) warns, never refuses;
#   - --release takes one PKG==VERSION per package.
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"

command -v python3 >/dev/null || skip "no python3"
unset VIRTUAL_ENV PYTHONPATH PYTHONHOME PYTHONUSERBASE PYENV_VERSION
export PYTHONNOUSERSITE=1

# fakevenv DIR PKG==VERSION...: a venv whose site-packages holds only the
# METADATA of the packages named
fakevenv() {
	_d=$1
	shift
	python3 -m venv --without-pip "$_d" || fail "python3 -m venv $_d"
	_site=$("$_d/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	for _p in "$@"; do
		_n=${_p%%==*}
		_v=${_p#*==}
		mkdir -p "$_site/$_n-$_v.dist-info"
		printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' "$_n" "$_v" \
			>"$_site/$_n-$_v.dist-info/METADATA"
	done
}
# in_dir DIR CMD...: CMD run in DIR
in_dir() {
	_dir=$1
	shift
	(cd "$_dir" && exec "$@")
}
fakevenv "$T/old" jaxlib==0.6.2 jax==0.6.2
fakevenv "$T/cur" jaxlib==0.10.2 jax==0.10.2
fakevenv "$T/empty"
fakevenv "$T/both" jaxlib==0.10.2 jax==0.10.2 torch==2.9.0 torch_xla==2.9.0
P="$T/profiles"
mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P"
JOB='import sys; print("prefix", sys.prefix)'

# ---- (a) the profile's PATH, VIRTUAL_ENV and PYTHONPATH count ----------------
cat >"$P/oldpath.yaml" <<EOF
description: the 0.6.2 venv first on the child's PATH
env: {PATH: "$T/old/bin:\${PATH}"}
flags:
  XLA_FLAGS: {xla_gpu_graph_level: 1}
EOF
PATH="$T/cur/bin:$PATH" run "$XL" exec oldpath -- python -c "$JOB"
expect_rc 0 "exec: judged against the child's PATH (jaxlib 0.6.2), not the shell's (0.10.2)"
expect_out "prefix $T/old" "the child ran the 0.6.2 venv's python"
PATH="$T/cur/bin:$PATH" run "$XL" run oldpath --no-record -- python -c "$JOB"
expect_rc 0 "run: judged against the child's PATH"
expect_out "prefix $T/old" "run's child looked python up in its own PATH"
PATH="$T/cur/bin:$PATH" run "$XL" profile show oldpath --explain
expect_out "jaxlib 0.6.2 (installed for $T/old/bin/python" "show --explain: the profile's PATH"
cat >"$P/curpath.yaml" <<EOF
description: the 0.10.2 venv first on the child's PATH
env: {PATH: "$T/cur/bin:\${PATH}"}
flags:
  XLA_FLAGS: {xla_gpu_graph_level: 1}
EOF
PATH="$T/old/bin:$PATH" run "$XL" exec curpath -- python -c "$JOB"
expect_rc 65 "exec: refused when the child's PATH gives jaxlib 0.10.2"
expect_no_out "prefix" "nothing ran"
PATH="$T/old/bin:$PATH" run "$XL" profile check curpath
expect_rc 65 "profile check: the profile's PATH"
cat >"$P/venv.yaml" <<EOF
description: the job's VIRTUAL_ENV is the 0.6.2 venv
env: {VIRTUAL_ENV: "$T/old"}
flags:
  XLA_FLAGS: {xla_gpu_graph_level: 1}
EOF
VIRTUAL_ENV="$T/cur" run "$XL" exec venv -- true
expect_rc 0 "exec: the profile's VIRTUAL_ENV, not the shell's"
mkdir -p "$T/pp/jaxlib-0.6.2.dist-info"
printf 'Metadata-Version: 2.1\nName: jaxlib\nVersion: 0.6.2\n' >"$T/pp/jaxlib-0.6.2.dist-info/METADATA"
cat >"$P/pypath.yaml" <<EOF
description: jaxlib 0.6.2 on the job's PYTHONPATH
env: {PYTHONPATH: "$T/pp"}
flags:
  XLA_FLAGS: {xla_gpu_graph_level: 1}
EOF
run "$XL" exec pypath -- "$T/empty/bin/python" -c "$JOB"
expect_rc 0 "exec: the profile's PYTHONPATH brings jaxlib 0.6.2"
run "$XL" profile show pypath --explain
expect_out "jaxlib 0.6.2 (installed for" "show --explain: the profile's PYTHONPATH"

# ---- (b) the bundle cache is keyed by the site variables ---------------------
PYTHONPATH="$T/pp" run "$XL" flags lint --python "$T/empty/bin/python" -- --xla_gpu_graph_level=1
expect_rc 0 "a cold cache with PYTHONPATH: jaxlib 0.6.2"
expect_out "judged against jaxlib 0.6.2" "says so"
run "$XL" flags lint --python "$T/empty/bin/python" -- --xla_gpu_graph_level=1
expect_out "judged against jaxlib 0.12.0.1, the newest release xlaunch knows" "without PYTHONPATH: no jaxlib, not the cached 0.6.2"
grep -q "^xlaunch-bundle-cache	4$" "$XDG_STATE_HOME/xlaunch/bundle-cache" || fail "the cache names format 4"
ok "the cache names format 4"

# ---- (c) a pyenv shim is followed to the version it runs ----------------------
R="$T/pyenv"
mkdir -p "$R/shims" "$R/versions"
fakevenv "$R/versions/9.1.0" jaxlib==0.6.2
fakevenv "$R/versions/9.2.0" jaxlib==0.10.2
cat >"$R/shims/python3" <<EOF
#!/bin/sh
# a stand-in for a pyenv shim: pyenv exec runs the selected version
v=\${PYENV_VERSION:-\$(cat "$R/version")}
exec "$R/versions/\$v/bin/python3" "\$@"
EOF
chmod +x "$R/shims/python3"
echo 9.2.0 >"$R/version"
PYENV_VERSION=9.1.0 PATH="$R/shims:$PATH" run "$XL" flags lint -- --xla_gpu_graph_level=1
expect_rc 0 "PYENV_VERSION=9.1.0: jaxlib 0.6.2"
expect_out "installed for $R/versions/9.1.0/bin/python3" "the version's interpreter, not the shim"
PYENV_VERSION=9.2.0 PATH="$R/shims:$PATH" run "$XL" flags lint -- --xla_gpu_graph_level=1
expect_rc 65 "PYENV_VERSION=9.2.0: jaxlib 0.10.2, not the answer cached for the shim"
mkdir -p "$T/proj/sub"
echo 9.1.0 >"$T/proj/.python-version"
PATH="$R/shims:$PATH" run in_dir "$T/proj/sub" "$XL" flags lint -- --xla_gpu_graph_level=1
expect_rc 0 "the nearest .python-version (9.1.0)"
expect_out "installed for $R/versions/9.1.0/bin/python3" "its version's interpreter"
PATH="$R/shims:$PATH" run "$XL" flags lint -- --xla_gpu_graph_level=1
expect_rc 65 "else ROOT/version (9.2.0)"
grep -q "shims" "$XDG_STATE_HOME/xlaunch/bundle-cache" && fail "a shim's path is never a cache key"
ok "the shim is not cached"

# ---- (d) a relative --python is absolute against the working directory --------
mkdir -p "$T/p1" "$T/p2"
ln -s "$T/old" "$T/p1/.venv"
ln -s "$T/cur" "$T/p2/.venv"
run in_dir "$T/p1" "$XL" flags lint --python .venv/bin/python -- --xla_gpu_graph_level=1
expect_rc 0 "proj1's .venv: jaxlib 0.6.2"
run in_dir "$T/p2" "$XL" flags lint --python .venv/bin/python -- --xla_gpu_graph_level=1
expect_rc 65 "proj2's .venv: jaxlib 0.10.2, not proj1's cached answer"
expect_out "$T/p2/.venv/bin/python has jaxlib 0.10.2" "named by its absolute path, the venv's link kept"

# ---- (e) --python naming no Python -------------------------------------------
run "$XL" flags lint --python /bin/true -- --xla_dump_to=x
expect_rc 66 "--python /bin/true"
expect_err "xlaunch: python '/bin/true': not a Python interpreter" "says so"
run "$XL" flags lint --python "$T" -- --xla_dump_to=x
expect_rc 66 "--python a directory"
expect_err "not a Python interpreter (a directory)" "says so"

# ---- (f) a value against every release the job loads -------------------------
V=--xla_cpu_experimental_xnn_graph_fusion_mode=XNN_GRAPH_FUSION_MODE_BYPASS_COST_MODEL
run "$XL" flags lint --python "$T/cur/bin/python" -- "$V"
expect_rc 0 "jaxlib 0.10.2's XLA takes the value"
run "$XL" flags lint --python "$T/both/bin/python" -- "$V"
expect_rc 65 "with torch_xla 2.9.0 beside it, refused"
expect_out "in torch_xla 2.9.0" "naming the release that refuses it"
run "$XL" flags lint --release jaxlib==0.10.2 --release torch_xla==2.9.0 -- "$V"
expect_rc 65 "--release twice, one per package: both judged"
run "$XL" flags lint --release jaxlib==0.10.2 --release jaxlib==0.6.2 -- "$V"
expect_rc 64 "the same package twice"
expect_err "jaxlib is given twice" "says so"

# ---- (g) an assumed release warns, never refuses ------------------------------
printf '#!/bin/sh\nexec %s -c "print(1)"\n' "$T/cur/bin/python" >"$T/train.sh"
chmod +x "$T/train.sh"
cat >"$P/graphs.yaml" <<'EOF'
description: a flag only older releases register
flags:
  XLA_FLAGS: {xla_gpu_graph_level: 1}
EOF
PATH="$T/empty/bin:$PATH" run "$XL" exec graphs -- "$T/train.sh"
expect_rc 0 "a Python without jaxlib: the newest release assumed, a warning"
expect_err "warning:" "a warning"
expect_err "which was assumed" "that says the release was assumed"
expect_err "registered by jaxlib 0.4.30 to 0.7.1" "and which releases register it"
mkdir -p "$T/fake"
printf '#!/bin/sh\necho ran\n' >"$T/fake/python"
chmod +x "$T/fake/python"
run "$XL" exec graphs -- "$T/fake/python"
expect_rc 0 "exec: a 'python' that is none finds no release (a warning, not a refusal)"
expect_out "ran" "the command ran"
expect_err "not a Python interpreter" "the warning says why no release was found"
run "$XL" flags lint --python "$T/empty/bin/python" -- --xla_not_a_flag_anywhere=1
expect_rc 65 "a name no release registers stays an error"
run "$XL" flags lint --release libtpu==0.0.42 -- --xla_gpu_graph_level=1
expect_rc 0 "--release libtpu: jaxlib assumed, a warning"
expect_out "libtpu 0.0.42 was given with --release, no jaxlib" "the release was given, not looked for"
if grep -q "no Python was found" "$T/out"; then fail "--release says no Python was found"; fi
ok "no 'no Python was found' under --release"
run "$XL" flags lint --release jax==0.10.2 --var CHECK_REP 1
expect_rc 65 "a jax variable 0.10.2 no longer reads"
expect_out "; it is no longer read from jax 0.6.1 on" "the removal reads as a sentence"
done_ok
