# tpu_compile_oom.sh - the real TPU compiler on a host without a TPU, under
# `xlaunch run`: a job (tpu_compile.py) compiles ahead of time for a v5e
# slice with the libtpu of the tpu venv.  The candidate that fits keeps the
# TPU compiler's memory report (read from the dump run adds) as its figure
# of XLA's buffers; the one that does not ends oom by the TPU pattern and
# keeps what the compiler needs (a prediction of basis compiler) and the
# HBM it had; the next run orders it last and says why.  A launch while
# another process holds libtpu ends error, naming that process.
. "$(dirname "$0")/lib.sh"
venv=$(cd "$SRC" && tools/venv.sh tpu 2>"$T/venv.err") || {
	skip "$(grep '^SKIP' "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"
}
case "$venv" in /*) ;; *) venv="$SRC/$venv" ;; esac
PY="$venv/bin/python"
[ -x "$PY" ] || skip "no virtualenv at $venv"
export XLAUNCH_STORE="$T/calib.db" XLAUNCH_PROFILE_PATH="$T/profiles" PYTHONDONTWRITEBYTECODE=1
mkdir -p "$T/profiles"
cat >"$T/profiles/tpuaot.yaml" <<'YAML'
description: a TPU program compiled ahead of time on a host without a TPU
env:
  JAX_PLATFORMS: cpu
candidates:
  - {name: big, env: {XL_TPU_GIB: 24}, signature: {model: {seq: 24576}}}
  - {name: fits, env: {XL_TPU_GIB: 1}, signature: {model: {seq: 1024}}}
YAML
cp "$SRC/tests/integration/tpu_compile.py" "$T/tpu_compile.py"
JOB="$PY $T/tpu_compile.py"

libtpu_lock
# shellcheck disable=SC2086
run "$XL" run tpuaot -c big -- $JOB
[ "$rc" -ne 0 ] || fail "the program too large for HBM compiled"
ok "the program too large for HBM fails"
python3 - "$(announced_manifest)" <<'PY' || fail "big's outcome and figures"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["outcome"] == "oom", m["outcome"]
assert m["reason"].startswith("tpu-compile-hbm-total: "), m["reason"]
assert "Ran out of memory on HBM" in m["reason"], m["reason"]
pred = [f for f in m["figures"] if f["role"] == "predicted" and f["kind"] == "xla_buffers"]
assert len(pred) == 1 and pred[0]["basis"] == "compiler", m["figures"]
assert pred[0]["bytes"] > 16 << 30, pred[0]
assert "available HBM, %d bytes" % int(15.75 * (1 << 30)) in pred[0]["source"], pred[0]["source"]
PY
ok "oom by the TPU pattern, the compiler's need and the HBM kept"

# shellcheck disable=SC2086
run "$XL" run tpuaot -c fits -- $JOB
expect_rc 0 "the program that fits compiles"
python3 - "$(announced_manifest)" <<'PY' || fail "fits' figure"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["outcome"] == "ok", m["outcome"]
xb = [f for f in m["figures"] if f["role"] == "observed" and f["kind"] == "xla_buffers"]
assert len(xb) == 1 and xb[0]["source"].startswith("XLA memory-usage report of jit_f"), m["figures"]
# one GiB of activation per device, and the kept intermediates
assert 1 << 30 < xb[0]["bytes"] < 8 << 30, xb[0]
# the program compiled ahead of time is in the compile table, named as JAX
# names it, with its report's figure
fns = {f["name"]: f for f in m["compile"]["functions"]}
assert "jit(f)" in fns, list(fns)
assert fns["jit(f)"]["compiles"] == 1 and fns["jit(f)"]["xla_bytes"] == xb[0]["bytes"], fns["jit(f)"]
PY
ok "the TPU compiler's memory report is the candidate's figure"
run "$XL" calib show last
expect_rc 0 "calib show of the compile that fits"
grep -E '^  jit\(f\) +jax +1 +0 +0 +[0-9.]+ +[0-9.]+ GiB ' "$T/out" >/dev/null ||
	{ cat "$T/out"; fail "jit(f) and its figure are not in calib show's compile table"; }
ok "calib show's compile table has the program compiled ahead of time, with its figure"

# shellcheck disable=SC2086
run "$XL" run tpuaot --dry-run -- $JOB
expect_rc 0 "dry run"
awk '/^  1\. /{print $2}' "$T/out" | grep -qx fits || { cat "$T/out"; fail "fits is not first"; }
grep -E '^  2\. +big +known-bad +oom' "$T/out" >/dev/null || { cat "$T/out"; fail "big is not last, known-bad for its oom"; }
# shellcheck disable=SC2086
run "$XL" calib predict tpuaot --json -- $JOB
expect_rc 0 "calib predict"
python3 - "$T/out" <<'PY' || { cat "$T/out"; fail "calib predict does not say why big is last"; }
import json, sys
p = [c for c in json.load(open(sys.argv[1])) if c["candidate"] == "big"][0]
assert p["place"] == "known-bad", p["place"]
assert p["place_reason"].startswith("oom with this signature"), p["place_reason"]
assert "the compiler needed" in p["place_reason"], p["place_reason"]
PY
# shellcheck disable=SC2086
run "$XL" calib predict tpuaot -- $JOB
grep -E '^  order +known-bad: oom with this signature .*the compiler needed [0-9.]+ GiB \(xla_buffers\)' \
	"$T/out" >/dev/null || { cat "$T/out"; fail "calib predict's order line"; }
ok "the next run orders the oom candidate last, and calib predict says why"

# another process holds libtpu: the launch is an error naming it
"$PY" -c '
import sys, time
from jax.experimental import topologies
topologies.get_topology_desc(platform="tpu", topology_name="v5e:2x2")
print("holding", flush=True)
time.sleep(300)
' >"$T/hold.out" 2>&1 &
holder=$!
holding() { grep -q holding "$T/hold.out"; }
wait_until "$HANG_S" holding || { kill "$holder"; cat "$T/hold.out"; fail "the holder did not start libtpu"; }
# shellcheck disable=SC2086
run "$XL" run tpuaot -c fits -- $JOB
kill "$holder"
wait "$holder" 2>/dev/null || true
python3 - "$(announced_manifest)" "$holder" <<'PY' || fail "the held TPU"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["outcome"] == "error", m["outcome"]
assert "the TPU is held by another process of this host" in m["reason"], m["reason"]
assert "pid %s (python" % sys.argv[2] in m["reason"], m["reason"]
assert "libtpu-lockfile: " in m["reason"], m["reason"]
PY
ok "a held TPU is an error naming the process that holds it"
done_ok
