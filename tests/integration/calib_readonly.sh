# calib_readonly.sh - commands that only read the store create nothing (no
# store file, no directory, no bundle cache), and what run observed of the
# compilations reaches the store: compile count, persistent-cache hits, time
# to the first step and the compile details, shown by calib history.
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"
P="$T/profiles"
mkdir -p "$P"
cat >"$P/plain.yaml" <<'Y'
description: no candidates
env: {PLAIN: yes}
Y
export XLAUNCH_PROFILE_PATH="$P"

listing() { (cd "$T" && find . -path ./profiles -prune -o ! -name out ! -name err -print | sort); }
before=$(listing)
for c in "calib history" "calib history --json" "calib stats" "calib export" \
	 "calib order plain -- python3 -c 1" "calib predict plain -- python3 -c 1"; do
	# shellcheck disable=SC2086
	run "$XL" $c
	expect_rc 0 "$c on no store"
	expect_eq "$(listing)" "$before" "$c creates nothing"
done
run "$XL" calib history
expect_err "no attempts recorded" "an absent store reads as empty"
# a path whose directory is missing: still nothing made
run "$XL" --store "$T/no/such/dir/calib.db" calib stats
expect_rc 0 "stats of a store in a missing directory"
[ ! -e "$T/no" ] || fail "a query made the store's directory"
ok "no directory made"
# a store that is not a database is still an error, not an empty store
printf 'not a database' >"$T/bad.db"
run "$XL" --store "$T/bad.db" calib history
expect_rc 73 "a corrupt store is an error"

# a run whose report names compilations, cache hits and steps
cat >"$T/job.sh" <<'SH'
r=$XLAUNCH_REPORT
echo '{"kind":"compile","count":2,"cache_hits":0}' >>"$r"
echo '{"kind":"step","step":1,"loss":1.0,"step_time_s":0.1}' >>"$r"
sleep 0.2
echo '{"kind":"compile","count":3,"cache_hits":5}' >>"$r"
echo '{"kind":"step","step":2,"loss":0.5,"step_time_s":0.1}' >>"$r"
SH
run "$XL" run plain -- sh "$T/job.sh"
expect_rc 0 "a run that reports compilations"
[ -f "$XDG_STATE_HOME/xlaunch/calib.db" ] || fail "run made no store"
ok "run makes the store"
run "$XL" calib history --json
expect_rc 0 "history --json"
python3 - "$T/out" <<'PY' || fail "the compile fields are not in the store"
import json, sys
a = json.load(open(sys.argv[1]))[0]
assert a["compile_count"] == 3, a["compile_count"]
assert a["cache_hits"] == 5, a["cache_hits"]
assert isinstance(a["first_step_s"], (int, float)) and a["first_step_s"] >= 0, a["first_step_s"]
c = a["details"]["compile"]
assert c["count"] == 3 and c["cache"]["hits"] == 5, c
PY
ok "compile count, cache hits, first step and details recorded"
run "$XL" calib history
expect_out "COMPILES" "history shows compilations"
expect_out "HITS" "history shows cache hits"
awk 'NR == 2 { if ($(NF-1) != 3 || $NF != 5) exit 1 }' "$T/out" || { cat "$T/out"; fail "history row: compiles 3, hits 5"; }
ok "history row"
# and the existing store is only read by the queries
sum=$(cksum <"$XDG_STATE_HOME/xlaunch/calib.db")
run "$XL" calib stats
expect_rc 0 "stats"
expect_eq "$(cksum <"$XDG_STATE_HOME/xlaunch/calib.db")" "$sum" "stats leaves the store as it was"
done_ok
