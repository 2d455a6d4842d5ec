# run_store_failures.sh - a store that fails never blocks or loses a launch:
# a full disk (a file-size limit) and a store held locked past the wait.
. "$(dirname "$0")/lib.sh"
command -v prlimit >/dev/null || skip "prlimit (util-linux) is not installed"
command -v sqlite3 >/dev/null || skip "the sqlite3 shell is not installed"
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P" XLAUNCH_STORE="$T/store/calib.db"
echo 'env: {A: 1}' >"$P/p.yaml"
PENDING="$XDG_STATE_HOME/xlaunch/pending"
run "$XL" run p -- true
expect_rc 0 "first run makes the store"

# disk full: writes past 16 KiB fail with EFBIG (and SIGXFSZ is not fatal)
run prlimit --fsize=16384 "$XL" run p -- sh -c 'echo launched'
expect_rc 0 "the launch is not harmed by a full disk"
expect_out "launched" "the child ran"
expect_err "kept in '$PENDING/" "the record is kept"
expect_eq "$(ls "$PENDING" | wc -l)" 1 "one record pending"
id=$(ls "$PENDING" | sed 's/\.json$//')
run "$XL" run p -- true
expect_err "replayed 1 record" "replayed once the disk has room"
run "$XL" calib history --json
expect_out "$id" "the kept record is in the store"
[ "$(sqlite3 "$XLAUNCH_STORE" 'PRAGMA integrity_check')" = ok ] || fail "integrity after a full disk"
ok "store intact"

# the store held by another process for longer than the wait: the lock is
# taken, said (the file locked), and held until the test lets it go (the
# file unlock) or its directory is gone (twice $HANG_S at most)
t0=$(now_s)
run "$XL" run p -- sh -c 'echo launched'
base=$(secs_since "$t0")
(
	echo 'BEGIN EXCLUSIVE;'
	echo ".shell touch '$T/locked'"
	i=0
	while [ -d "$T" ] && [ ! -e "$T/unlock" ] && [ $i -lt $((20 * HANG_S)) ]; do sleep 0.1; i=$((i + 1)); done
	echo 'ROLLBACK;'
) | sqlite3 "$XLAUNCH_STORE" &
locker=$!
wait_until "$HANG_S" test -e "$T/locked" || fail "the lock was not taken"
t0=$(now_s)
XLAUNCH_STORE_WAIT=1s run timeout "$HANG_S" "$XL" run p -- sh -c 'echo launched'
secs=$(secs_since "$t0")
expect_rc 0 "the launch is not blocked by a locked store"
expect_out "launched" "the child ran while the store was locked"
expect_err "locked for more than 1 s" "the wait is named"
expect_err "kept in" "the record is kept"
# the same launch on the free store just before took $base s: the lock adds
# the wait of 1 s, the default wait would add 10 s, and a launch that waited
# for the lock would run into the `timeout`
below "$secs" "$(awk -v b="$base" 'BEGIN { print b + 9 }')" ||
	fail "run waited ${secs}s for the lock (${base}s with the store free)"
ok "run gave up waiting after ${secs}s (${base}s with the store free)"
XLAUNCH_STORE_WAIT=1s run timeout "$HANG_S" "$XL" calib record --profile p --outcome ok --observed 1GiB
case $rc in 73|64) ;; *) fail "calib record on a locked store: exit $rc" ;; esac
ok "calib write on a locked store fails cleanly ($rc)"
touch "$T/unlock"
wait $locker
run "$XL" run p -- true
expect_err "replayed 1 record" "replayed after the lock"
[ "$(sqlite3 "$XLAUNCH_STORE" 'PRAGMA integrity_check')" = ok ] || fail "integrity after the lock"
ok "store intact after the lock"
run env XLAUNCH_STORE_WAIT=soon "$XL" calib history
expect_rc 78 "a bad XLAUNCH_STORE_WAIT is a configuration error"
done_ok
