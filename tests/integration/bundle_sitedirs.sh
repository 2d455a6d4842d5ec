#!/bin/sh
# bundle_sitedirs.sh - the packages `bundle show --all` reads are those
# importlib.metadata finds, run by the same interpreter, name for name and
# version for version: a venv of the distribution's own /usr/bin/python3
# (Debian's site and sysconfig patches: dist-packages, posix_local) with
# real packages from PyPI, the same with the system site packages, the
# distribution's Python itself (with a user site and PYTHONPATH), python3
# first on PATH (pyenv's here) and the venvs built from it, and venvs made by
# uv on both.  A .pth file's path line counts and its import line is not run.
# Then an environment with nothing of the ML lane: verdict empty, exit 2, the
# directories read named, and the bundle gate refusing it.
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"

[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3 (the distribution's Python)"
if [ -n "${XLAUNCH_NO_NETWORK:-}" ]; then skip "XLAUNCH_NO_NETWORK set: the venvs need PyPI"; fi
venv_of() {  # venv_of MODE: the directory tools/venv.sh MODE made, or skip
	set +e
	v=$(cd "$SRC" && tools/venv.sh "$1" 2>"$T/venv.err")
	vrc=$?
	set -e
	if [ $vrc -ne 0 ]; then
		cat "$T/venv.err"
		[ $vrc -eq 77 ] && skip "tools/venv.sh $1: $(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"
		fail "tools/venv.sh $1 failed"
	fi
	echo "$SRC/$v"
}
DISTRO=$(venv_of distro)
mkdir -p "$T/cwd"   # the reference runs here: -c and stdin put the working directory first

# compare PYTHON WHAT [PYTHON-ENV...]: bundle show --all against
# importlib.metadata in the same interpreter (first of a name wins, names
# normalized); prints the number of distributions compared
compare() {
	py=$1 what=$2
	run "$XL" bundle show --all --json --python "$py"
	expect_rc 0 "bundle show --all on $what"
	(cd "$T/cwd" && "$py" - "$T/out" >"$T/cmp" 2>&1 <<'PY') || { cat "$T/cmp"; fail "$what: bundle show and importlib.metadata differ"; }
import importlib.metadata as md, json, re, sys
doc = json.load(open(sys.argv[1]))
mine = {}
for p in doc["packages"]:
    assert p["name"] not in mine, "listed twice: %s" % p["name"]
    mine[p["name"]] = p["version"]
ref = {}
for d in md.distributions():
    n = d.metadata["Name"]
    if n:
        ref.setdefault(re.sub(r"[-_.]+", "-", n).lower(), d.version)
only_mine = sorted(set(mine) - set(ref))
only_ref = sorted(set(ref) - set(mine))
differ = sorted(k for k in set(mine) & set(ref) if mine[k] != ref[k])
if only_mine or only_ref or differ:
    print("only xlaunch:", only_mine)
    print("only importlib.metadata:", only_ref)
    print("versions differ:", [(k, mine[k], ref[k]) for k in differ])
    print("xlaunch site_dirs:", doc["python"]["site_dirs"])
    print("sys.path:", sys.path)
    sys.exit(1)
assert doc["installed_count"] == len(ref), (doc["installed_count"], len(ref))
print(len(ref))
PY
	ok "$what: $(cat "$T/cmp") distributions, the same names and versions as importlib.metadata"
}

# has PACKAGE VERSION: the last bundle show lists it
has() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if {p["name"]: p["version"] for p in d["packages"]}.get(sys.argv[2]) == sys.argv[3] else 1)' \
		"$T/out" "$1" "$2" || { cat "$T/out"; fail "$1 $2 not read"; }
	ok "$1 $2 read"
}

# 1. a venv of Debian's /usr/bin/python3 with packages from PyPI (the case that
# read nothing before: site-packages exists only for a venv-aware site)
compare "$DISTRO/bin/python" "a venv of /usr/bin/python3"
has six 1.17.0
has opt-einsum 3.4.0
has typing-extensions 4.12.2
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["python"]; assert d["venv"] and not d["system_site_packages"] and d["site_dirs"][-1].endswith("/site-packages"), d' "$T/out" ||
	fail "the distribution venv's facts"
