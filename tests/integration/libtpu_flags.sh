# libtpu_flags.sh - `flags lint --var LIBTPU_INIT_ARGS` against the real
# libtpu of every known release (etc/flags/releases.yaml), on a host without
# a TPU: libtpu parses LIBTPU_INIT_ARGS when it starts, before it looks for
# a device, reports every name and value it refuses and exits.  For each
# release and each sample string, the names libtpu reports are exactly the
# names xlaunch refuses, and a string libtpu starts with has no error.
#
# The releases' wheels come from PyPI once, into build/libtpu-wheels (a
# cache kept between runs, about 150 MB a release); each libtpu.so is
# unpacked into this test's TMPDIR and removed with it.  Each release costs
# three libtpu starts, about 8 s in all.  The release the tpu venv
# has is judged as detected for its interpreter, the others with --release.
. "$(dirname "$0")/lib.sh"
venv=$(cd "$SRC" && tools/venv.sh tpu 2>"$T/venv.err") || {
	skip "$(grep '^SKIP' "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"
}
case "$venv" in /*) ;; *) venv="$SRC/$venv" ;; esac
[ -x "$venv/bin/python" ] || skip "no virtualenv at $venv"
py="$venv/bin/python"
have=$("$py" -c 'import importlib.metadata as m; print(m.version("libtpu"))') || fail "no libtpu in $venv"
releases=$(sed -n '/^  libtpu:/,$p' "$SRC/etc/flags/releases.yaml" | grep -v 'known: false' |
	sed -n 's/^ *- {version: \([^,]*\),.*/\1/p' || true)
[ -n "$releases" ] || fail "no libtpu releases in releases.yaml"
wheels="$SRC/build/libtpu-wheels"
mkdir -p "$wheels"

# a name only the newest release registers, and one it lacks that an
# older one has
newest=$(echo "$releases" | tail -1)
oldest=$(echo "$releases" | head -1)
new_only=$(awk -v r="releases: {libtpu: \"$newest\"}" \
	'/^  - name:/{n=$3} index($0, r) && n ~ /^xla_tpu_/ {print n; exit}' "$SRC/etc/flags/libtpu.yaml")
old_only=$(awk -v v="$newest" '/^  - name:/{n=$3}
	/^    releases: {libtpu: / && n ~ /^xla_tpu_/ {
		r = $0; sub(/.*libtpu: "/, "", r); sub(/".*/, "", r)
		k = split(r, p, /[- ]/); if (p[k] != v) {print n; exit} }' "$SRC/etc/flags/libtpu.yaml")
[ -n "$old_only" ] && [ -n "$new_only" ] || fail "no release-only names in libtpu.yaml"
float=internal_embedding_emitter_fraction_vmem_available

# the sample: XLA-only flags, typos, bad booleans, yes, sizes with units,
# libtpu's own reader forms, and names of one release only (libtpu splits
# at spaces only: the lines are joined)
MIXED="--xla_dump_to=$T/d --xla_gpu_enable_triton_gemm=false --xla_tpu_enable_flash_attention=maybe
--xla_tpu_data_parallel_opt_different_sized_ops=yes --xla_tpu_scoped_vmem_limit_kib=16GiB
--xla_tpu_rwb_fusion=Y --xla_tpu_enable_flash_atention=true -xla_tpu_overlap_compute_collective_tc=t
--noxla_tpu_enable_data_parallel_all_reduce_opt --noxla_jf_dump_to TPU_MEGACORE=MEGACORE_DENSE
--xla_jf_dump_to $T/jf --xla_tpu_enable_windowed_einsum_for_all_reduce=true
--xla_tpu_enable_async_collective_fusion=on --$float=0.5x --$old_only=1 --$new_only=1
--xla_latency_hiding_scheduler_rerun=0x2 --xla_tpu_enable_flash_attention=FALSE"
MIXED=$(echo "$MIXED" | tr '\n' ' ')
GOOD="--xla_tpu_data_parallel_opt_different_sized_ops=yes --xla_tpu_rwb_fusion=n
-xla_tpu_overlap_compute_collective_tc=t --noxla_tpu_enable_data_parallel_all_reduce_opt
--xla_jf_dump_to $T/jf2 --$float=0.25 --xla_latency_hiding_scheduler_rerun=3 stray-word"
GOOD=$(echo "$GOOD" | tr '\n' ' ')
SENTINEL=--xlaunch_test_no_such_flag=1

# libtpu's own answer: the names it reports, one a line, sorted (a flag
# without its value is reported twice: missing, then illegal '')
libtpu_says() {  # libtpu_says SO STRING
	TPU_LIBRARY_PATH="$1" LIBTPU_INIT_ARGS="$2" "$py" -c '
from jax.experimental import topologies
try:
    topologies.get_topology_desc(platform="tpu", topology_name="v5e:2x2")
except Exception as e:
    print("EXC", e)
' >"$T/tpu.out" 2>"$T/tpu.err" || true
	if grep -q "libtpu multi-process lockfile" "$T/tpu.out" "$T/tpu.err"; then
		fail "another libtpu held /tmp/libtpu_lockfile"
	fi
	sed -n "s/^ERROR: Unknown command line flag '\([^']*\)'.*/\1/p
s/^ERROR: Illegal value '[^']*' specified for \([a-z0-9]* \)\{0,1\}flag '\([^']*\)'.*/\2/p
s/^ERROR: Failed validation of new value '[^']*' for flag '\([^']*\)'.*/\1/p
s/^ERROR: Negative form is not valid for the flag '\([^']*\)'.*/\1/p
s/^ERROR: Negative form with assignment is not valid for the boolean flag '\([^']*\)'.*/\1/p
s/^ERROR: Missing the value for the flag '\([^']*\)'.*/\1/p" "$T/tpu.err" | sort -u
}

