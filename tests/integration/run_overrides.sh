# run_overrides.sh - `--set VAR=VALUE` and `--flag VAR:NAME=VALUE` on run,
# exec and profile show: one layer after the profile and its candidate,
# "the command line", checked (an unknown flag refused), shown by --explain
# as set there, in the child's environment, in the manifest with its
# source, and part of the signature like any other setting.
. "$(dirname "$0")/lib.sh"
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P" XLAUNCH_STORE="$T/store/calib.db"
RUNS="$XDG_STATE_HOME/xlaunch/runs"
cat >"$P/base.yaml" <<'Y'
description: a profile with a candidate
env: {MODE: profile, KEEP: kept}
flags:
  XLA_FLAGS: {xla_force_host_platform_device_count: 4}
candidates:
  - {name: small, env: {MODE: candidate}}
Y

run "$XL" exec -c small --set MODE=cli --set NEW=1 --flag XLA_FLAGS:--xla_dump_to=/tmp/d \
	--flag XLA_FLAGS:xla_force_host_platform_device_count=2 base -- sh -c 'echo "$MODE $NEW $KEEP|$XLA_FLAGS"'
expect_rc 0 "exec with --set and --flag"
expect_out "cli 1 kept|--xla_force_host_platform_device_count=2 --xla_dump_to=/tmp/d" "after the candidate, flags merged"
run "$XL" exec --flag XLA_FLAGS:xla_no_such_flag=1 base -- true
expect_rc 65 "an unknown flag is refused as in a profile"
expect_err "profile 'base': the command line: XLA_FLAGS: unknown flag '--xla_no_such_flag'" "the place is the command line"
run "$XL" exec --set 1X=2 base -- true
expect_rc 64 "not a variable name"
run "$XL" exec --flag XLA_FLAGS=x base -- true
expect_rc 64 "--flag needs VAR:NAME=VALUE"
run "$XL" exec --flag MODE:x=1 base -- true
expect_rc 64 "--flag names a flag variable"
expect_err "VAR one of XLA_FLAGS, LIBTPU_INIT_ARGS, TF_XLA_FLAGS" "says which"
run "$XL" exec --set MODE=a --set MODE=b --flag XLA_FLAGS:xla_dump_to=/x \
	--flag XLA_FLAGS:--xla_dump_to=/y base -- sh -c 'echo "$MODE|$XLA_FLAGS"'
expect_rc 0 "given twice"
expect_out "b|--xla_force_host_platform_device_count=4 --xla_dump_to=/y" "the last one counts"
run "$XL" profile show base -c small --set MODE=cli --flag XLA_FLAGS:xla_dump_to=/tmp/d --explain
expect_rc 0 "profile show takes them"
expect_out "MODE=cli    # the command line" "--explain: set on the command line"
expect_out "--xla_dump_to=/tmp/d    # the command line" "a flag too"
expect_out "--xla_force_host_platform_device_count=4    # $P/base.yaml:4" "the profile's own kept"

run "$XL" run --set MODE=cli --flag XLA_FLAGS:xla_force_host_platform_device_count=2 base -- sh -c 'echo "$MODE"'
expect_rc 0 "run with --set"
expect_out cli "the child has it"
id1=$(grep -o ' run [0-9]\{8\}T[^ ]*' "$T/err" | tail -1 | sed 's/^ run //')
m1="$RUNS/$id1/manifest.json"
expect_eq "$(jget "$m1" env.MODE)" cli "the manifest's environment"
expect_eq "$(jget "$m1" flags.XLA_FLAGS.0.source)" "the command line" "the flag's source"
expect_eq "$(jget "$m1" signature.parts.toggles.env.MODE)" cli "in the signature's settings"
run "$XL" run base -- sh -c 'echo "$MODE"'
id2=$(grep -o ' run [0-9]\{8\}T[^ ]*' "$T/err" | tail -1 | sed 's/^ run //')
[ "$(jget "$m1" signature.hash)" != "$(jget "$RUNS/$id2/manifest.json" signature.hash)" ] ||
	fail "the same signature with and without --set"
ok "another signature"
done_ok
