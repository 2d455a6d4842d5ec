# launch_env.sh - env and exec as a user runs them: the environment a child
# sees, exit statuses, eval round-trips, and errors with positions.
. "$(dirname "$0")/lib.sh"
P="$T/profiles"; mkdir -p "$P"
cat >"$P/base.yaml" <<'Y'
description: base
env:
  FROM_BASE: base
  OVERRIDDEN: base
  DROPPED: base
flags:
  XLA_FLAGS: {xla_cpu_enable_fast_math: false, xla_dump_to: /tmp/dump}
Y
cat >"$P/child.yaml" <<'Y'
description: child
extends: base
env:
  OVERRIDDEN: child
  DROPPED: ~
  EXPANDED: ${XLT_ROOT:-/default}/cache
unset: [REMOVE_ME]
flags:
  XLA_FLAGS: {xla_dump_to: ~, xla_force_host_platform_device_count: 4}
candidates:
  - name: small
    env: {MICRO_BATCH: 4}
Y
export XLAUNCH_PROFILE_PATH="$P"

# the child sees exactly the resolved environment
export REMOVE_ME=yes DROPPED=shell XLA_FLAGS="--xla_from_shell=1"
run "$XL" exec child -c small -- env
expect_rc 0 "exec runs env"
expect_out "FROM_BASE=base" "inherited variable"
expect_out "OVERRIDDEN=child" "override"
expect_out "EXPANDED=/default/cache" "default expansion"
expect_out "MICRO_BATCH=4" "candidate applied"
expect_out "XLA_FLAGS=--xla_cpu_enable_fast_math=false --xla_force_host_platform_device_count=4" "flags merged, deleted, shell value stripped"
expect_out "DROPPED=shell" "a variable forgotten by the profile is left as the shell had it"
expect_no_out "REMOVE_ME=" "unset removes the variable"
unset REMOVE_ME DROPPED XLA_FLAGS
XLT_ROOT=/data run "$XL" exec child -- printenv EXPANDED
expect_out "/data/cache" "expansion from the launching environment"

# exit statuses pass through: codes and 128+signal
code=0
while [ $code -le 255 ]; do
	run "$XL" exec child -- sh -c "exit $code"
	expect_rc "$code" "exit code $code passes through"
	code=$((code + 1))
done
run "$XL" exec child -- sh -c 'kill -TERM $$'
expect_rc 143 "killed by SIGTERM is 128+15"
run "$XL" exec child -- sh -c 'kill -KILL $$'
expect_rc 137 "killed by SIGKILL is 128+9"
run "$XL" exec child -- /nonexistent/cmd
expect_rc 127 "a missing command is 127"
expect_err "cannot run '/nonexistent/cmd'" "missing command named"
run "$XL" exec child
expect_rc 64 "no command is a usage error"

# limits apply to exec too
cat >"$P/capped.yaml" <<'Y'
limits: {open_files: 64, core: 0}
Y
run "$XL" exec capped -- sh -c 'ulimit -n; ulimit -c'
expect_eq "$(cat "$T/out" | tr '\n' ' ')" "64 0 " "exec applies the profile's limits"

# --format sh round-trips any value through eval in bash
cat >"$P/nasty.yaml" <<'Y'
env:
  Q1: "it's"
  Q2: "$(touch /tmp/xlaunch-pwned) `id` $${HOME} \\ \" '' "
  Q3: "line1\nline2\ttab"
  Q4: ""
  Q5: "$$literal"
Y
run "$XL" env nasty --format sh
expect_rc 0 "env --format sh"
cp "$T/out" "$T/env.sh"
bash -c ". '$T/env.sh'; printf '%s\n' \"\$Q1\" \"\$Q2\" \"\$Q3\" \"[\$Q4]\" \"\$Q5\"" >"$T/evaled"
printf '%s\n' "it's" "\$(touch /tmp/xlaunch-pwned) \`id\` \${HOME} \\ \" '' " "line1" "line2	tab" "[]" "\$literal" >"$T/expected"
cmp -s "$T/evaled" "$T/expected" || { diff "$T/expected" "$T/evaled"; fail "eval round-trip"; }
ok "eval round-trip"
[ ! -e /tmp/xlaunch-pwned ] || fail "eval ran a command substitution"
# and exec gives the child the same bytes
run "$XL" exec nasty -- printenv Q2
expect_eq "$(cat "$T/out")" "\$(touch /tmp/xlaunch-pwned) \`id\` \${HOME} \\ \" '' " "exec passes bytes unchanged"

