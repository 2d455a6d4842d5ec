# yaml_suite.sh - every file of the YAML test suite through `profile check`:
# no crash, no hang, and every refusal names a position.
. "$(dirname "$0")/lib.sh"
SUITE="$SRC/../shared/testdata/yaml-test-suite"
[ -d "$SUITE" ] || skip "the YAML test suite is not at $SUITE"
P="$T/profiles"; mkdir -p "$P"
n=0 refused=0 accepted=0
for f in "$SUITE"/*.yaml; do
	name=$(basename "$f" .yaml)
	cp "$f" "$P/$name.yaml"
	set +e
	# a guard against a hang only ($HANG_S, lib.sh): a file takes milliseconds
	timeout "$HANG_S" "$XL" --profile-path "$P" profile check "$name" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	case $rc in
	0) accepted=$((accepted + 1)) ;;
	65) refused=$((refused + 1))
	    # the first line names file:line:col
	    grep -qE "^xlaunch: profile '[^']+': .*\.yaml:[0-9]+:[0-9]+: " "$T/err" ||
		{ cat "$T/err"; fail "$name: refusal without a position"; } ;;
	124) fail "$name: hung (over $HANG_S s)" ;;
	*) cat "$T/err"; fail "$name: exit $rc (crash or sanitizer report?)" ;;
	esac
	if grep -q "Sanitizer" "$T/err"; then cat "$T/err"; fail "$name: sanitizer report"; fi
	n=$((n + 1))
done
[ $n -gt 300 ] || fail "only $n suite files"
echo "$n files: $accepted accepted, $refused refused with positions"
done_ok
