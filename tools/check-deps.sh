#!/bin/sh
# check-deps.sh - the module arrows, checked on every #include.
#   tools/check-deps.sh [ROOT]      (make check-deps; run by make test)
#
# launcher -> calib, probe, bundle -> common; bundle -> probe only in
# bundle/bundle.c, to read a PJRT plugin's API version and the CUDA driver
# version; probe -> kernels (the kernels it runs).  Across modules only the
# public header is included (common/common.h, calib/calib.h, probe/probe.h,
# bundle/bundle.h).  Some system headers belong to one place: <sqlite3.h>
# to the SQLite store backend (calib/sqlite.c), <libpq-fe.h> to the
# PostgreSQL one (calib/postgres.c); <getopt.h> to nobody (options are
# parsed from tables in common/cmd.c).
# Prints one line per include that points the wrong way and exits 1.
set -eu
ROOT=${1:-.}
cd "$ROOT"
for m in common calib probe bundle launcher; do
	[ -d "$m" ] || { echo "check-deps: no module '$m' under $ROOT" >&2; exit 2; }
done
find common calib probe bundle launcher kernels -name '*.[ch]' 2>/dev/null | sort |
awk '
BEGIN {
	# module -> modules it may include
	allow["common"] = " common "
	allow["calib"] = " calib common "
	allow["probe"] = " probe common kernels "
	allow["bundle"] = " bundle common "
	allow["launcher"] = " launcher calib probe bundle common "
	allow["kernels"] = " kernels "
	public["common"] = "common/common.h"
	public["calib"] = "calib/calib.h"
	public["probe"] = "probe/probe.h"
	public["bundle"] = "bundle/bundle.h"
	bad = 0
}
function complain(msg) {
	printf "check-deps: %s:%d: %s\n", file, line, msg
	bad++
}
{
	file = $0
	split(file, parts, "/")
	mod = parts[1]
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
				complain("includes <sqlite3.h>: SQL lives in calib/sqlite.c, behind calib/calib.h")
			else if (sys == "libpq-fe.h" && file != "calib/postgres.c")
				complain("includes <libpq-fe.h>: SQL lives in calib/postgres.c, behind calib/calib.h")
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
		to = ip[1]
		if (to == mod)
			continue
		if (to == "tests" || to == "tools") {
			complain("includes \"" inc "\": modules do not reach into " to "/")
			continue
		}
		if (mod == "bundle" && inc == "probe/probe.h") {
			if (file != "bundle/bundle.c")
				complain("includes \"probe/probe.h\": only bundle/bundle.c reads from the probe (a plugin'\''s API version)")
			continue
		}
		if (index(allow[mod], " " to " ") == 0) {
			complain("includes \"" inc "\": " mod " may not depend on " to " (launcher -> calib, probe, bundle -> common)")
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
}'