# xlaunch's verdict: the names of its errors, one a line, sorted
xlaunch_says() {  # xlaunch_says JUDGE-ARGS... -- STRING
	args=""
	while [ "$1" != "--" ]; do args="$args $1"; shift; done
	shift
	# shellcheck disable=SC2086
	"$XL" flags lint --json --var LIBTPU_INIT_ARGS $args "$1" >"$T/lint.json" 2>"$T/lint.err" || true
	python3 - "$T/lint.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
names = []
for r in d["reports"]:
    if r["severity"] != "error":
        continue
    t = r["token"].lstrip("-").split("=", 1)[0]
    if "negative form" in r["message"] or "takes no value" in r["message"]:
        t = t[2:]
    names.append(t)
print("\n".join(sorted(set(names))))
PY
}

compare() {  # compare WHAT: libtpu's names ($T/a) against xlaunch's ($T/b)
	if ! diff "$T/a" "$T/b" >"$T/diff"; then
		cat "$T/tpu.err" | grep '^ERROR' || true
		cat "$T/lint.json"
		fail "$1: libtpu (<) and xlaunch (>) differ: $(tr '\n' ' ' <"$T/diff")"
	fi
	ok "$1: the same $(wc -l <"$T/a") names"
}

libtpu_lock
checked=0
valued=0
for v in $releases; do
	if [ "$v" = "$have" ]; then
		so=$(ls "$venv"/lib/python3*/site-packages/libtpu/libtpu.so | head -1)
		judge="--python $py"
	else
		ls "$wheels"/libtpu-"$v"-*.whl >/dev/null 2>&1 ||
			"$py" -m pip download -q --no-deps --only-binary :all: "libtpu==$v" -d "$wheels" \
				>"$T/pip.out" 2>&1 ||
			skip "libtpu $v: no wheel and none could be downloaded ($(tail -1 "$T/pip.out"))"
		mkdir -p "$T/so-$v"
		(cd "$T/so-$v" && python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("libtpu/libtpu.so")' \
			"$(ls "$wheels"/libtpu-"$v"-*.whl | head -1)") || fail "cannot unpack libtpu $v"
		so="$T/so-$v/libtpu/libtpu.so"
		judge="--release libtpu==$v"
	fi
	# shellcheck disable=SC2086
	for s in "$MIXED $SENTINEL" "$GOOD $SENTINEL" "--xla_tpu_rwb_fusion=true --xla_tpu_scoped_vmem_limit_kib"; do
		libtpu_says "$so" "$s" >"$T/a"
		xlaunch_says $judge -- "$s" >"$T/b"
		[ -s "$T/a" ] || fail "libtpu $v reported nothing: its parser did not run ($(tail -3 "$T/tpu.err"))"
		compare "libtpu $v, '$(echo "$s" | cut -c1-40)...'"
		[ "$s" != "$GOOD $SENTINEL" ] || cp "$T/a" "$T/good"
	done
	# values of libtpu's own types: a sample of the names of each type the
	# release's parser taught (libtpu_values.py), each with a value of the
	# shapes the generator asks about, two rounds a release, the rounds
	# moving on from release to release
	for r in 0 1; do
		s=$(python3 "$SRC/tests/integration/libtpu_values.py" "$SRC" "$v" $((checked * 2 + r))) ||
			fail "libtpu_values.py $v"
		[ -n "$s" ] || break
		libtpu_says "$so" "$s $SENTINEL" >"$T/a"
		xlaunch_says $judge -- "$s $SENTINEL" >"$T/b"
		compare "libtpu $v, values of its own types, round $r ($(echo "$s" | wc -w) names)"
		valued=$((valued + 1))
	done
	# the string libtpu starts with: its only error is the sentinel's
	[ "$(cat "$T/good")" = "xlaunch_test_no_such_flag" ] || fail "libtpu $v refuses the good string: $(cat "$T/good")"
	ok "libtpu $v starts with the good string"
	rm -rf "$T/so-$v"
	checked=$((checked + 1))
done
[ "$checked" -eq "$(echo "$releases" | wc -l)" ] || fail "only $checked libtpu releases checked"
ok "$checked libtpu releases checked"
[ "$valued" -gt 0 ] || fail "no release's value types were checked: libtpu.yaml has no learned reader"
ok "$valued rounds of values of libtpu's own types agree"

# the XLA flag's refusal says where it belongs and libtpu's own name
run "$XL" flags lint --var LIBTPU_INIT_ARGS --python "$py" -- "--xla_dump_to=$T/d"
expect_out "XLA_FLAGS" "an XLA flag names XLA_FLAGS"
expect_out "xla_jf_dump_to" "and libtpu's own dump flag"
expect_out "libtpu $have" "and the release the job loads"
# TPU_LIBRARY_PATH names the libtpu the job loads, whatever the
# interpreter has: the version of the wheel beside it, else none xlaunch
# can place (warnings)
mkdir -p "$T/site/libtpu" "$T/site/libtpu-0.0.21.dist-info"
: >"$T/site/libtpu/libtpu.so"
TPU_LIBRARY_PATH="$T/site/libtpu/libtpu.so" run "$XL" flags lint --var LIBTPU_INIT_ARGS --python "$py" -- "--$new_only=1"
expect_rc 65 "TPU_LIBRARY_PATH's libtpu 0.0.21 lacks a name of 0.0.52 only"
expect_out "libtpu 0.0.21" "and is named"
TPU_LIBRARY_PATH="$T/elsewhere/libtpu.so" run "$XL" flags lint --var LIBTPU_INIT_ARGS --python "$py" -- "--$new_only=1 --xla_bogus_name=1"
expect_rc 0 "a libtpu of unknown release refuses nothing"
expect_out "TPU_LIBRARY_PATH=$T/elsewhere/libtpu.so" "and says which file"
# a libtpu newer than the knowledge: warnings that name it, no refusal
run "$XL" flags lint --var LIBTPU_INIT_ARGS --release libtpu==9.9.9 -- "--xla_tpu_private_knob=1 --xla_dump_to=$T/d"
expect_out "libtpu 9.9.9" "a newer libtpu is named"
expect_out "0 errors" "and refuses nothing"
# profiles: --explain names the libtpu judged, the check refuses what it
# exits on
mkdir -p "$T/profiles"
printf 'flags:\n  LIBTPU_INIT_ARGS:\n    xla_tpu_rwb_fusion: "yes"\n' >"$T/profiles/tpuok.yaml"
printf 'flags:\n  LIBTPU_INIT_ARGS:\n    xla_dump_to: /tmp/d\n' >"$T/profiles/tpubad.yaml"
XLAUNCH_PROFILE_PATH="$T/profiles" VIRTUAL_ENV="$venv" run "$XL" profile show tpuok --explain
expect_rc 0 "a profile with libtpu's yes"
expect_out "LIBTPU_INIT_ARGS             libtpu $have (installed for" "--explain names the libtpu judged"
XLAUNCH_PROFILE_PATH="$T/profiles" VIRTUAL_ENV="$venv" run "$XL" profile check tpubad
expect_rc 65 "a profile with an XLA flag in LIBTPU_INIT_ARGS is refused"
expect_err "it belongs in XLA_FLAGS" "saying where it belongs"
done_ok
