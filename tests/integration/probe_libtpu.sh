# probe_libtpu.sh - the real libtpu from PyPI, on a host without a TPU:
# installed, with its PJRT API version and libtpu's own reason, in time.
. "$(dirname "$0")/lib.sh"
venv=$(cd "$SRC" && tools/venv.sh tpu 2>"$T/venv.err") || {
	grep '^SKIP' "$T/venv.err" | tail -1
	skip "$(grep '^SKIP' "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"
}
case "$venv" in /*) ;; *) venv="$SRC/$venv" ;; esac
[ -x "$venv/bin/python" ] || skip "no virtualenv at $venv"

# found through the environment's site-packages.  "In time" is the verdict
# itself: past --timeout the backend would be "hung", not "installed".  The
# limit guards against a hang only (libtpu gives up within a second here,
# with a load average of 12 too)
libtpu_lock
start=$(date +%s)
VIRTUAL_ENV="$venv" run "$XL" probe --backend pjrt --timeout $PROBE_LIMIT --json --no-record
secs=$(( $(date +%s) - start ))
python3 -m json.tool "$T/out" >/dev/null || fail "not valid JSON"
python3 - "$T/out" <<'PY' || fail "libtpu verdict"
import json, sys
d = json.load(open(sys.argv[1]))
tpu = [b for b in d["backends"] if b["name"] == "pjrt:libtpu.so"]
assert tpu, [b["name"] for b in d["backends"]]
b = tpu[0]
assert b["state"] == "installed", b
assert b["stage"] == "installed", b
assert b["version"].startswith("PJRT C API 0."), b["version"]
assert b["error"] and "PJRT_Client_Create" in b["error"], b["error"]
assert b["details"]["path"].endswith("/libtpu/libtpu.so")
print(b["error"])
PY
ok "libtpu installed, not alive, with its reason"
[ "$rc" -eq 69 ] || fail "exit $rc, expected 69"
ok "exit 69"
ok "libtpu's verdict within the limit (${secs} s)"

# the API version alone, as the bundle report reads it
lib=$(ls "$venv"/lib/python3*/site-packages/libtpu/libtpu.so 2>/dev/null | head -1)
[ -n "$lib" ] || fail "no libtpu.so in $venv"
run "$XL" probe --backend "pjrt:$lib" --no-record --timeout $PROBE_LIMIT
expect_out "version: PJRT C API 0." "table shows the API version"
done_ok
