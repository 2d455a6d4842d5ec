#!/bin/sh
# slurm.sh - a private single-node Slurm cluster for the tests: munged, one
# slurmctld and one slurmd on this host, everything they keep (key, socket,
# state, spool, logs, pid files) in one directory of their own and their
# ports picked free (never Slurm's defaults), so two test runs, or a
# system-wide Slurm, never meet.  Debian's slurm-wlm and munge (tools/deps.sh).
#
#   tools/slurm.sh new           makes a directory under ${TMPDIR:-/tmp}, starts
#                                the three daemons there and waits until the
#                                node is idle; prints the directory
#   tools/slurm.sh env DIR       the line to reach it: SLURM_CONF=DIR/slurm.conf
#                                (srun, sbatch, squeue, scontrol, scancel)
#   tools/slurm.sh destroy DIR   cancels every job, stops the daemons and
#                                whatever of the cluster is left (a step's
#                                slurmstepd and its tasks), removes DIR
#   tools/slurm.sh available     exit 0 when the programs are installed
#
# Root only (else `new` exits 69 saying so): slurmd starts each task as
# the user who submitted it, which takes root.  munged runs as the `munge`
# user, as Debian's own service runs it, its key readable by that user
# alone; slurmctld runs as root (SlurmUser=root).
# The node is named after this host, at 127.0.0.1, with 16 CPUs whatever the
# machine has (SlurmdParameters=config_overrides): tasks of the tests are
# small.  Processes are tracked by parentage (proctrack/linuxproc), so no
# cgroup setup is needed.  SLURM_WAIT_S bounds the wait for the node (60).
# SLURM_CGROUP=1 makes a cluster that puts each step in memory cgroups of
# its own (proctrack/cgroup, task/cgroup, ConstrainRAMSpace, no swap), with
# 8 GiB of node memory handed out by --mem (CR_CPU_Memory) and job ids
# from a number of its own (FirstJobId), so that two such clusters on one
# host never share a job's cgroup.
set -eu

PROGS="munged slurmctld slurmd srun sbatch scontrol squeue scancel sinfo"

usage() {
	echo "usage: tools/slurm.sh new | env DIR | destroy DIR | available" >&2
	exit 64
}

available() {
	for p in $PROGS; do
		command -v "$p" >/dev/null 2>&1 || {
			echo "slurm.sh: no '$p' (tools/deps.sh installs slurm-wlm and munge)" >&2
			return 1
		}
	done
}