# json, dotenv, k8s
run "$XL" env child --format json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["profile"]=="child"; assert d["env"]["OVERRIDDEN"]=="child"; assert "REMOVE_ME" in d["unset"]; assert d["sources"]["OVERRIDDEN"].endswith("child.yaml:4:15"), d["sources"]' "$T/out" || fail "env json"
ok "env json"
run "$XL" env child --format k8s
expect_out "env:" "k8s list"
expect_out '- name: OVERRIDDEN' "k8s item"
expect_out '  value: "child"' "k8s value"
python3 - "$T/out" <<'PY' || fail "k8s output is not a YAML env list"
import sys
lines = [l for l in open(sys.argv[1]).read().splitlines() if not l.startswith("#")]
assert lines[0] == "env:"
names = [l[8:] for l in lines if l.startswith("- name: ")]
assert "FROM_BASE" in names and "XLA_FLAGS" in names, names
PY
ok "k8s parses"
expect_out "# profile child: rendered for another machine" "k8s says it is for another machine"
run "$XL" env child --format dotenv
expect_out 'OVERRIDDEN="child"' "dotenv"
run "$XL" env child --format xml
expect_rc 64 "bad format"

# errors: cycle, unknown key, not found
cat >"$P/cyc-a.yaml" <<'Y'
extends: cyc-b
Y
cat >"$P/cyc-b.yaml" <<'Y'
extends: [base, cyc-a]
Y
run "$XL" env cyc-a
expect_rc 65 "cycle"
expect_err "extends cycle: cyc-a -> cyc-b -> cyc-a" "cycle printed"
cat >"$P/typo.yaml" <<'Y'
description: typo
flgs: {}
Y
run "$XL" exec typo -- true
expect_rc 65 "unknown key"
expect_err "typo.yaml:2:1: unknown key 'flgs' in the profile; did you mean 'flags'?" "position and hint"
run "$XL" env nope
expect_rc 66 "not found"
run "$XL" env ../x
expect_rc 64 "name escaping the path refused"

# profile list/show/diff/check
run "$XL" profile list
expect_out "child" "list"
run "$XL" profile show child --explain
expect_out "--xla_force_host_platform_device_count=4    # $P/child.yaml:9" "explain names file and line of a token"
run "$XL" profile diff base child
expect_rc 1 "diff exits 1 when different"
expect_out "~ OVERRIDDEN: base -> child" "diff variable"
expect_out "- XLA_FLAGS --xla_dump_to: /tmp/dump -> (none)" "diff flag"
run "$XL" profile diff base base
expect_rc 0 "diff exits 0 when equal"
run "$XL" profile check base child
expect_rc 0 "check"
run "$XL" profile check typo
expect_rc 65 "check refuses"
run "$XL" profile check "$P/child.yaml"
expect_rc 0 "check a file by path"

# a launch does not load libm (common/libm.c opens it on first use); a build
# that links a shared library needing it (SAN=1, STATIC_DEPS=0) loads it anyway
if ldd "$XL" 2>/dev/null | grep -q 'libm\.so'; then
	echo "note: $XL links a library that needs libm; the launch-without-libm check does not apply"
else
	rm -f "$T"/ld.*
	LD_DEBUG=files LD_DEBUG_OUTPUT="$T/ld" "$XL" exec child -- true >"$T/out" 2>"$T/err" ||
		fail "exec under LD_DEBUG"
	ls "$T"/ld.* >/dev/null 2>&1 || fail "LD_DEBUG wrote nothing: the check would not see libm"
	grep -q 'file=libc\.so' "$T"/ld.* || fail "LD_DEBUG output lacks libc: the check would not see libm"
	! grep -q 'file=libm\.so' "$T"/ld.* || { grep 'libm' "$T"/ld.*; fail "exec loaded libm"; }
	ok "exec does not load libm"
fi

# help everywhere, prefixes, ambiguity
for c in env exec profile help version; do
	run "$XL" $c --help
	expect_rc 0 "$c --help"
	expect_out "usage: xlaunch $c" "$c usage"
done
run "$XL" prof list
expect_rc 0 "unique prefix"
run "$XL" e child
expect_rc 64 "ambiguous prefix"
expect_err "ambiguous command 'e' (could be env, exec)" "ambiguous named"
run "$XL" help exit-codes
expect_out "77" "exit codes listed"
done_ok
