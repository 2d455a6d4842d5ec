#!/bin/sh
# flags_releases: the flag knowledge (etc/flags/*.yaml over the releases of
# etc/flags/releases.yaml) against the real runtimes of several releases.
#
# jaxlib: each release's own XLA, in a venv of that release from PyPI
# (tools/venv.sh jaxlib V, cached under build/; 0.10.2 is .venv), is
# offered every XLA flag name of the knowledge (all releases: this one's
# neighbours too) and every xla_* word of its shared objects; what its
# unknown-flag abort lists is compared with what the knowledge says that
# release registers, and with what `xlaunch flags lint --python
# VENV/bin/python` refuses (tests/flags_releases_ref.py): for a release the
# knowledge covers they agree on every name (a release known by what its
# wheel registers, releases.yaml `observed`, too: its file is checked against
# its XLA again); for a newer one lint refuses nothing its XLA takes.  Releases from 0.11 need
# Python 3.12 (skipped, with the reason, where there is none); at least four
# releases must run.
# torch_xla: each release's wheel (downloaded without dependencies, cached
# under build/wheels/) must hold every variable the knowledge says that
# release reads (its Python sources, or the strings of its _XLAC library)
# and every XLA flag the knowledge says its XLA registers (_XLAC's strings);
# and every variable the wheel's Python reads (the catalog generator's own
# reader, run on the wheel's files) must be one the knowledge says it reads.
#
# First run: about 3 GB from PyPI (eight jaxlib venvs, five torch_xla
# wheels; see tests/bench/RESULTS.md for the time it took); then a few
# minutes.  JAXLIB_RELEASES / TORCH_XLA_RELEASES override the lists.
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"
# the sanitizer pass of CI: what it would add is run there by other tests
case "$XL" in */build/san/*) skip "under the sanitizer build: its time goes to nine real XLA releases; the C it drives (flags lint) runs under the sanitizers in flags_release_run, release_detect and fuzz_lint" ;; esac

JAXLIB_RELEASES=${JAXLIB_RELEASES:-0.4.30 0.6.2 0.8.1 0.10.2 0.11.0 0.11.1 0.11.2 0.12.0 0.12.0.1}
TORCH_XLA_RELEASES=${TORCH_XLA_RELEASES:-2.5.0 2.6.0 2.7.0 2.8.0 2.9.0}

ran=0
skipped=""
: >"$T/table"
for v in $JAXLIB_RELEASES; do
	if [ "$v" = 0.10.2 ]; then
		venv=$(cd "$SRC" && tools/venv.sh demo 2>"$T/venv.err") || venv=
	else
		venv=$(cd "$SRC" && tools/venv.sh jaxlib "$v" 2>"$T/venv.err") || venv=
	fi
	if [ -z "$venv" ]; then
		why=$(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')
		[ -n "$why" ] || { cat "$T/venv.err"; fail "jaxlib $v: tools/venv.sh failed"; }
		echo "jaxlib $v skipped: $why"
		skipped="$skipped $v"
		continue
	fi
	case "$venv" in /*) ;; *) venv="$SRC/$venv" ;; esac
	run "$venv/bin/python" "$SRC/tests/flags_releases_ref.py" --src "$SRC" --xlaunch "$XL" \
		--json "$T/$v.json"
	cat "$T/out"
	[ "$rc" -eq 0 ] || { cat "$T/err" | tail -20; fail "jaxlib $v: the knowledge and its XLA disagree"; }
	ok "jaxlib $v agrees"
	"$venv/bin/python" - "$T/$v.json" >>"$T/table" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
l = d["lint"]
print("| %s%s | %d | %d | %d | %d of %d | %d | %d of %d | %d | %d | %d |" % (
    d["release"], (" (observed)" if d.get("observed") else "") if d["covered"]
    else " (newer: judged as %s)" % d["judged_as"],
    d["offered"], d["xla_registers"], d["knowledge_registers"], d["agree"], d["knowledge"],
    len(d["outside"]), l["agree"], l["names"], len(l["false_refusals"]),
    len(l["misses"]) - len(l["silent"]), len(l["silent"])))
EOF
	ran=$((ran + 1))
done
if [ "$ran" -eq 0 ]; then
	skip "no jaxlib release could be installed (is PyPI reachable?):$skipped"
fi
[ "$ran" -ge 4 ] || fail "only $ran jaxlib releases ran (skipped:$skipped); at least four must"
echo "| jaxlib | names offered | XLA registers | knowledge says | knowledge agrees | registered, not in the knowledge | lint --python agrees | lint refuses, XLA takes | XLA aborts, lint warns | XLA aborts, lint silent |"
cat "$T/table"

# libtpu: the names etc/flags/libtpu.yaml says the libtpu of jax[tpu] 0.10.2
# (tools/venv.sh tpu) registers are words of its libtpu.so, where the
# generator found them (a few are kept only inside a longer word, or were
# named by the parser's own suggestions: at most 1%).  Their verdicts are
# checked against libtpu itself by libtpu_flags.sh.
tpu=$(cd "$SRC" && tools/venv.sh tpu 2>"$T/venv.err") || tpu=
if [ -n "$tpu" ]; then
	case "$tpu" in /*) ;; *) tpu="$SRC/$tpu" ;; esac
	so=$(ls "$tpu"/lib/python3*/site-packages/libtpu/libtpu.so 2>/dev/null | head -1)
	[ -n "$so" ] || fail "no libtpu.so in $tpu"
	have=$("$tpu/bin/python" -c 'import importlib.metadata as m; print(m.version("libtpu"))')
	cat >"$T/tpu.py" <<'PY'