need_dir() {
	[ -n "${1:-}" ] && [ -f "$1/slurm.conf" ] || {
		echo "slurm.sh: '${1:-}' is not a directory made by 'tools/slurm.sh new'" >&2
		exit 66
	}
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on now
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# pidof_file FILE: the pid in FILE when that process still runs
pidof_file() {
	[ -f "$1" ] || return 1
	p=$(cat "$1" 2>/dev/null) || return 1
	[ -n "$p" ] && kill -0 "$p" 2>/dev/null && echo "$p"
}

# stop PID...: SIGTERM to each, then SIGKILL to those still there after 10 s
stop() {
	# shellcheck disable=SC2086
	kill -TERM "$@" 2>/dev/null || true
	i=0
	while [ $i -lt 100 ]; do
		alive=""
		for p in "$@"; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
		[ -n "$alive" ] || return 0
		sleep 0.1; i=$((i + 1))
	done
	# shellcheck disable=SC2086
	kill -KILL $alive 2>/dev/null || true
}

# leftovers DIR: pids of processes holding a file under DIR open or working
# in it (a step's slurmstepd keeps the node's log open), with all their
# descendants (the step's tasks)
leftovers() {
	roots=""
	for p in /proc/[0-9]*; do
		n=${p#/proc/}
		[ "$n" = "$$" ] && continue
		for f in "$p"/cwd "$p"/fd/*; do
			case $(readlink "$f" 2>/dev/null) in
			"$1"/*|"$1") roots="$roots $n"; break ;;
			esac
		done
	done
	[ -n "$roots" ] || return 0
	# descendants, by walking parent links until no new pid joins
	all=" $roots "
	while :; do
		more=$(ps -e -o pid=,ppid= | awk -v all="$all" '
			BEGIN { n = split(all, a, " "); for (i = 1; i <= n; i++) in_[a[i]] = 1 }
			($2 in in_) && !($1 in in_) { print $1 }')
		[ -n "$more" ] || break
		all="$all$(echo $more) "
	done
	echo $all
}

fail_start() {
	echo "slurm.sh: $1; the logs:" >&2
	for f in "$D"/log/*.log "$D"/munge/munged.log; do
		[ -f "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }
	done
	destroy "$D"
	exit 1
}

new() {
	D=$(mktemp -d "${TMPDIR:-/tmp}/xlslurm.XXXXXX")
	D=$(cd "$D" && pwd -P)
	chmod 0755 "$D"
	mkdir -p "$D/state" "$D/spool" "$D/log" "$D/run" "$D/munge"
	chmod 0700 "$D/state" "$D/spool"
	chown munge "$D/munge"
	chmod 0755 "$D/munge"
	as_munge() { (cd / && runuser -u munge -- "$@"); }
	as_munge test -w "$D/munge" || {
		rm -rf "$D"
		echo "slurm.sh: user munge cannot write '$D/munge' (set TMPDIR to a directory it can reach)" >&2
		exit 73
	}
	host=$(hostname -s)
	ctlport=$(free_port)
	dport=$(free_port)
	while [ "$dport" = "$ctlport" ]; do dport=$(free_port); done
	if [ "${SLURM_CGROUP:-0}" = 1 ]; then
		track=proctrack/cgroup task=task/cgroup select=CR_CPU_Memory mem=" RealMemory=8192"
		first="FirstJobId=$(( (($$ * 7919) + $(date +%s)) % 60000000 + 1000000 ))"
	else
		track=proctrack/linuxproc task=task/none select=CR_CPU mem="" first="#"
	fi
	cat >"$D/slurm.conf" <<EOF
# a private single-node cluster made by tools/slurm.sh
ClusterName=xltest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctlport
SlurmdPort=$dport
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/run/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
PlugStackConfig=$D/plugstack.conf
ProctrackType=$track
TaskPlugin=$task
$first
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=$select
ReturnToService=2
SlurmdParameters=config_overrides
SlurmctldTimeout=30
SlurmdTimeout=60
NodeName=$host NodeAddr=127.0.0.1 CPUs=16$mem State=UNKNOWN
PartitionName=xl Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
	: >"$D/plugstack.conf"
	[ "${SLURM_CGROUP:-0}" = 1 ] && printf '%s\n' "CgroupPlugin=autodetect" "ConstrainRAMSpace=yes" \
		"ConstrainSwapSpace=yes" "AllowedSwapSpace=0" >"$D/cgroup.conf"
	# slurm.conf first: destroy, from here on, finds and stops what started
	# the key: 1024 random bytes, readable only by munged's user
	as_munge sh -c "umask 077; head -c 1024 /dev/urandom >'$D/munge/munge.key'"
	as_munge munged --key-file="$D/munge/munge.key" --socket="$D/munge/munge.socket" \
		--pid-file="$D/munge/munged.pid" --log-file="$D/munge/munged.log" \
		--seed-file="$D/munge/munged.seed" >"$D/log/munged.out" 2>&1 ||
		fail_start "munged did not start"
	export SLURM_CONF="$D/slurm.conf"
	slurmctld -i -f "$SLURM_CONF" >"$D/log/slurmctld.out" 2>&1 || fail_start "slurmctld did not start"
	slurmd -N "$host" -f "$SLURM_CONF" >"$D/log/slurmd.out" 2>&1 || fail_start "slurmd did not start"
	end=$(( $(date +%s) + ${SLURM_WAIT_S:-60} ))
	while :; do
		st=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
		[ "$st" = idle ] && break
		[ "$(date +%s)" -lt "$end" ] || fail_start "the node is not idle after ${SLURM_WAIT_S:-60} s (state '$st')"
		sleep 0.2
	done
	echo "$D"
}

destroy() {
	d=$1
	# whatever fails on the way, the directory goes at the end
	set +e
	case "$d" in
	*/xlslurm.*) ;;
	*) echo "slurm.sh: not touching '$d' (not made by 'tools/slurm.sh new')" >&2; exit 64 ;;
	esac
	cd /
	if [ -f "$d/slurm.conf" ]; then
		export SLURM_CONF="$d/slurm.conf"
		if pidof_file "$d/run/slurmctld.pid" >/dev/null; then
			# every job ends the usual way (tasks SIGTERM, then SIGKILL)
			jobs=$(squeue -h -o %A 2>/dev/null || true)
			if [ -n "$jobs" ]; then
				# shellcheck disable=SC2086
				scancel $jobs 2>/dev/null || true
				i=0
				while [ -n "$(squeue -h -o %A 2>/dev/null || true)" ] && [ $i -lt 150 ]; do
					sleep 0.2; i=$((i + 1))
				done
			fi
		fi
		pids=""
		for f in "$d/run/slurmd.pid" "$d/run/slurmctld.pid" "$d/munge/munged.pid"; do
			p=$(pidof_file "$f") && pids="$pids $p"
		done
		# shellcheck disable=SC2086
		[ -z "$pids" ] || stop $pids
		# a step whose slurmd is gone: its slurmstepd and tasks
		left=$(leftovers "$d")
		# shellcheck disable=SC2086
		[ -z "$left" ] || kill -KILL $left 2>/dev/null || true
	fi
	rm -rf "$d"
}

case "$PATH" in */usr/sbin*) ;; *) PATH="$PATH:/usr/sbin:/sbin" ;; esac
cmd=${1:-}
[ $# -gt 0 ] && shift
if [ $# -gt 0 ] && [ -d "$1" ]; then
	d=$(cd "$1" && pwd -P)
	shift
	set -- "$d" "$@"
fi
case "$cmd" in
available)
	available
	;;
new)
	available || exit 69
	[ "$(id -u)" -eq 0 ] || { echo "slurm.sh: a cluster needs root (slurmd starts tasks as their user)" >&2; exit 69; }
	id munge >/dev/null 2>&1 || { echo "slurm.sh: no 'munge' user (the munge package makes it)" >&2; exit 69; }
	new
	;;
env)
	need_dir "${1:-}"
	echo "SLURM_CONF=$1/slurm.conf"
	;;
destroy)
	[ -n "${1:-}" ] || usage
	destroy "$1"
	;;
*)
	usage
	;;
esac
