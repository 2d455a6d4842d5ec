# libtpu_wait.sh - a libtpu test started while a process outside the suite
# holds libtpu waits for it and then passes, and fails naming that process
# when it never lets go.  The holder locks /tmp/libtpu_lockfile (the file
# libtpu locks, both kinds of lock, so whichever libtpu takes conflicts); the
# real libtpu from PyPI, started by the probe while the lock is held, is
# shown to refuse to start for that reason (the failure the wait prevents),
# and started after the wait, to get as far as it does on a host without a
# TPU.
. "$(dirname "$0")/lib.sh"
venv=$(cd "$SRC" && tools/venv.sh tpu 2>"$T/venv.err") || {
	grep '^SKIP' "$T/venv.err" | tail -1
	skip "$(grep '^SKIP' "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"
}
case "$venv" in /*) ;; *) venv="$SRC/$venv" ;; esac
[ -x "$venv/bin/python" ] || skip "no virtualenv at $venv"
# the suite's own lock first: no other test of the suite starts libtpu
# while this one holds its file
libtpu_lock

# hold LOCKFILE until $T/release exists (HANG_S at most); "$T/held" once held
hold() {
	python3 - "$LIBTPU_LOCKFILE" "$T" "$HANG_S" <<'PY' &
import fcntl, os, sys, time
path, t, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
fcntl.lockf(fd, fcntl.LOCK_EX)
open(t + "/held", "w").close()
end = time.time() + limit
while not os.path.exists(t + "/release") and time.time() < end:
    time.sleep(0.05)
PY
	holder=$!
	wait_until "$HANG_S" test -e "$T/held" || fail "the holder never took the lock"
}
probe() {
	VIRTUAL_ENV="$venv" "$XL" probe --backend pjrt --timeout $PROBE_LIMIT --json --no-record
}
# probe_error FILE: libtpu's error in a probe document
probe_error() {
	python3 -c 'import json,sys; print([b for b in json.load(open(sys.argv[1]))["backends"] if b["name"] == "pjrt:libtpu.so"][0].get("error") or "")' "$1"
}

hold
# the holder's command as the kernel names it (python3, or python3.11
# behind a shim)
comm=$(cat "/proc/$holder/comm")
ok "a process outside the suite holds $LIBTPU_LOCKFILE"
# 1. what the wait prevents: libtpu started now does not get the device
probe >"$T/busy.json" 2>"$T/busy.err" || true
err=$(probe_error "$T/busy.json")
echo "libtpu while the lock is held: $err"
case "$err" in *[Ll]ockfile* | *[Ll]ock\ file*) ok "libtpu refuses to start while another process holds it" ;;
*) fail "the held lock did not stop libtpu: '$err'" ;; esac

# 2. never let go: the wait fails after its limit, naming the holder
(libtpu_wait_outside 1) >"$T/never.out" 2>&1 && fail "the wait passed while the lock was held"
sed "s/^/expected: /" "$T/never.out"
grep -q "held outside the test suite by pid $holder ($comm)" "$T/never.out" ||
	fail "the failure does not name the holder (pid $holder)"
ok "a holder that never lets go is named: pid $holder"

# 3. let go while a test waits: it says who it waits for, then libtpu starts
( set +e; libtpu_wait_outside "$HANG_S" && probe >"$T/after.json" 2>"$T/after.err"; echo $? >"$T/after.rc" ) >"$T/wait.out" 2>&1 &
waiter=$!
wait_until "$HANG_S" grep -q "waiting for libtpu: pid $holder ($comm)" "$T/wait.out" ||
	{ cat "$T/wait.out"; fail "the waiting test did not say whom it waits for"; }
ok "the waiting test names the holder"
touch "$T/release"
wait "$holder" || fail "the holder ended with status $?"
wait "$waiter" || true
cat "$T/wait.out"
expect_eq "$(cat "$T/after.rc")" 69 "libtpu started after the wait: installed, not alive (exit 69)"
err=$(probe_error "$T/after.json")
echo "libtpu after the wait: $err"
case "$err" in *[Ll]ockfile*) fail "libtpu still met the lock: $err" ;; esac
case "$err" in *PJRT_Client_Create*) ok "libtpu got as far as it does on a host without a TPU" ;;
*) fail "libtpu after the wait: '$err'" ;; esac
done_ok
