#!/bin/sh
# under-load.sh - runs a command while a CPU hog keeps the host's cores busy,
# the way a shared CI machine or a workstation with a training job beside it
# is busy: `make test-load` runs the whole test suite this way.
#
#   tools/under-load.sh [-n WORKERS] [-l LOG] COMMAND [ARG...]
#
# The hog is Debian's stress-ng: WORKERS CPU workers (default 2, or
# $LOAD_CPUS; 2 keeps both cores of a 2-core host busy) at the same priority
# as the tests.  Its own output goes to LOG (default
# ${TMPDIR:-/tmp}/xlaunch-load.XXXXXX.log, removed at the end unless the
# command failed), never into the command's.  It is stopped when the command
# ends, whatever way it ends (normal exit, failure, Ctrl-C, TERM), and it stops
# on its own after 4 hours in case this script itself is killed with SIGKILL.
# Exits with the command's status; 69 when stress-ng is not installed
# (tools/deps.sh installs it), 70 when the hog did not start or stopped
# before the command ended (the command did not run under load).
set -u
workers=${LOAD_CPUS:-2}
log=""
while [ $# -gt 0 ]; do
	case "$1" in
	-n) workers=$2; shift 2 ;;
	-l) log=$2; shift 2 ;;
	--) shift; break ;;
	-*) echo "usage: tools/under-load.sh [-n WORKERS] [-l LOG] COMMAND [ARG...]" >&2; exit 64 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: tools/under-load.sh [-n WORKERS] [-l LOG] COMMAND [ARG...]" >&2; exit 64; }
case "$workers" in
'' | *[!0-9]*) echo "under-load: '-n $workers': not a number of workers" >&2; exit 64 ;;
esac
command -v stress-ng >/dev/null 2>&1 || {
	echo "under-load: 'stress-ng': not installed (tools/deps.sh installs it)" >&2
	exit 69
}
keep_log=1
if [ -z "$log" ]; then
	log=$(mktemp "${TMPDIR:-/tmp}/xlaunch-load.XXXXXX") || exit 70
	keep_log=0
fi

hog=""
stop_hog() {
	[ -n "$hog" ] || return 0
	# stress-ng's parent stops its workers when it is sent TERM
	kill -TERM "$hog" 2>/dev/null
	i=0
	while kill -0 "$hog" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	kill -KILL "$hog" 2>/dev/null
	wait "$hog" 2>/dev/null
	hog=""
}
trap 'stop_hog' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# --cpu-load 100: each worker never sleeps; --timeout: the last guard
stress-ng --cpu "$workers" --cpu-load 100 --timeout 4h --metrics-brief >"$log" 2>&1 &
hog=$!
# the hog is up when its workers are (children of its parent process)
workers_up() {
	n=$(pgrep -c -P "$hog" 2>/dev/null)
	[ "${n:-0}" -ge "$workers" ]
}
i=0
while ! workers_up && [ $i -lt 100 ]; do
	kill -0 "$hog" 2>/dev/null || break
	sleep 0.1; i=$((i + 1))
done
if ! kill -0 "$hog" 2>/dev/null || ! workers_up; then
	echo "under-load: 'stress-ng': the CPU hog did not start; its output:" >&2
	sed 's/^/    /' "$log" >&2
	exit 70
fi
echo "under-load: stress-ng --cpu $workers is running (pid $hog, load average $(cut -d' ' -f1-3 /proc/loadavg))"
start=$(date +%s)
"$@"
rc=$?
echo "under-load: the command exited $rc after $(( $(date +%s) - start )) s under load (load average $(cut -d' ' -f1-3 /proc/loadavg))"
# a hog that stopped early leaves a run that was not under load: a failure
if ! workers_up; then
	echo "under-load: 'stress-ng': the CPU hog stopped before the command ended; its output:" >&2
	sed 's/^/    /' "$log" >&2
	[ $rc -ne 0 ] || rc=70
fi
stop_hog
if [ $keep_log -eq 0 ]; then
	if [ $rc -ne 0 ]; then echo "under-load: stress-ng's own output is in $log"; else rm -f "$log"; fi
fi
exit $rc
