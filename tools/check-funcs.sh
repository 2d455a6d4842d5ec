#!/bin/sh
# check-funcs.sh - no function longer than MAX_FUNC_LINES (default 150)
# lines, from the brace that opens its body to the one that closes it.
#   tools/check-funcs.sh DIR...     (run by tools/check-deps.sh)
# Functions are written in the kernel's style here: the opening and the
# closing brace of a body stand alone at the start of a line; a body opened
# at the end of its signature's line (`int f(void) {`) is counted too.  Prints one
# line per function that is too long, longest first, and exits 1 when
# there is any.
set -eu
MAX=${MAX_FUNC_LINES:-150}
dirs=""
for d in "$@"; do
	[ -d "$d" ] && dirs="$dirs $d"
done
[ -n "$dirs" ] || exit 0
# shellcheck disable=SC2086
find $dirs -name '*.c' | sort | xargs awk -v max="$MAX" '
FNR == 1 { name = ""; start = 0 }
/^[A-Za-z_].*\(/ && !/;[ \t]*$/ {
	sig = $0
	sub(/\(.*/, "", sig)
	n = split(sig, w, /[ \t*]+/)
	name = w[n]
}
/^\{/ { start = FNR }
/^[A-Za-z_].*\)[ \t]*\{[ \t]*$/ { start = FNR }
/^\}/ && start {
	len = FNR - start + 1
	if (len > max) {
		printf "%d\tcheck-funcs: %s:%d: %s() is %d lines long (at most %d: cut it into steps that say what they do)\n", len, FILENAME, start, name, len, max
		bad++
	}
	start = 0
}
END { exit bad ? 1 : 0 }
' | sort -rn | cut -f2- | { out=$(cat); [ -z "$out" ] || { echo "$out"; n=$(echo "$out" | wc -l); echo "check-funcs: $n function$([ "$n" -eq 1 ] || echo s) longer than $MAX lines"; exit 1; }; }
