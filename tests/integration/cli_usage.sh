# cli_usage.sh - help and usage come from the command tables: 'xlaunch help
# X [Y]' prints exactly what 'xlaunch X [Y] --help' prints, for every
# command and subcommand; every parent lists its subcommands' real
# synopses; usage errors have one wording per kind, name the command and
# exit 64.
. "$(dirname "$0")/lib.sh"

# the commands and subcommands, from the generated help itself
cmds=$("$XL" help | awk '/^Commands/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
[ -n "$cmds" ] || fail "no commands listed by 'xlaunch help'"
n=0
for c in $cmds; do
	run "$XL" help $c
	expect_rc 0 "help $c"
	cp "$T/out" "$T/help"
	run "$XL" $c --help
	expect_rc 0 "$c --help"
	cmp -s "$T/help" "$T/out" || { diff "$T/help" "$T/out"; fail "help $c differs from $c --help"; }
	expect_out "usage: xlaunch $c" "$c usage"
	subs=$(awk '/^Subcommands/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }' "$T/help")
	for s in $subs; do
		# the parent shows this subcommand's own usage line
		sub_usage=$("$XL" $c $s --help | head -1 | sed 's/^usage: //')
		grep -qF -- "$sub_usage" "$T/help" || fail "help $c lacks '$sub_usage'"
		run "$XL" help $c $s
		expect_rc 0 "help $c $s"
		cp "$T/out" "$T/help2"
		run "$XL" $c $s --help
		cmp -s "$T/help2" "$T/out" || { diff "$T/help2" "$T/out"; fail "help $c $s differs from $c $s --help"; }
		run "$XL" $c $s -h
		cmp -s "$T/help2" "$T/out" || fail "$c $s -h differs from --help"
		awk 'length > 79 { exit 1 }' "$T/help2" || fail "help $c $s has a line over 79 columns"
		n=$((n + 1))
	done
done
[ "$n" -ge 19 ] || fail "only $n subcommands found"
ok "help and --help agree for $n subcommands"

# the parent's usage is every subcommand's own, not a hand-written line
run "$XL" help calib
for s in history stats order predict record export import forget; do
	expect_out "xlaunch calib $s" "calib $s in calib's usage"
done
expect_no_out "| stats" "no hand-written alternatives"
expect_out "Subcommands (any unique prefix" "subcommands listed"

# one wording per kind of usage error, each naming the command, with the usage
run "$XL" env --nope cpu-jax
expect_rc 64 "unknown option"
expect_err "xlaunch env: unknown option '--nope'" "unknown option worded"
expect_err "usage: xlaunch env PROFILE" "usage follows"
run "$XL" calib history --limit
expect_rc 64 "missing value"
expect_err "xlaunch calib history: option '--limit' needs a value" "missing value worded"
run "$XL" calib history --limit=lots
expect_rc 64 "bad count"
expect_err "xlaunch calib history: option '--limit': 'lots' is not a whole number" "bad count worded"
run "$XL" calib history --outcome=meh
expect_rc 64 "bad outcome"
expect_err "option '--outcome': 'meh' is not an outcome" "bad outcome worded"
run "$XL" calib history --json=yes
expect_rc 64 "value to a flag"
expect_err "option '--json' takes no value" "value to a flag worded"
run "$XL" calib order
expect_rc 64 "missing operand"
expect_err "xlaunch calib order: missing PROFILE" "missing operand worded"
run "$XL" bundle compare 1.0
expect_rc 64 "missing second operand"
expect_err "xlaunch bundle compare: missing B" "missing operand named"
run "$XL" calib forget a b
expect_rc 64 "surplus operand"
expect_err "xlaunch calib forget: unexpected argument 'b'" "surplus operand worded"
run "$XL" env cpu-jax extra
expect_rc 64 "surplus operand (env)"
expect_err "xlaunch env: unexpected argument 'extra'" "the same words for env"
run "$XL" calib record --signature 00 --json
expect_rc 64 "missing required option"
expect_err "xlaunch calib record: missing option '--outcome'" "required option worded"
run "$XL" calib
expect_rc 64 "missing subcommand"
expect_err "xlaunch calib: missing subcommand" "missing subcommand worded"
run "$XL" calib hist0ry
expect_rc 64 "unknown subcommand"
expect_err "unknown command 'calib hist0ry'; did you mean 'calib history'?" "did you mean"
run "$XL" bundle c
expect_rc 64 "ambiguous subcommand"
expect_err "xlaunch: ambiguous command 'bundle c' (could be check, compare)" "ambiguous worded"
run "$XL" profile show --c x cpu-jax
expect_rc 64 "ambiguous option"
expect_err "xlaunch profile show: ambiguous option '--c' (could be --candidate, --color)" "ambiguous option worded"
run "$XL"
expect_rc 64 "no command"
expect_err "xlaunch: missing command" "missing command worded"

# options by unique prefix, anywhere among the operands, as getopt_long allows
run "$XL" bundle compare 1.0 --js 2.0
expect_rc 0 "prefix and permutation"
expect_out '"result": -1' "the --json output"
done_ok
