#!/bin/sh
# bundle show / bundle check through the binary: a synthetic virtualenv (the
# real interpreter, a made-up site-packages), then the real jax[tpu]
# environment from tools/venv.sh tpu when it can be built.
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
PY=$(python3 -c 'import sys; print(sys.executable)')   # the interpreter, not a shim
V="$T/venv"
mkdir -p "$V/bin"
ln -s "$PY" "$V/bin/python"
printf 'home = %s\ninclude-system-site-packages = false\n' "$(dirname "$PY")" > "$V/pyvenv.cfg"
pyver=$("$V/bin/python" -S -c 'import sys; print("%d.%d" % sys.version_info[:2])')
SITE="$V/lib/python$pyver/site-packages"
mkdir -p "$SITE"
dist() {  # dist NAME VERSION [HEADER...]
	d="$SITE/$1-$2.dist-info"; mkdir -p "$d"; n=$1 v=$2; shift 2
	{ echo "Metadata-Version: 2.1"; echo "Name: $n"; echo "Version: $v"; for h in "$@"; do echo "$h"; done; } > "$d/METADATA"
}
dist torch 2.8.0
dist torch_xla 2.9.0 "Requires-Dist: numpy" "Requires-Dist: libtpu==0.0.21; extra == \"tpu\""
dist numpy 2.4.6
dist libtpu 0.0.21

run "$XL" bundle show --python "$V/bin/python"
expect_rc 0 "show on a synthetic venv"
expect_out "torch-xla" "lane package listed"
expect_out "venv $V" "venv detected from pyvenv.cfg"
run "$XL" bundle show --python "$V/bin/python" --json
expect_rc 0 "show --json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["python"]["venv"] and any(p["name"]=="torch" for p in d["packages"]), d' "$T/out" || fail "show --json document"
ok "show --json parses"
VIRTUAL_ENV="$V" run "$XL" bundle show --json
expect_out "\"source\": \"VIRTUAL_ENV\"" "VIRTUAL_ENV picks the interpreter"

run "$XL" bundle check --python "$V/bin/python"
expect_rc 1 "torch_xla 2.9 on torch 2.8 is incompatible"
expect_out "verdict: incompatible" "verdict line"
expect_out "lockstep-torch-xla" "rule named"
run "$XL" bundle check --python "$V/bin/python" --json
expect_rc 1 "check --json exit"
expect_out '"verdict": "incompatible"' "json verdict"

rm -rf "$SITE/torch-2.8.0.dist-info"; dist torch 2.9.1
run "$XL" bundle check --python "$V/bin/python"
expect_rc 0 "fixed"
expect_out "verdict: validated (bundle torch29-v6e, validated)" "matches the validated torch bundle"

rm -rf "$SITE/libtpu-0.0.21.dist-info"; dist libtpu 0.0.36
run "$XL" bundle check --python "$V/bin/python"
expect_rc 1 "extras-gated pin"
expect_out "torch-xla 2.9.0 [tpu] requires libtpu ==0.0.21; installed libtpu 0.0.36" "extras pin named"

mkdir -p "$SITE/broken-1.0.dist-info"; echo "garbage" > "$SITE/broken-1.0.dist-info/METADATA"
run "$XL" bundle check --python "$V/bin/python"
expect_out "unreadable metadata" "broken metadata reported, not fatal"

printf 'version: 1\nbundles:\n  - name: x\n    stauts: validated\n' > "$T/m.yaml"
run "$XL" bundle check --python "$V/bin/python" --matrix "$T/m.yaml"
expect_rc 65 "bad matrix"
expect_err "m.yaml:4:5: bundle: unknown key 'stauts'; did you mean 'status'?" "position in the matrix error"
run "$XL" bundle check --python "$V/bin/python" --matrix "$T/none.yaml"
expect_rc 66 "missing matrix"
run "$XL" bundle show --python "$T/no-such-python"
expect_rc 66 "missing interpreter"
printf '#!/bin/sh\nexit 3\n' > "$T/badpy"; chmod +x "$T/badpy"
run "$XL" bundle show --python "$T/badpy"
expect_rc 69 "interpreter that fails"
run "$XL" bundle show extra-arg
expect_rc 64 "usage"

# the real environment: jax[tpu] from PyPI
if [ -n "${XLAUNCH_NO_NETWORK:-}" ]; then echo "SKIP part: XLAUNCH_NO_NETWORK set"; done_ok; fi
set +e
venv=$(cd "$SRC" && tools/venv.sh tpu 2>"$T/venv.err")
vrc=$?
set -e
if [ $vrc -ne 0 ]; then
	echo "real environment skipped: $(tail -1 "$T/venv.err")"
	[ $vrc -eq 77 ] && skip "tools/venv.sh tpu: $(tail -1 "$T/venv.err")"
	fail "tools/venv.sh tpu failed"
fi
run "$XL" bundle show --python "$SRC/$venv/bin/python" --json
expect_rc 0 "show on the jax[tpu] venv"
python3 - "$T/out" <<'PY' || fail "real environment read wrongly"
import json, sys
d = json.load(open(sys.argv[1]))
pk = {p["name"]: p["version"] for p in d["packages"]}
assert pk.get("jax") == "0.10.2" and pk.get("jaxlib") == "0.10.2" and pk.get("libtpu", "").startswith("0.0.42"), pk
pl = [p for p in d["pjrt_plugins"] if p["path"].endswith("libtpu.so")]
assert pl, d["pjrt_plugins"]
assert pl[0]["api_version"] and pl[0]["api_version"].startswith("0."), pl
PY
ok "jax, jaxlib, libtpu and the libtpu PJRT API version read"
run "$XL" bundle check --python "$SRC/$venv/bin/python"
expect_rc 0 "check on the jax[tpu] venv"
expect_out "verdict: validated (bundle jax010-tpu, validated)" "validated against the matrix"
done_ok
