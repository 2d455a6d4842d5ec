#!/bin/sh
# check-deps.sh - the arrows between modules and rooms, checked on every
# #include, and the length of every function.
#   tools/check-deps.sh [ROOT]      (make check-deps; run by make test)
#
# Modules and rooms, and what each may include:
#   launcher (the commands: launcher/main.c, launcher/cmd-*.c)
#                     -> every room and module
#   launcher/run      -> plan, watch, profile, flags, calib, probe, bundle, common
#   launcher/plan     -> profile, flags, calib, probe, bundle, common (the
#                     candidates, the job's limits and figures; used by run
#                     and by the calib commands)
#   launcher/watch    -> common (the compile watch: XLA's dump, Inductor's
#                     cache, the runtimes' lines and the job's report file)
#   launcher/profile  -> flags, calib, probe, bundle, common
#   launcher/flags    -> calib, probe, bundle, common
#   launcher/report   -> calib, common (it reads the store only)
#   calib, probe, bundle -> common; bundle -> probe only in bundle/bundle.c,
#                     to read a PJRT plugin's API version and the CUDA
#                     driver version; probe -> kernels (what it runs)
# Across modules and rooms only the front door is included:
# common/common.h, calib/calib.h, probe/probe.h, bundle/bundle.h,
# launcher/flags/flags.h, launcher/profile/profile.h, launcher/plan/plan.h,
# launcher/run/run.h, launcher/watch/watch.h, launcher/report/report.h;
# every other header is its folder's back room.
# launcher/cmd-calib.c plans with the plan room and includes nothing of the
# run room (cmd-calib-store.c opens the store with the run room's sweep).
# The watch's unit tests (tests/unit/test_watch_*.c) include only
# launcher/watch/, common/ and the tests' own helpers.
# Nothing includes a command.  Some system headers belong to one place:
# <sqlite3.h> to the SQLite store backend (calib/sqlite.c), <libpq-fe.h> to
# the PostgreSQL one (calib/postgres.c); <getopt.h> to nobody (options are
# parsed from tables in common/cmd.c).  The store's drivers (calib/sqlite.c,
# calib/postgres.c) include calib/driver.h alone of calib's headers: the
# driver contract, not the store's internals (calib/store.h).
#
# Functions: none longer than MAX_FUNC_LINES (150) lines, from its opening
# brace to its closing one, in the modules and in tools/ (the kernel's
# "one or two screenfuls"); tools/check-funcs.sh counts them.
#
# Files: no two files of one folder call each other (tools/check-circles.sh).
#
# Prints one line per include that points the wrong way, per function that
# is too long and per pair of files that call each other, and exits 1 when
# there is any.
set -eu
ROOT=${1:-.}
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$ROOT"
for m in common calib probe bundle launcher launcher/flags launcher/profile launcher/plan \
	launcher/run launcher/watch launcher/report; do
	[ -d "$m" ] || { echo "check-deps: no module '$m' under $ROOT" >&2; exit 2; }
