# profile_expand.sh - ${VAR} in a profile resolves from the layers applied
# so far (earlier extends parents, the same layer's other keys, the
# candidate last), then the launching environment; a variable's own name
# means its earlier value; a cycle is an error that prints the chain.
. "$(dirname "$0")/lib.sh"
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P"
cat >"$P/base.yaml" <<'Y'
env:
  ROOT: /data
  SEARCH: /base/bin
  LATE_BAD: ${XLT_SURELY_UNSET}
Y
cat >"$P/child.yaml" <<'Y'
extends: base
env:
  CACHE: ${ROOT}/cache
  SEARCH: /child/bin:${SEARCH}
  AFTER: ${BEFORE}/after
  BEFORE: ${ROOT}/before
  SHELLY: ${XLT_FROM_SHELL:-none}
  LATE_BAD: fine
flags:
  XLA_FLAGS: {xla_dump_to: "${CACHE}/dump"}
candidates:
  - name: big
    env: {ROOT: /big, MB: "${ROOT}-${CACHE}"}
Y
ROOT=/from-shell XLT_FROM_SHELL=sh run "$XL" env child
expect_rc 0 "a profile whose values refer to its layers resolves"
expect_out "export CACHE='/data/cache'" "\${ROOT} from an earlier extends parent, not the shell"
expect_out "export SEARCH='/child/bin:/base/bin'" "a variable's own name is its earlier layer's value"
expect_out "export AFTER='/data/before/after'" "a key of the same layer, in any order"
expect_out "export SHELLY='sh'" "then the launching environment"
expect_out "export LATE_BAD='fine'" "a value replaced by a later layer is never expanded into an error"
expect_out "export XLA_FLAGS='--xla_dump_to=/data/cache/dump'" "a flags value sees the layer's variables"
run "$XL" env child -c big
expect_out "export MB='/big-/data/cache'" "a candidate's keys see each other, and the layers before"
expect_out "export ROOT='/big'" "the candidate's own value"

# cycles: the chain, with the position of the value that starts it
cat >"$P/cyc.yaml" <<'Y'
env:
  A: ${B}/a
  B: x${C}
  C: ${A}
Y
run "$XL" env cyc
expect_rc 65 "a cycle is a data error"
expect_err "xlaunch: profile 'cyc': $P/cyc.yaml:2:6: A: \${A} -> \${B} -> \${C} -> \${A}: cycle" "the chain and the position"
run "$XL" profile show cyc
expect_rc 65 "profile show: the same error"
printf 'env:\n  A: ${A:-x}y\n' >"$P/self.yaml"
run "$XL" env self
expect_rc 0 "a variable's own name is not a cycle"
expect_out "export A='xy'" "its default when no earlier layer or shell sets it"
printf 'env:\n  A: ${B}\n  B: ${NO_SUCH_XLT_VAR}\n' >"$P/unset.yaml"
run "$XL" env unset
expect_rc 65 "an unset variable without a default is an error"
expect_err "unset.yaml:2:6: A: \${NO_SUCH_XLT_VAR} is not set and has no default" "through another key, the position of the value used"
done_ok
