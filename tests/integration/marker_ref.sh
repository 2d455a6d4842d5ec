#!/bin/sh
# Requires-Dist markers against packaging, the library pip evaluates them
# with: generated markers and environments, compared one for one.
# make test runs 5000 cases (about a second); MARKER_CASES=N runs more (the
# large run is in tests/bench/RESULTS.md, "Differential tests").
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"

tool="$(dirname "$XL")/tests/test_marker_ref"
[ -x "$tool" ] || tool="$SRC/build/rel/tests/test_marker_ref"
[ -x "$tool" ] || skip "test_marker_ref is not built (make test builds it)"
venv=$(cd "$SRC" && tools/venv.sh ref 2>"$T/venv.err") || {
	cat "$T/venv.err"
	skip "$(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"
}
case "$venv" in /*) ;; *) venv="$SRC/$venv" ;; esac
run "$venv/bin/python" "$SRC/tests/marker_ref.py" "$tool" --cases "${MARKER_CASES:-5000}"
tail -30 "$T/out"
expect_rc 0 "markers agree with packaging"
done_ok