done
status=0
find common calib probe bundle launcher kernels -name '*.[ch]' 2>/dev/null | sort |
awk '
BEGIN {
	allow["common"] = " common "
	allow["calib"] = " calib common "
	allow["probe"] = " probe common kernels "
	allow["bundle"] = " bundle common "
	allow["launcher/flags"] = " launcher/flags calib probe bundle common "
	allow["launcher/profile"] = " launcher/profile launcher/flags calib probe bundle common "
	allow["launcher/plan"] = " launcher/plan launcher/profile launcher/flags calib probe bundle common "
	allow["launcher/run"] = " launcher/run launcher/plan launcher/watch launcher/profile launcher/flags calib probe bundle common "
	allow["launcher/watch"] = " launcher/watch common "
	allow["launcher/report"] = " launcher/report calib common "
	allow["launcher"] = " launcher launcher/run launcher/plan launcher/watch launcher/profile launcher/flags launcher/report calib probe bundle common "
	allow["kernels"] = " kernels "
	public["common"] = "common/common.h"
	public["calib"] = "calib/calib.h"
	public["probe"] = "probe/probe.h"
	public["bundle"] = "bundle/bundle.h"
	public["launcher/flags"] = "launcher/flags/flags.h"
	public["launcher/profile"] = "launcher/profile/profile.h"
	public["launcher/plan"] = "launcher/plan/plan.h"
	public["launcher/run"] = "launcher/run/run.h"
	public["launcher/watch"] = "launcher/watch/watch.h"
	public["launcher/report"] = "launcher/report/report.h"
	arrows = "commands -> run -> plan -> profile -> flags -> calib, probe, bundle -> common; run -> watch -> common; report -> calib"
	bad = 0
}
function complain(msg) {
	printf "check-deps: %s:%d: %s\n", file, line, msg
	bad++
}
# The module or room a path belongs to.
function owner(path,    p, n) {
	n = split(path, p, "/")
	if (p[1] == "launcher" && n > 2 && ("launcher/" p[2]) in allow)
		return "launcher/" p[2]
	return p[1]
}
{
	file = $0
	mod = owner(file)
	dir = file
	sub(/\/[^\/]*$/, "", dir)
	line = 0
	while ((getline text < file) > 0) {
		line++
		if (text !~ /^[ \t]*#[ \t]*include[ \t]*[<"]/)
			continue
		if (match(text, /<[^>]*>/)) {
			sys = substr(text, RSTART + 1, RLENGTH - 2)
			if (sys == "sqlite3.h" && file != "calib/sqlite.c")
				complain("includes <sqlite3.h>: the SQLite driver is calib/sqlite.c, behind calib/calib.h")
			else if (sys == "libpq-fe.h" && file != "calib/postgres.c")
				complain("includes <libpq-fe.h>: the PostgreSQL driver is calib/postgres.c, behind calib/calib.h")
			else if (sys == "getopt.h")
				complain("includes <getopt.h>: options are declared as tables (common/cmd.c)")
			else if (sys == "cmocka.h")
				complain("includes <cmocka.h>: tests live in tests/")
			continue
		}
		if (!match(text, /"[^"]*"/))
			continue
		inc = substr(text, RSTART + 1, RLENGTH - 2)
		if (inc !~ /\//)
			inc = dir "/" inc
		split(inc, ip, "/")
		if (ip[1] == "tests" || ip[1] == "tools") {
			complain("includes \"" inc "\": modules do not reach into " ip[1] "/")
			continue
		}
		to = owner(inc)
		if ((file == "calib/sqlite.c" || file == "calib/postgres.c") && ip[1] == "calib" &&
		    inc != "calib/driver.h") {
			complain("includes \"" inc "\": a store driver includes calib/driver.h only (the driver contract)")
			continue
		}
		if (to == "launcher") {
			if (inc ~ /\.c$/ || mod != "launcher" || inc ~ /^launcher\/[^\/]*$/)
				complain("includes \"" inc "\": nothing includes a command")
			continue
		}
		if (to == mod)
			continue
		if (mod == "bundle" && inc == "probe/probe.h") {
			if (file != "bundle/bundle.c")
				complain("includes \"probe/probe.h\": only bundle/bundle.c reads from the probe (a plugin'\''s API version)")
			continue
		}
		if (file == "launcher/cmd-calib.c" && to == "launcher/run") {
			complain("includes \"" inc "\": the calib commands plan with launcher/plan/plan.h, not the run room (the store is opened in cmd-calib-store.c)")
			continue
		}
		if (index(allow[mod], " " to " ") == 0) {
			complain("includes \"" inc "\": " mod " may not depend on " to " (" arrows ")")
			continue
		}
		if ((to in public) && inc != public[to])
			complain("includes \"" inc "\", private to " to "/ (use " public[to] ")")
	}
	close(file)
}
END {
	if (bad) {
		printf "check-deps: %d include%s point%s the wrong way\n", bad, bad == 1 ? "" : "s", bad == 1 ? "s" : ""
		exit 1
	}
}' || status=1
# The watch's own unit tests build on the watch and common/ alone.
for f in tests/unit/test_watch_*.c; do
	[ -f "$f" ] || continue
	awk -v file="$f" '
	/^[ \t]*#[ \t]*include[ \t]*"/ {
		inc = $0
		sub(/^[^"]*"/, "", inc)
		sub(/".*$/, "", inc)
		if (inc !~ /^(launcher\/watch\/|common\/|tests\/unit\/unit\.h$|tests\/fuzz\/targets\.h$)/) {
			printf "check-deps: %s:%d: includes \"%s\": the watch'"'"'s unit tests build on launcher/watch/ and common/ alone\n", file, FNR, inc
			bad++
		}
	}
	END { exit bad ? 1 : 0 }' "$f" || status=1
done
"$HERE/check-funcs.sh" common calib probe bundle launcher tools || status=1
"$HERE/check-circles.sh" common calib probe bundle launcher launcher/flags launcher/profile \
	launcher/plan launcher/run launcher/watch launcher/report || status=1
exit $status
