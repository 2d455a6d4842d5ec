#!/bin/sh
# check-circles.sh - no two files of one folder call each other: where two
# need each other, the piece they share moves down into a file of its own.
#   tools/check-circles.sh DIR...     (run by tools/check-deps.sh)
# A function is defined where its name and "(" begin a line at column 0
# (kernel style) and the line does not end with ";"; it is used where its
# name is followed by "(".  Static functions share a name across files
# only by accident, so only the xl_ and calib_ names count.  Prints one
# line per pair and exits 1 when there is any.
set -eu
dirs=""
for d in "$@"; do
	[ -d "$d" ] && dirs="$dirs $d"
done
[ -n "$dirs" ] || exit 0
# shellcheck disable=SC2086
find $dirs -maxdepth 1 -name '*.c' | sort | xargs awk '
function folder(f) { sub(/\/[^\/]*$/, "", f); return f }
# the first name( of a line that begins at column 0 and does not end in ";"
/^[A-Za-z_]/ && !/;[ \t]*$/ {
	line = " " $0
	if (match(line, /[^A-Za-z0-9_](xl|calib)_[a-z0-9_]+\(/))
		def[substr(line, RSTART + 1, RLENGTH - 2)] = FILENAME
}
{
	line = " " $0
	while (match(line, /[^A-Za-z0-9_](xl|calib)_[a-z0-9_]+\(/)) {
		use[FILENAME, substr(line, RSTART + 1, RLENGTH - 2)] = 1
		line = substr(line, RSTART + RLENGTH)
	}
}
END {
	for (k in use) {
		split(k, p, SUBSEP)
		f = p[1]; g = def[p[2]]
		if (g != "" && g != f && folder(g) == folder(f))
			calls[f, g] = p[2]
	}
	bad = 0
	for (k in calls) {
		split(k, p, SUBSEP)
		if (p[1] < p[2] && ((p[2], p[1]) in calls)) {
			printf "check-circles: %s and %s call each other (%s, %s): move what they share into a file below both\n", p[1], p[2], calls[p[1], p[2]], calls[p[2], p[1]]
			bad++
		}
	}
	exit bad ? 1 : 0
}' || exit 1
