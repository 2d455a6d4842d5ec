#!/bin/sh
# pg.sh - a private PostgreSQL server for the tests and benchmarks: its own
# directory, listening only on a Unix socket in that directory, run as the
# `postgres` user when invoked as root (initdb refuses root).
#
#   tools/pg.sh new             makes a directory under ${TMPDIR:-/tmp}, initdb's
#                               and starts a server there; prints the directory
#   tools/pg.sh start DIR       starts the server of DIR again (after stop)
#   tools/pg.sh stop DIR        stops it (fast shutdown); the data stays
#   tools/pg.sh destroy DIR     stops it when running and removes DIR
#   tools/pg.sh url DIR [DB]    postgresql:// URL of database DB (default xlaunch)
#   tools/pg.sh psql DIR [ARG...]  psql on the xlaunch database as the superuser
#   tools/pg.sh createdb DIR DB    a new, empty database DB (a test's own)
#   tools/pg.sh dropdb DIR DB      removes DB, ending its sessions
#   tools/pg.sh bindir          the directory of the server's programs (psql too)
#   tools/pg.sh available       exit 0 when the server programs are installed
#
# The server: superuser `xlaunch` (trust over the socket), database `xlaunch`,
# and a group role `xlaunch_password` whose members must give a password
# (scram-sha-256), for tests of password handling.  fsync is off: the data
# is as durable as the test needs, and no more.  PG_BINDIR names the server's
# programs; else the newest /usr/lib/postgresql/*/bin (Debian), else PATH.
set -eu
PORT=5432

bindir() {
	if [ -n "${PG_BINDIR:-}" ]; then echo "$PG_BINDIR"; return; fi
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	if [ -n "$d" ] && [ -x "$d/initdb" ]; then echo "$d"; return; fi
	d=$(command -v initdb 2>/dev/null || true)
	[ -n "$d" ] && dirname "$d" && return
	echo "pg.sh: no PostgreSQL server programs (initdb); tools/deps.sh installs them" >&2
	exit 69
}

# as_owner CMD...: runs CMD as the user that owns the server's files (from
# /, which that user can enter whatever the caller's directory)
as_owner() {
	if [ "$(id -u)" -eq 0 ]; then
		(cd / && runuser -u postgres -- "$@")
	else
		"$@"
	fi
}

usage() {
	echo "usage: tools/pg.sh new | start DIR | stop DIR | destroy DIR | url DIR [DB] | psql DIR [ARG...] | createdb DIR DB | dropdb DIR DB | bindir | available" >&2
	exit 64
}

need_dir() {
	[ -n "${1:-}" ] && [ -f "$1/data/PG_VERSION" ] || {
		echo "pg.sh: '${1:-}' is not a directory made by 'tools/pg.sh new'" >&2
		exit 66
	}
}

start() {
	B=$(bindir)
	if ! as_owner "$B/pg_ctl" -D "$1/data" -l "$1/log" -w -t 60 start >/dev/null; then
		echo "pg.sh: the server in '$1' did not start; its log:" >&2
		tail -20 "$1/log" >&2 || true
		exit 1
	fi
}

cmd=${1:-}
[ $# -gt 0 ] && shift
# DIR as an absolute path: libpq takes a socket directory only as one
if [ $# -gt 0 ] && [ -d "$1" ]; then
	d=$(cd "$1" && pwd -P)
	shift
	set -- "$d" "$@"
fi
case "$cmd" in
available)
	bindir >/dev/null 2>&1
	;;
bindir)
	bindir
	;;
new)
	B=$(bindir)
	D=$(mktemp -d "${TMPDIR:-/tmp}/xlpg.XXXXXX")
	chmod 0755 "$D"
	if [ "$(id -u)" -eq 0 ]; then
		id postgres >/dev/null 2>&1 || { echo "pg.sh: running as root needs a 'postgres' user" >&2; rm -rf "$D"; exit 69; }
		chown postgres "$D"
		runuser -u postgres -- test -w "$D" || {
			echo "pg.sh: user postgres cannot write '$D' (set TMPDIR to a directory it can reach)" >&2
			rm -rf "$D"; exit 73
		}
	fi
	if ! as_owner "$B/initdb" -D "$D/data" -U xlaunch --auth=trust -E UTF8 --locale=C.UTF-8 \
		--no-sync >"$D/initdb.log" 2>&1; then
		echo "pg.sh: initdb failed:" >&2
		tail -20 "$D/initdb.log" >&2
		rm -rf "$D"
		exit 1
	fi
	cat >>"$D/data/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$D'
port = $PORT
max_connections = 200
shared_buffers = 32MB
fsync = off
full_page_writes = off
EOF
	cat >"$D/data/pg_hba.conf" <<EOF
local all +xlaunch_password scram-sha-256
local all all trust
EOF
	start "$D"
	as_owner "$B/psql" -X -q -v ON_ERROR_STOP=1 -h "$D" -p $PORT -U xlaunch -d postgres \
		-c "CREATE DATABASE xlaunch" -c "CREATE ROLE xlaunch_password NOLOGIN" >/dev/null
	echo "$D"
	;;
start)
	need_dir "${1:-}"
	start "$1"
	;;
stop)
	need_dir "${1:-}"
	as_owner "$(bindir)/pg_ctl" -D "$1/data" -m fast -w -t 60 stop >/dev/null
	;;
destroy)
	[ -n "${1:-}" ] || usage
	if [ -f "$1/data/postmaster.pid" ]; then
		as_owner "$(bindir)/pg_ctl" -D "$1/data" -m immediate -w -t 60 stop >/dev/null 2>&1 || true
	fi
	case "$1" in
	*/xlpg.*) rm -rf "$1" ;;
	*) echo "pg.sh: not removing '$1' (not made by 'tools/pg.sh new')" >&2; exit 64 ;;
	esac
	;;
url)
	need_dir "${1:-}"
	echo "postgresql://xlaunch@/${2:-xlaunch}?host=$1&port=$PORT"
	;;
createdb | dropdb)
	need_dir "${1:-}"
	case "${2:-}" in '' | *[!A-Za-z0-9_]*) echo "pg.sh: '${2:-}': a database name is letters, digits and _" >&2; exit 64 ;; esac
	if [ "$cmd" = createdb ]; then sql="CREATE DATABASE \"$2\""; else sql="DROP DATABASE IF EXISTS \"$2\" WITH (FORCE)"; fi
	"$(bindir)/psql" -X -q -v ON_ERROR_STOP=1 -h "$1" -p $PORT -U xlaunch -d postgres -c "$sql"
	;;
psql)
	need_dir "${1:-}"
	D=$1
	shift
	"$(bindir)/psql" -X -q -v ON_ERROR_STOP=1 -h "$D" -p $PORT -U xlaunch -d xlaunch "$@"
	;;
*)
	usage
	;;
esac
