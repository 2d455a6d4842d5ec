# profiles_expected.sh - tests/profiles/pass-*.yaml resolve to exactly their
# .out (profile show --explain); fail-*.yaml fail with exactly their .out
# (stderr and exit status).  UPDATE=1 rewrites the .out files.
. "$(dirname "$0")/lib.sh"
cd "$SRC/tests/profiles"
export XLAUNCH_PROFILE_PATH=.
n=0
for f in pass-*.yaml fail-*.yaml; do
	name=${f%.yaml}
	set +e
	# no Python for the release the job will load: every machine says the
	# same (each family judged as its newest known release)
	case $f in
	pass-*) VIRTUAL_ENV= PATH=/nonexistent "$XL" profile show "$name" --explain >"$T/got" 2>&1; rc=$? ;;
	fail-*) VIRTUAL_ENV= PATH=/nonexistent "$XL" profile show "$name" >/dev/null 2>"$T/got"; rc=$? ;;
	esac
	set -e
	echo "exit $rc" >>"$T/got"
	# machine-specific directories are written as $T and $SRC
	sed -e "s|$T|\$T|g" -e "s|$SRC|\$SRC|g" "$T/got" >"$T/got.n" && mv "$T/got.n" "$T/got"
	if [ -n "${UPDATE:-}" ]; then cp "$T/got" "$name.out"; fi
	[ -f "$name.out" ] || fail "$name.out is missing (run with UPDATE=1 to create it)"
	if ! cmp -s "$T/got" "$name.out"; then
		diff -u "$name.out" "$T/got"
		fail "$name: output differs from $name.out"
	fi
	case $f in
	pass-*) [ $rc -eq 0 ] || fail "$name: exit $rc" ;;
	fail-*) [ $rc -ne 0 ] || fail "$name: should fail" ;;
	esac
	n=$((n + 1)); ok "$name"
done
[ $n -ge 10 ] || fail "only $n expected-output cases"
done_ok
