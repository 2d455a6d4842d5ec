# bundle_gate.sh - policy.bundle before exec and run: the installed bundle
# must match a named one, and its known-bad flags are refused (exit 77).
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
PY=$(python3 -c 'import sys; print(sys.executable)')
V="$T/venv"; mkdir -p "$V/bin"; ln -s "$PY" "$V/bin/python"
printf 'home = %s\ninclude-system-site-packages = false\n' "$(dirname "$PY")" >"$V/pyvenv.cfg"
pyver=$("$V/bin/python" -S -c 'import sys; print("%d.%d" % sys.version_info[:2])')
SITE="$V/lib/python$pyver/site-packages"; mkdir -p "$SITE"
dist() { d="$SITE/$1-$2.dist-info"; mkdir -p "$d"; printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' "$1" "$2" >"$d/METADATA"; }
dist torch 2.9.1; dist torch_xla 2.9.0; dist libtpu 0.0.21; dist numpy 2.4.6
# a data directory whose matrix has one bundle with a known-bad flag
D="$T/data"; mkdir -p "$D"; cp -R "$SRC/etc" "$SRC/profiles" "$D/"
cat >>"$D/etc/bundles.yaml" <<'Y'
Y
python3 - "$D/etc/bundles.yaml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
entry = """  - name: test-nan-bundle
    status: known-issues
    description: a bundle on which one flag is known to give NaN (test data)
    packages:
      torch: "==2.9.1"
      torch-xla: "==2.9.0"
    known_bad:
      - var: LIBTPU_INIT_ARGS
        flag: xla_tpu_enable_async_collective_fusion
        value: "true"
        reason: NaN loss from step 1 (test)
"""
i = s.index("bundles:\n") + len("bundles:\n")
open(p, "w").write(s[:i] + entry + s[i:])
PY
export XLAUNCH_DATADIR="$D" VIRTUAL_ENV="$V"
P="$T/profiles"; mkdir -p "$P"; export XLAUNCH_PROFILE_PATH="$P"
cat >"$P/gated.yaml" <<'Y'
policy: {bundle: [test-nan-bundle]}
flags:
  LIBTPU_INIT_ARGS: {xla_tpu_enable_async_collective_fusion: false}
candidates:
  - name: safe
  - name: nan
    flags: {LIBTPU_INIT_ARGS: {xla_tpu_enable_async_collective_fusion: true}}
Y
cat >"$P/wrong.yaml" <<'Y'
policy: {bundle: [jax010-tpu]}
Y
cat >"$P/nan.yaml" <<'Y'
extends: gated
flags:
  LIBTPU_INIT_ARGS: {xla_tpu_enable_async_collective_fusion: true}
Y
run "$XL" exec gated -- echo launched
expect_rc 0 "the installed bundle matches the gate"
expect_out launched "launched"
run "$XL" exec wrong -- echo launched
expect_rc 77 "a bundle that is not installed is refused"
expect_err "policy 'bundle' refuses the launch" "gate named"
expect_no_out launched "nothing launched"
run "$XL" exec nan -- echo launched
expect_rc 77 "a known-bad flag is refused"
expect_err "policy 'known-bad' refuses LIBTPU_INIT_ARGS: --xla_tpu_enable_async_collective_fusion on bundle 'test-nan-bundle': NaN loss from step 1 (test)" "reason recorded in the matrix"
expect_err "nan.yaml:3" "the line that set it"
run "$XL" exec gated -c nan -- echo launched
expect_rc 77 "a candidate's known-bad flag is refused"
run "$XL" run gated -c safe --no-record -- echo launched
expect_rc 0 "run through the gate"
run "$XL" run gated --no-record -- sh -c 'exit 0'
expect_err "attempt 1/2" "first candidate ran"
# without policy.bundle nothing is scanned and nothing refused
cat >"$P/ungated.yaml" <<'Y'
flags:
  LIBTPU_INIT_ARGS: {xla_tpu_enable_async_collective_fusion: true}
Y
run "$XL" exec ungated -- echo launched
expect_rc 0 "no gate without policy.bundle"
done_ok