import re, sys
sys.path.insert(0, sys.argv[4] + "/tools")
import flagrel
words = set(re.findall(rb"[A-Za-z0-9_]+", open(sys.argv[1], "rb").read()))
axis = [r["version"] for r in flagrel.load_releases(sys.argv[4] + "/etc/flags/releases.yaml")["libtpu"]["releases"]]
names = []
for m in re.finditer(r"  - name: (\w+)\n(?:    (?!releases).*\n)*    releases: \{libtpu: \"([^\"]*)\"\}",
                     open(sys.argv[2]).read()):
    for r in m.group(2).split():
        lo, _, hi = r.partition("-")
        if axis.index(lo) <= axis.index(sys.argv[3]) <= axis.index(hi or lo):
            names.append(m.group(1))
missing = [n for n in names if n.encode() not in words]
print("libtpu %s: %d of the %d names the knowledge gives it are words of %s%s" % (
    sys.argv[3], len(names) - len(missing), len(names), sys.argv[1].split("/site-packages/")[-1],
    "; not: " + " ".join(missing) if missing else ""))
sys.exit(0 if names and len(missing) * 100 <= len(names) else 1)
PY
	run "$tpu/bin/python" "$T/tpu.py" "$so" "$SRC/etc/flags/libtpu.yaml" "$have" "$SRC"
	cat "$T/out"
	expect_rc 0 "libtpu's names are in its shared object"
else
	echo "libtpu skipped: $(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"
fi

# torch_xla: the wheels, without their dependencies
pip_venv=$(cd "$SRC" && tools/venv.sh demo 2>"$T/venv.err") || skip "no venv with pip for the torch_xla wheels"
case "$pip_venv" in /*) ;; *) pip_venv="$SRC/$pip_venv" ;; esac
wheels="$SRC/build/wheels"
mkdir -p "$wheels"
for v in $TORCH_XLA_RELEASES; do
	whl=$(ls "$wheels"/torch_xla-"$v"-*.whl 2>/dev/null | head -1)
	if [ -z "$whl" ]; then
		"$pip_venv/bin/python" -m pip download -q --disable-pip-version-check --no-deps \
			--only-binary=:all: --python-version 3.11 --platform manylinux_2_28_x86_64 \
			-d "$wheels" "torch_xla==$v" >"$T/pip.out" 2>&1 ||
			{ cat "$T/pip.out"; skip "pip could not download torch_xla $v (is PyPI reachable?)"; }
		whl=$(ls "$wheels"/torch_xla-"$v"-*.whl 2>/dev/null | head -1)
	fi
	[ -n "$whl" ] || fail "torch_xla $v: no wheel after the download"
	run "$pip_venv/bin/python" "$SRC/tests/torch_xla_wheel_ref.py" --src "$SRC" "$whl"
	cat "$T/out"
	[ "$rc" -eq 0 ] || { tail -20 "$T/err"; fail "torch_xla $v: the knowledge and the wheel disagree"; }
	ok "torch_xla $v agrees"
done
done_ok