ok "venv, isolated, its site-packages last on the path"
run "$XL" bundle check --python "$DISTRO/bin/python"
expect_rc 0 "check on the distribution venv"
expect_out "verdict: compatible" "a lane package read, nothing broken"
expect_out "read    5 installed packages, 1 of the ML lane" "what was read is said"

# 2. the same with the system site packages, and the distribution's Python
# itself, with a user site and PYTHONPATH entries (one shadows six)
/usr/bin/python3 -m venv --without-pip --system-site-packages "$T/dss"
pyver=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
mkdist() {  # mkdist DIR NAME VERSION
	mkdir -p "$1/$2-$3.dist-info"
	printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' "$2" "$3" >"$1/$2-$3.dist-info/METADATA"
}
mkdist "$HOME/.local/lib/python$pyver/site-packages" user_only_pkg 1.2
compare "$T/dss/bin/python" "a venv of /usr/bin/python3 with the system site packages"
has user-only-pkg 1.2
compare /usr/bin/python3 "/usr/bin/python3 (dist-packages, posix_local)"
mkdist "$T/pp" six 0.1
mkdist "$T/pp" Mixed.Case_Name 3.0
PYTHONPATH="$T/pp" compare /usr/bin/python3 "/usr/bin/python3 with PYTHONPATH"
has six 0.1
has mixed-case-name 3.0

# 3. a .pth file: its path line is followed, its import line is not run
mkdist "$T/extra" pth_only_pkg 0.5
SP="$T/dss/lib/python$pyver/site-packages"
printf 'import os; open("%s/imported", "w").close()\n%s\n# a comment\n/no/such/dir\n' "$T" "$T/extra" >"$SP/zz-test.pth"
run "$XL" bundle show --all --json --python "$T/dss/bin/python"
[ ! -e "$T/imported" ] || fail "the .pth import line was run"
ok "the .pth import line is not run"
has pth-only-pkg 0.5
compare "$T/dss/bin/python" "a venv with a .pth file"
rm -f "$T/imported" "$SP/zz-test.pth"

# 4. python3 first on PATH (a pyenv shim here), and venvs built from it
PY=$(python3 -c 'import sys; print(sys.executable)')
compare python3 "python3 on PATH ($PY)"
for m in ref tpu; do
	if [ -x "$SRC/build/venv-$m/bin/python" ]; then compare "$SRC/build/venv-$m/bin/python" "build/venv-$m (a venv of $PY)"; fi
done
python3 -m venv --without-pip "$T/pv"
mkdist "$T/pv/lib/python$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')/site-packages" jax 0.10.2
VIRTUAL_ENV="$T/pv" run "$XL" bundle show --all --json
expect_out '"source": "VIRTUAL_ENV"' "VIRTUAL_ENV picks the venv"
has jax 0.10.2
compare "$T/pv/bin/python" "a venv of $PY"

# 5. uv venvs, on the distribution's Python and on python3 of PATH (uv-managed
# Pythons are downloaded from outside PyPI, which this machine cannot reach)
UV=$(venv_of uv)/bin/uv
export UV_CACHE_DIR="$SRC/build/uv-cache"
for base in /usr/bin/python3 "$PY"; do
	d="$T/uv-$(echo "$base" | tr -c 'a-z0-9\n' _)"
	"$UV" venv -q --python "$base" "$d" >"$T/uv.log" 2>&1 || { cat "$T/uv.log"; fail "uv venv --python $base"; }
	"$UV" pip install -q --python "$d/bin/python" six==1.17.0 opt-einsum==3.4.0 >"$T/uv.log" 2>&1 ||
		{ cat "$T/uv.log"; skip "uv pip install could not reach PyPI: $(tail -1 "$T/uv.log")"; }
	compare "$d/bin/python" "uv venv on $base"
	has opt-einsum 3.4.0
