# test_runner.sh - tools/run-tests.sh itself, on a tree of small tests of
# our own: JOBS tests run at once and never more (two tests that each wait
# for the other pass only side by side; a count kept by the tests never
# exceeds JOBS), JOBS=1 runs one at a time, a test marked "alone" has
# nothing beside it, the lines come in a stable order whatever order the
# tests end in, a failed test's log follows its line, the closing line
# counts, each test has a TMPDIR and a PostgreSQL database of its own, the
# times are kept for the next run's order, and a run that is stopped ends
# every test it started.  Nothing here waits for a fixed time.
. "$(dirname "$0")/lib.sh"
command -v setsid >/dev/null || skip "setsid is not installed (util-linux)"
W="$T/tree"
mkdir -p "$W/tools" "$W/tests/integration" "$W/build/tests" "$T/shared"
cp "$SRC/tools/run-tests.sh" "$SRC/tools/pg.sh" "$W/tools/"
cp "$SRC/tests/integration/lib.sh" "$W/tests/integration/"
S="$T/shared"

# Every test: enters (a token in $S/in, the most seen at once kept), does
# its part, leaves.  A test's own TMPDIR and database go to $S/seen.
cat >"$W/tests/common.sh" <<'EOF'
S=$XLT_SHARED
enter() {
	: >"$S/in/$NAME"
	n=$(ls "$S/in" | wc -l)
	echo "$n" >>"$S/counts"
	echo "$NAME tmp=$TMPDIR pg=${XLAUNCH_TEST_PG:-}" >>"$S/seen"
	[ -n "$(ls "$S/alone" 2>/dev/null)" ] && echo "$NAME beside $(ls "$S/alone")" >>"$S/violations"
	return 0
}
leave() { rm -f "$S/in/$NAME"; }
# wait_for FILE: a hang guard only
wait_for() { i=0; while [ ! -e "$1" ]; do sleep 0.02; i=$((i + 1)); [ $i -lt 15000 ] || exit 3; done; }
EOF
mk() {  # mk NAME BODY: an integration test
	{ echo "NAME=$1; . \"\$XLT_TREE/tests/common.sh\"; enter"; printf '%s\n' "$2"; echo "leave"; } \
		>"$W/tests/integration/$1.sh"
}
# a and b meet: each waits for the other to have started; a asks the
# database it was given which it is
mk a_meet 'touch "$S/a"; wait_for "$S/b"
[ -z "${XLT_DB_CHECK:-}" ] || "$XLT_PSQL" -X -At "$XLAUNCH_TEST_PG" -c "SELECT current_database()" >>"$S/dbs"'
mk b_meet 'touch "$S/b"; wait_for "$S/a"'
# c fails with a log; d skips
mk c_fail 'echo "the reason c failed"; leave; exit 1'
mk d_skip 'echo "SKIP: d has no reason to run"; leave; exit 77'
# e is listed before f and ends after it: e waits until f has left
mk e_waits 'wait_for "$S/f_left"'
mk f_quick 'leave; touch "$S/f_left"'
# g runs alone: nothing else may be in while it is
{ echo '# test: alone (a check of the runner)'; echo 'NAME=g_alone; . "$XLT_TREE/tests/common.sh"; enter'
  echo 'n=$(ls "$S/in" | wc -l); [ "$n" -eq 1 ] || echo "g_alone with $n in" >>"$S/violations"'
  echo ': >"$S/alone/g"; ls "$S/in" >"$S/g_saw"; rm -f "$S/alone/g"; leave'; } >"$W/tests/integration/g_alone.sh"
# a unit test (any executable) with a HOME of its own
cat >"$W/build/tests/test_unit" <<'EOF2'
#!/bin/sh
NAME=test_unit; . "$XLT_TREE/tests/common.sh"; enter
echo "unit home=$HOME" >>"$S/seen"; leave
EOF2
chmod +x "$W/build/tests/test_unit"
XLT_PSQL="$("$SRC/tools/pg.sh" bindir 2>/dev/null)/psql"
export XLT_PSQL
export XLT_TREE="$W" XLT_SHARED="$S"

