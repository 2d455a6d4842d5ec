# run_pg_outage.sh - a PostgreSQL store that goes away never blocks or loses
# a launch: the server stopped in the middle of a launch, down when a launch
# starts, restarted during one, and hung (stopped with SIGSTOP).  The launch
# runs, says the store is unreachable, keeps its record, and the record is
# on the server after the next launch that reaches it.  A private server of
# its own (tools/pg.sh), since this test stops it.
. "$(dirname "$0")/lib.sh"
"$SRC/tools/pg.sh" available 2>/dev/null || skip "no PostgreSQL server programs (tools/deps.sh installs them)"
PGD=$("$SRC/tools/pg.sh" new) || fail "tools/pg.sh could not start a server"
PG_STOPPED=""
cleanup() {
	# a hung server is let go before it is removed
	[ -n "$PG_STOPPED" ] && kill -CONT $PG_STOPPED 2>/dev/null
	"$SRC/tools/pg.sh" destroy "$PGD"
	rm -rf "$T"
}
trap cleanup EXIT
URL=$("$SRC/tools/pg.sh" url "$PGD")
PSQL="$("$SRC/tools/pg.sh" bindir)/psql"
on_server() { "$PSQL" -X -q -At "$URL" -c "$1"; }
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P" XLAUNCH_STORE="$URL"
echo 'env: {A: 1}' >"$P/p.yaml"
PENDING="$XDG_STATE_HOME/xlaunch/pending"
pending() { ls "$PENDING" 2>/dev/null | wc -l; }
# the child of a launch started in the background waits for $T/go
JOB="touch '$T/started'; while [ ! -e '$T/go' ]; do sleep 0.05; done; echo launched"
start_launch() {
	rm -f "$T/started" "$T/go"
	"$XL" run p -- sh -c "$JOB" >"$T/bg.out" 2>"$T/bg.err" &
	bg=$!
	wait_until "$HANG_S" test -e "$T/started" || fail "the launch did not start"
}
finish_launch() {
	touch "$T/go"
	set +e; wait $bg; rc=$?; set -e
	cp "$T/bg.out" "$T/out"; cp "$T/bg.err" "$T/err"
}

t0=$(now_s)
run "$XL" run p -- true
base=$(secs_since "$t0")
expect_rc 0 "a first launch makes the store on the server"
expect_eq "$(on_server 'SELECT count(*) FROM attempts')" 1 "its record is there"

# 1. the server stops in the middle of a launch
start_launch
"$SRC/tools/pg.sh" stop "$PGD"
finish_launch
expect_rc 0 "the launch ends as its child did"
expect_out "launched" "the child ran to its end"
expect_err "unreachable" "the store is said to be unreachable"
expect_err "kept in '$PENDING/" "the record is kept"
expect_eq "$(pending)" 1 "one record pending"
id1=$(ls "$PENDING" | sed 's/\.json$//')

# 2. the server is down when a launch starts: a refused connection is
# given up at once, so the store wait is set far past any bound here (a
# launch that waited would take 600 s)
t0=$(now_s)
XLAUNCH_STORE_WAIT=600s run timeout "$HANG_S" "$XL" run p -- sh -c 'echo launched'
secs=$(secs_since "$t0")
expect_rc 0 "a launch while the server is down"
expect_out "launched" "the child ran"
expect_err "unreachable" "said at the start"
expect_err "launching anyway" "and the launch goes on"
ok "no delay: ${secs}s"
expect_eq "$(pending)" 2 "two records pending"

# the server returns: the next launch that reaches it puts them in
"$SRC/tools/pg.sh" start "$PGD"
run "$XL" run p -- true
expect_rc 0 "a launch once the server is back"
expect_err "replayed 2 records" "the kept records replayed"
expect_eq "$(pending)" 0 "nothing pending"
expect_eq "$(on_server "SELECT count(*) FROM attempts WHERE id = '$id1'")" 1 "the record of the interrupted launch is on the server"
expect_eq "$(on_server 'SELECT count(*) FROM attempts')" 4 "every launch recorded once"

# 3. the server restarts during a launch: the record goes in at once, on a
# new connection
start_launch
"$SRC/tools/pg.sh" stop "$PGD"
"$SRC/tools/pg.sh" start "$PGD"
finish_launch
expect_rc 0 "a launch across a restart"
expect_out "launched" "its child ran"
expect_eq "$(pending)" 0 "nothing kept: the record went in"
expect_eq "$(on_server 'SELECT count(*) FROM attempts')" 5 "recorded across the restart"

# 4. the server hangs (stopped, connections open, nothing answers): the
# launch waits XLAUNCH_STORE_WAIT at most, at its start or at its end.  The
# first launch, against a server that answered, took $base s; the wait of
# 1 s adds 1 s to that, the default wait would add 10 s
pm=$(head -1 "$PGD/data/postmaster.pid")
hang() {
	PG_STOPPED="$pm $(pgrep -P "$pm" | tr '\n' ' ')"
	# shellcheck disable=SC2086
	kill -STOP $PG_STOPPED
}
wake() {
	# shellcheck disable=SC2086
	kill -CONT $PG_STOPPED
	PG_STOPPED=""
}
export XLAUNCH_STORE_WAIT=1s
start_launch
hang
t0=$(now_s)
finish_launch
secs=$(secs_since "$t0")
expect_rc 0 "a launch whose server hangs at its end"
expect_out "launched" "the child ran"
expect_err "no answer from the server within 1 s" "the wait is named"
expect_err "kept in" "the record is kept"
below "$secs" "$(awk -v b="$base" 'BEGIN { print b + 9 }')" ||
	fail "the launch waited ${secs}s for a hung server (${base}s for one that answered)"
ok "given up after ${secs}s"
t0=$(now_s)
run timeout "$HANG_S" "$XL" run p -- sh -c 'echo launched'
secs=$(secs_since "$t0")
expect_rc 0 "a launch while the server hangs"
expect_out "launched" "its child ran"
expect_err "unreachable: no answer from the server within 1 s" "said so"
below "$secs" "$(awk -v b="$base" 'BEGIN { print b + 9 }')" ||
	fail "a hung server delayed the launch by ${secs}s (${base}s for one that answered)"
ok "a hung server delayed the launch ${secs}s (one wait of 1 s: found unreachable at its start)"
expect_eq "$(pending)" 2 "both records kept"
wake
unset XLAUNCH_STORE_WAIT
run "$XL" run p -- true
expect_err "replayed 2 records" "replayed when the server answers again"
expect_eq "$(on_server 'SELECT count(*) FROM attempts')" 8 "every launch recorded once"
expect_eq "$(on_server "SELECT count(*) FROM attempts a LEFT JOIN signatures s ON s.hash = a.signature WHERE s.hash IS NULL")" 0 "the store is consistent"
done_ok
