# calib_report.sh - `calib report` as a person sees it: a store filled by
# real launches of a small job (its memory grows with MICRO_BATCH, under an
# address-space limit) and a real probe; the page rendered by headless
# Chromium to a PNG (its size, colours and inked share checked) and to its
# DOM (the chart titles, the marks); one chart as SVG; an empty store; the
# --profile and --since filters; bad chart names and an unwritable -o.
. "$(dirname "$0")/lib.sh"
CHROME=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROME" ] || skip "chromium is not installed (tools/deps.sh installs Debian's chromium)"
export XLAUNCH_STORE="$T/calib.db" XLAUNCH_PROFILE_PATH="$T/profiles"
mkdir -p "$T/profiles" "$T/chrome"

# Renders $1 (a file) to $2.png and $2.dom with headless Chromium.
render() {
	"$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$T/chrome" --window-size=1200,2600 \
		--screenshot="$2.png" "file://$1" >"$T/chrome.log" 2>&1 ||
		{ cat "$T/chrome.log"; fail "chromium cannot screenshot $1"; }
	"$CHROME" --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome" \
		--dump-dom "file://$1" >"$2.dom" 2>"$T/chrome.log" ||
		{ cat "$T/chrome.log"; fail "chromium cannot dump the DOM of $1"; }
}

# an empty store: a page that says so
run "$XL" calib report -o "$T/empty.html"
expect_rc 0 "report of an empty store"
render "$T/empty.html" "$T/empty"
grep -q "Nothing recorded yet" "$T/empty.dom" || fail "the empty page does not say so"
ok "an empty store is a page that says nothing is recorded"
run "$XL" calib report --format svg --chart family-x
expect_rc 64 "an unknown chart of an empty store"
expect_err "no chart 'family-x'; the charts of this store are: probes" "the empty store's charts"

cat >"$T/profiles/grow.yaml" <<'YAML'
description: a job whose memory grows with MICRO_BATCH
env:
  MALLOC_ARENA_MAX: 1
limits:
  address_space: 1GiB
candidates:
  - {name: mb2048, env: {MICRO_BATCH: 2048}}
  - {name: mb1536, env: {MICRO_BATCH: 1536}}
  - {name: mb512, env: {MICRO_BATCH: 512}}
  - {name: mb256, env: {MICRO_BATCH: 256}}
  - {name: mb128, env: {MICRO_BATCH: 128}}
  - {name: mb64, env: {MICRO_BATCH: 64}}
YAML
cat >"$T/profiles/other.yaml" <<'YAML'
description: another profile of the same job
env:
  MICRO_BATCH: 32
YAML
cat >"$T/grow.py" <<'PY'
import os
buf = bytearray(int(os.environ["MICRO_BATCH"]) << 20)
for i in range(0, len(buf), 4096):
    buf[i] = 1
print("done", len(buf))
PY
JOB="python3 $T/grow.py"
run "$XL" probe --backend cpu --timeout $PROBE_LIMIT
expect_rc 0 "probe cpu"
for c in mb64 mb128 mb256; do
	# shellcheck disable=SC2086
	run "$XL" run -c $c grow -- $JOB
	expect_rc 0 "launch $c"
done
# learned now: mb1536 and mb2048 are predicted infeasible; one is launched anyway
# shellcheck disable=SC2086
run "$XL" run -c mb1536 --try-infeasible grow -- $JOB
expect_rc 1 "mb1536 launched under --try-infeasible runs out of memory"
run "$XL" calib history --outcome oom
expect_out "mb1536" "mb1536 ran out of memory"
# shellcheck disable=SC2086
run "$XL" run other -- $JOB
expect_rc 0 "launch of other"

run "$XL" calib report -o "$T/report.html"
expect_rc 0 "report"
[ -s "$T/out" ] && fail "the page goes to -o, not to standard output"
grep -q "<script" "$T/report.html" && fail "the page has a script"
grep -Eq "(src|href)=\"(https?:)?//" "$T/report.html" && fail "the page fetches something"
grep -q "prefers-color-scheme:dark" "$T/report.html" || fail "no dark colours"
ok "one self-contained page, light and dark"
render "$T/report.html" "$T/report"
set -- $(python3 "$SRC/tests/integration/png_stats.py" "$T/report.png")
[ "$1" -eq 1200 ] && [ "$2" -eq 2600 ] || fail "screenshot is $1 x $2"
[ "$3" -ge 200 ] || fail "the screenshot has only $3 colours: blank?"
python3 -c "import sys; sys.exit(not 0.05 <= float('$4') <= 0.9)" ||
	fail "the screenshot is $4 inked: blank or a wall of colour"
ok "the page renders ($1 x $2, $3 colours, $4 of it inked)"
for title in "Memory frontier per job family" "observed host_peak_vm against env MICRO_BATCH" \
	"Predicted against observed host_peak_vm" "Launches of grow: wall time by outcome" \
	"Launches of grow: compilations and persistent-cache hits" \
	"Launches of other: wall time by outcome" "Latest probe per host: measured memory bandwidth"; do
	grep -qF "$title" "$T/report.dom" || fail "no '$title' in the rendered page"
done
ok "the chart titles are in the rendered DOM"
python3 - "$T/report.dom" <<'PY' || fail "the marks of the family chart"
import re, sys
dom = open(sys.argv[1]).read()
fams = re.findall(r'<figure id="chart-family-.*?</figure>', dom, re.S)
assert len(fams) == 2, len(fams)   # grow's, and other's (another environment)
fam = [f for f in fams if re.search(r"<h3>Family \w+ of grow: ", f)][0]
assert fam.count('class="m-ok"') >= 3, "three ok launches"
assert 'class="m-oom"' in fam, "the oom"
inf = re.findall(r'class="m-inf"[^>]*><title>candidate (\w+): predicted infeasible', fam)
assert inf == ["mb2048"], inf
assert 'class="fit"' in fam and 'class="limit"' in fam and 'class="band"' in fam
assert "limits.address_space" in fam and "Learned curve (" in fam and "chosen " in fam
pvo = re.search(r'<figure id="chart-predicted-observed-host_peak_vm".*?</figure>', dom, re.S).group(0)
assert 'class="diag"' in pvo and 'class="m-oom"' in pvo and 'class="m-ok"' in pvo
assert "host_peak_vm" in pvo and "Observed from: the largest process" in pvo
PY
ok "the family chart marks ok, oom and predicted-infeasible, with the chosen curve, band and limit"

# one chart as SVG
run "$XL" calib report --format svg --chart predicted-observed-host_peak_vm -o "$T/pvo.svg"
expect_rc 0 "one chart as svg"
python3 - "$T/pvo.svg" <<'PY' || fail "the svg"
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg", root.tag
assert root.find(ns + "style") is not None
assert root.find(ns + "title").text == "Predicted against observed host_peak_vm"
assert any(e.get("class") == "diag" for e in root.iter(ns + "line"))
PY
render "$T/pvo.svg" "$T/pvo"
set -- $(python3 "$SRC/tests/integration/png_stats.py" "$T/pvo.png")
[ "$3" -ge 20 ] || fail "the svg renders with $3 colours"
ok "--format svg writes one standalone chart that renders"

run "$XL" calib report --format svg --chart timeline-nope
expect_rc 64 "an unknown chart"
expect_err "no chart 'timeline-nope'; the charts of this store are: family-" "the valid names"
for name in predicted-observed-host_peak_vm timeline-grow compiles-grow timeline-other \
	compiles-other probes; do
	expect_err "$name" "the chart $name is listed"
done
run "$XL" calib report --format svg
expect_rc 64 "svg without a chart"
expect_err "--format svg needs --chart NAME; the charts of this store are:" "svg needs a chart"
run "$XL" calib report --chart probes
expect_rc 64 "--chart without --format svg"
run "$XL" calib report --format pdf
expect_rc 64 "an unknown format"

# filters
run "$XL" calib report --profile other
expect_rc 0 "report of one profile"
expect_out 'id="chart-timeline-other"' "other's timeline"
grep -q 'chart-timeline-grow' "$T/out" && fail "--profile other shows grow"
expect_out "1 attempt of 1 profile" "one attempt"
run "$XL" calib report --since 2d
expect_rc 0 "--since 2d"
expect_out "5 attempts of 2 profiles" "every attempt is newer than two days"
run "$XL" calib report --since 2999-01-01T00:00:00Z
expect_rc 0 "--since the future"
expect_out "Nothing recorded yet" "nothing since then"
run "$XL" calib report --since yesterday
expect_rc 64 "a bad --since"
ok "--profile and --since filter the page"

# -o is atomic: a failed report leaves the file as it was, a bad place writes nothing
cp "$T/report.html" "$T/keep.html"
run "$XL" calib report --format svg --chart nope -o "$T/keep.html"
expect_rc 64 "bad chart into an existing file"
cmp -s "$T/report.html" "$T/keep.html" || fail "a failed report changed the file"
run "$XL" calib report -o "$T/no/such/dir/r.html"
expect_rc 73 "-o into a missing directory"
expect_err "'$T/no/such/dir/r.html': cannot write:" "the message names the file"
[ -z "$(ls "$T" | grep 'report.html.')" ] || fail "a temporary file was left behind"
ok "-o writes all or nothing"

# the same store on PostgreSQL (export, import) draws the same page
if "$SRC/tools/pg.sh" available 2>/dev/null; then
	pg_setup
	PGS=$(pg_store report)
	"$XL" calib export | "$XL" --store "$PGS" calib import - >/dev/null || fail "copy to PostgreSQL"
	# one instant for both stores: "--since 2d" is read against each
	# command's own clock, and the two may fall in different seconds
	since=$(date -u -d '2 days ago' +%Y-%m-%dT%H:%M:%SZ)
	for args in "" "--profile other" "--since $since" "--format svg --chart probes"; do
		# shellcheck disable=SC2086
		"$XL" calib report $args >"$T/sq.html" 2>"$T/sq.err" || fail "report $args on SQLite"
		# shellcheck disable=SC2086
		"$XL" --store "$PGS" calib report $args >"$T/pg.html" 2>"$T/pg.err" ||
			{ cat "$T/pg.err"; fail "report $args on PostgreSQL"; }
		# the pages name their store and the time; nothing else may differ
		sed "s|$XLAUNCH_STORE|STORE|g" "$T/sq.html" >"$T/sq.n"
		sed "s|$(echo "$PGS" | sed 's/[&|]/\\&/g')|STORE|g; s|postgresql://[^ <\"]*|STORE|g" "$T/pg.html" >"$T/pg.n"
		sed -i 's|postgresql://[^ <"]*|STORE|g' "$T/sq.n"
		# and when they were written
		sed -i 's|written [0-9T:.-]*Z|written TIME|' "$T/sq.n" "$T/pg.n"
		diff "$T/sq.n" "$T/pg.n" >"$T/pg.diff" || { head -20 "$T/pg.diff"; fail "report $args differs on PostgreSQL"; }
	done
	ok "PostgreSQL draws the same pages as SQLite"
else
	echo "note: no PostgreSQL server programs: the PostgreSQL half is left out"
fi
done_ok