fresh() { rm -rf "$S"; mkdir -p "$S/in" "$S/alone"; : >"$S/counts"; : >"$S/seen"; }
runner() {  # runner JOBS [TESTS]: the runner on the tree; $T/out, $T/err, $rc
	set +e
	(cd "$W" && JOBS=$1 TESTS="${2:-}" tools/run-tests.sh build "$W/xl") >"$T/out" 2>"$T/err"
	rc=$?
	set -e
}
max_in() { sort -n "$S/counts" | tail -1; }

# ---- two at a time ---------------------------------------------------------------------
# a server of the caller's (XLAUNCH_TEST_PG) is passed on as it is: no
# server is started for the runs below but one
export XLAUNCH_TEST_PG=postgresql://unused
fresh
runner 2
expect_rc 1 "one test failed: the run fails"
expect_out "6 passed, 1 failed, 1 skipped" "the closing line"
expect_out "failed: integration/c_fail" "the failed test named"
expect_out "    the reason c failed" "its log follows its line"
expect_out "SKIP integration/d_skip: SKIP: d has no reason to run" "a skip and its reason"
grep -E '^(PASS|FAIL|SKIP) ' "$T/out" | sed 's/ (.*//; s/:.*//' >"$T/order"
printf '%s\n' "PASS unit/test_unit" "PASS integration/a_meet" "PASS integration/b_meet" \
	"FAIL integration/c_fail" "SKIP integration/d_skip" "PASS integration/e_waits" \
	"PASS integration/f_quick" "PASS integration/g_alone" >"$T/want"
diff "$T/want" "$T/order" >/dev/null || { diff "$T/want" "$T/order"; fail "the lines are not in the list's order"; }
ok "one line per test in the list's order (f ended before e; a and b ran side by side)"
expect_eq "$(max_in)" 2 "never more than JOBS=2 at once"
expect_eq "$(grep -c ' pg=postgresql://unused$' "$S/seen")" 8 "the caller's server passed on to every test"
expect_no_out "PostgreSQL test server" "and none started"
[ ! -e "$S/violations" ] || { cat "$S/violations"; fail "a test ran beside the alone one"; }
expect_eq "$(cat "$S/g_saw")" "g_alone" "the alone test saw only itself"
# a TMPDIR of its own each, removed after
n=$(grep -c ' tmp=' "$S/seen"); u=$(sed -n 's/.* tmp=\([^ ]*\) .*/\1/p' "$S/seen" | sort -u | wc -l)
expect_eq "$u" "$n" "each test had a TMPDIR of its own"
for d in $(sed -n 's/.* tmp=\([^ ]*\) .*/\1/p' "$S/seen"); do [ ! -e "$d" ] || fail "$d was left"; done
ok "and each was removed"
h=$(sed -n 's/^unit home=//p' "$S/seen")
case "$h" in */xlaunch-tests.*/tmp/test_unit/home) ok "the unit test's HOME is its own ($h)" ;; *) fail "unit HOME $h" ;; esac
[ -s "$W/build/test-times" ] || fail "no times kept"
expect_eq "$(wc -l <"$W/build/test-times")" 8 "the times of all eight tests kept"

# ---- one at a time, the longest first ---------------------------------------------------
fresh
printf 'c_fail 1\nd_skip 100\ng_alone 500\ntest_unit 900\nzz_other 7\n' >"$W/build/test-times"
runner 1 "c_fail d_skip f_quick g_alone"
expect_out "3 passed, 1 failed, 1 skipped" "JOBS=1: the closing line"
expect_eq "$(max_in)" 1 "JOBS=1: one at a time"
expect_eq "$(cut -d' ' -f1 "$S/seen" | grep -v '^unit$' | tr '\n' ' ')" "test_unit f_quick d_skip c_fail g_alone " \
	"started: the unit tests, then one without a time, then the longest first, the alone one last"
grep -q '^test_unit ' "$W/build/test-times" && grep -qx 'zz_other 7' "$W/build/test-times" ||
	fail "the times file lost a test"
ok "the times of this run merged with the others'"

