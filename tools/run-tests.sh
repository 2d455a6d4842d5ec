#!/bin/sh
# Runs every unit test binary and every integration test script, then prints
# one closing line: "N passed, N failed, N skipped".
#   tools/run-tests.sh BUILD_DIR XLAUNCH_BINARY
BUILD=${1:-build/rel}
XL=${2:-./xlaunch}
case "$XL" in /*) ;; *) XL="$(pwd)/$XL" ;; esac
export XLAUNCH_BIN="$XL"
export XLAUNCH_SRC="$(pwd)"
export XLAUNCH_DATADIR="$(pwd)"
pass=0 fail=0 skip=0 failed=""
log=$(mktemp -d "${TMPDIR:-/tmp}/xlaunch-tests.XXXXXX")
for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	if "$t" >"$log/$name.log" 2>&1; then
		pass=$((pass + 1)); echo "PASS unit/$name"
	else
		fail=$((fail + 1)); failed="$failed unit/$name"; echo "FAIL unit/$name"
		sed 's/^/    /' "$log/$name.log" | tail -40
	fi
done
for t in tests/integration/*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	[ "$name" = lib ] && continue
	if [ -n "$TESTS" ] && ! echo " $TESTS " | grep -q " $name "; then continue; fi
	start=$(date +%s)
	sh "$t" >"$log/$name.log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1)); echo "PASS integration/$name (${secs}s)"
	elif [ $rc -eq 77 ]; then
		skip=$((skip + 1)); echo "SKIP integration/$name: $(grep '^SKIP' "$log/$name.log" | tail -1)"
	else
		fail=$((fail + 1)); failed="$failed integration/$name"
		echo "FAIL integration/$name (${secs}s)"
		sed 's/^/    /' "$log/$name.log" | tail -60
	fi
done
rm -rf "$log"
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
