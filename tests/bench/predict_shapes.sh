# predict_shapes.sh - the learned curve of a base commit (BASE, ad9f4da by
# default: the curves chosen as the largest "for safety") and of this tree,
# on the same synthetic families and draws (tests/bench/predict_shapes.c
# says which), side by side as a markdown table with the ratio AFTER/BEFORE.
# Needs git and a C compiler; a few seconds.  The argument (make bench's
# binary) is not used: the curves are compiled in.
#   sh tests/bench/predict_shapes.sh            (PREDICT_BASE=COMMIT another base)
set -eu
SRC=$(pwd)
BASE=${PREDICT_BASE:-ad9f4da}
if ! git -C "$SRC" cat-file -e "$BASE:calib/curve.c" 2>/dev/null; then
	echo "predict_shapes: skipped, commit $BASE is not in this clone (a shallow one?)"
	exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/xlbench.XXXXXX"); trap 'rm -rf "$T"' EXIT
CC=${CC:-cc}
CFLAGS="-O2 -std=c11 -D_GNU_SOURCE -I/usr/include/postgresql"
mkdir -p "$T/before/calib"
git -C "$SRC" show "$BASE:calib/curve.c" >"$T/before/calib/curve.c"
git -C "$SRC" show "$BASE:calib/calib.h" >"$T/before/calib/calib.h"
$CC $CFLAGS -DBEFORE -I"$T/before" -I"$SRC" -o "$T/before.bin" "$SRC/tests/bench/predict_shapes.c" \
	"$T/before/calib/curve.c" "$SRC/common/alloc.c" "$SRC/common/str.c" "$SRC/common/buf.c" -ljansson -lm
$CC $CFLAGS -I"$SRC" -o "$T/after.bin" "$SRC/tests/bench/predict_shapes.c" \
	"$SRC/calib/curve.c" "$SRC/common/alloc.c" "$SRC/common/str.c" "$SRC/common/buf.c" -ljansson -lm
"$T/before.bin" >"$T/before.txt"
"$T/after.bin" >"$T/after.txt"
echo "BEFORE = $BASE ($(git -C "$SRC" log -1 --format=%h "$BASE")), AFTER = this tree ($(git -C "$SRC" log -1 --format=%h HEAD)$(git -C "$SRC" diff --quiet HEAD -- calib/curve.c calib/calib.h || echo ', modified'))"
echo
echo "| family | figure | before | after | after/before |"
echo "|---|---|---:|---:|---:|"
paste -d' ' "$T/before.txt" "$T/after.txt" | awk '
	$1 != $4 || $2 != $5 { print "mismatch: " $0 > "/dev/stderr"; exit 1 }
	{
		r = ($3 == 0) ? ($6 == 0 ? "1" : "-") : sprintf("%.2f", $6 / $3)
		if ($2 ~ /^err/ || $2 == "under" || $2 == "inside")
			printf "| %s | %s | %.1f%% | %.1f%% | %s |\n", $1, $2, 100 * $3, 100 * $6, r
		else
			printf "| %s | %s | %g | %g | %s |\n", $1, $2, $3, $6, r
	}'