done

# 6. nothing of the ML lane: verdict empty, exit 2, the directories named
/usr/bin/python3 -m venv --without-pip "$T/empty"
run "$XL" bundle check --python "$T/empty/bin/python"
expect_rc 2 "an environment with no package is not a pass"
expect_out "verdict: empty" "verdict empty"
expect_out "read    0 installed packages, 0 of the ML lane" "nothing read, said"
expect_out "$T/empty/lib/python$pyver/site-packages" "the directories read are named"
run "$XL" bundle check --python "$T/empty/bin/python" --json
expect_rc 2 "--json exit"
python3 - "$T/out" "$T/empty/lib/python$pyver/site-packages" <<'PY' || fail "empty report"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"] == "empty" and d["installed_count"] == 0 and d["lane_count"] == 0, d
assert sys.argv[2] in d["site_dirs"], d["site_dirs"]
assert any(r["rule"] == "empty" and r["severity"] == "error" and sys.argv[2] in r["message"] for r in d["reasons"]), d["reasons"]
PY
ok "json: verdict, counts, site_dirs and the empty reason"
mkdist "$T/empty/lib/python$pyver/site-packages" six 1.17.0
run "$XL" bundle check --python "$T/empty/bin/python"
expect_rc 2 "packages but none of the ML lane is not a pass either"
expect_out "none of the 1 installed packages is of the ML lane" "said so"
run "$XL" bundle show --python "$T/empty/bin/python"
expect_rc 0 "show still shows"
expect_out "none of the ML lane" "show says the lane is empty"
expect_out "site dirs   " "show names the directories"

# 7. the bundle gate on that environment refuses and says why
P="$T/profiles"; mkdir -p "$P"
printf 'policy: {bundle: [jax010-tpu]}\n' >"$P/gated.yaml"
XLAUNCH_PROFILE_PATH="$P" VIRTUAL_ENV="$T/empty" run "$XL" exec gated -- echo launched
expect_rc 77 "the gate refuses an empty environment"
expect_err "policy 'bundle' refuses the launch: the installed bundle is empty: none of the 1 installed packages is of the ML lane" "the refusal says empty"
expect_err "$T/empty/lib/python$pyver/site-packages" "and where it looked"
expect_err "it is not one of jax010-tpu" "and what it wanted"
expect_no_out launched "nothing launched"

# 8. a launch's bundle summary (of the interpreter that runs the job) from a
# cache written by the older search is read again (the cache names its format)
mkdir -p "$XDG_STATE_HOME/xlaunch"
python3 - "$XDG_STATE_HOME/xlaunch/bundle-cache" "$DISTRO/bin/python" "$DISTRO/lib/python$pyver/site-packages" <<'PY'
import os, sys
st = os.stat(sys.argv[2]); sd = os.stat(sys.argv[3])
m = lambda s: "%d.%09d" % (s.st_mtime_ns // 10**9, s.st_mtime_ns % 10**9)
# format 2 (written by the older search), fresh times, no packages
open(sys.argv[1], "w").write("xlaunch-bundle-cache\t2\npython\t%s\t%s\ndir\t%s\t%s\nversion\t3\nend\n"
                             % (sys.argv[2], m(st), sys.argv[3], m(sd)))
PY
printf 'env: {XLAUNCH_TEST: "1"}\n' >"$P/plain.yaml"
XLAUNCH_PROFILE_PATH="$P" run "$XL" run plain --no-record -- "$DISTRO/bin/python" -c pass
expect_rc 0 "run of the distribution venv's interpreter"
python3 - "$XDG_STATE_HOME/xlaunch/runs" <<'PY' || fail "the launch's bundle summary"
import glob, json, os, sys
m = sorted(glob.glob(os.path.join(sys.argv[1], "*", "manifest.json")))[-1]
b = json.load(open(m))["signature"]["parts"]["bundle"]
assert b["packages"] == {"opt-einsum": "3.4.0"}, b
PY
ok "an old-format cache is not reused: the summary holds opt-einsum"
done_ok
