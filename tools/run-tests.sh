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
# The store tests run on both backends: a private PostgreSQL server
# (tools/pg.sh, on a Unix socket in a temporary directory) for the whole
# run, stopped and removed at the end whatever happens; XLAUNCH_TEST_PG
# names it (or a server of the caller's, when already set).
pgdir=""
cleanup() {
	rm -rf "$log"
	if [ -n "$pgdir" ]; then tools/pg.sh destroy "$pgdir"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ -z "${XLAUNCH_TEST_PG:-}" ]; then
	if ! tools/pg.sh available; then
		echo "SKIP PostgreSQL: no server programs (tools/deps.sh installs them); the store tests run on SQLite only"
	elif pgdir=$(tools/pg.sh new 2>"$log/pg.log"); then
		XLAUNCH_TEST_PG=$(tools/pg.sh url "$pgdir")
		export XLAUNCH_TEST_PG
		echo "PostgreSQL test server: $XLAUNCH_TEST_PG"
	else
		pgdir=""
		fail=$((fail + 1)); failed="$failed postgresql-server"; echo "FAIL postgresql-server"
		sed 's/^/    /' "$log/pg.log" | tail -20
	fi
fi
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
	if [ -n "$TESTS" ] && ! echo " $TESTS " | tr '\n\t' '  ' | grep -q " $name "; then continue; fi
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
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