# ---- more jobs than tests ----------------------------------------------------------------
fresh
runner 8 "a_meet b_meet e_waits f_quick"
expect_out "5 passed, 0 failed, 0 skipped" "JOBS=8 on five tests"

# ---- JOBS unset: the CPUs, at most one test per 3 GiB of memory ---------------------------
fresh
want=$(nproc); memg=$(awk '/^MemTotal:/ { print int($2 / 1048576) }' /proc/meminfo)
[ $((memg / 3)) -ge "$want" ] || want=$((memg / 3))
[ "$want" -ge 1 ] || want=1
# a_meet and b_meet pass only side by side: where one at a time is the
# default, two that never wait for each other stand in
if [ "$want" -ge 2 ]; then
	runner "" "a_meet b_meet f_quick"
	expect_out "4 passed, 0 failed, 0 skipped" "JOBS unset: the tests that meet met"
else
	runner "" "c_fail f_quick"
fi
[ "$(max_in)" -le "$want" ] || fail "JOBS unset: $(max_in) at once, more than $want ($(nproc) CPUs, $memg GiB)"
if [ "$want" -lt "$(nproc)" ]; then expect_out "JOBS=$want: " "JOBS unset: lowered for the memory, and said so"
else expect_no_out "JOBS=" "JOBS unset: the CPUs, nothing said"; fi
ok "JOBS unset: at most $want at once ($(nproc) CPUs, $memg GiB of memory)"

# ---- a database of its own ---------------------------------------------------------------
if "$SRC/tools/pg.sh" available 2>/dev/null; then
	fresh
	unset XLAUNCH_TEST_PG
	export XLT_DB_CHECK=1
	runner 2 "a_meet b_meet"
	unset XLT_DB_CHECK
	expect_out "3 passed, 0 failed, 0 skipped" "with the run's PostgreSQL server"
	expect_out "(a database per test)" "the server announced"
	pa=$(sed -n 's/^a_meet .* pg=//p' "$S/seen"); pb=$(sed -n 's/^b_meet .* pg=//p' "$S/seen")
	case "$pa" in postgresql://*/t_a_meet\?*) ok "a's database: $pa" ;; *) fail "a's database: '$pa'" ;; esac
	case "$pb" in postgresql://*/t_b_meet\?*) ok "b's database" ;; *) fail "b's database: '$pb'" ;; esac
	expect_eq "$(cat "$S/dbs")" "t_a_meet" "a reached its own database"
	pgd=$(echo "$pa" | sed 's/.*host=\([^&]*\).*/\1/')
	[ ! -e "$pgd" ] || fail "the run's server directory $pgd was left"
	ok "the server removed at the end"
else
	echo "note: no PostgreSQL server programs: the database part is left out"
fi

# ---- stopped: every test it started ends ----------------------------------------------------
fresh
mk h_hang 'sh -c "echo \$\$ >\"$S/h_pid\"; exec sleep 100000" & wait'
(cd "$W" && JOBS=2 TESTS="h_hang" exec tools/run-tests.sh build "$W/xl" >"$T/hang.out" 2>&1) &
rp=$!
wait_until "$HANG_S" test -s "$S/h_pid" || fail "the hanging test did not start"
hp=$(cat "$S/h_pid")
kill -0 "$hp" || fail "the hanging test's child is not running"
kill -TERM "$rp"
set +e; wait "$rp"; rrc=$?; set -e
expect_eq "$rrc" 143 "the stopped runner's status"
wait_until "$HANG_S" sh -c "! kill -0 $hp 2>/dev/null" || fail "the test's child $hp outlived the runner"
ok "the test's child ended with the runner"
rm -f "$W/tests/integration/h_hang.sh"

# ---- a name in TESTS that is no test ---------------------------------------------------------
fresh
runner 2 "f_quick no_such_test"
expect_rc 1 "TESTS naming a test that does not exist"
expect_out "FAIL TESTS: 'no_such_test' is no test in tests/integration" "said"
expect_out "2 passed, 1 failed, 0 skipped" "counted as a failure; the others ran"

# ---- the options ---------------------------------------------------------------------------
runner x
expect_rc 64 "JOBS=x"
expect_err "JOBS='x': not a positive number" "said"
done_ok
