# fuzz_smoke.sh - every libFuzzer harness over its seed corpus plus a few
# thousand new inputs (the long runs are `make fuzz FUZZ_SECONDS=N`).
. "$(dirname "$0")/lib.sh"
# the sanitizer pass of CI: what it would add is run there by other tests
case "$XL" in */build/san/*) skip "under the sanitizer build: the harnesses are built with ASan and UBSan in every pass (build/fuzz): the release pass runs them" ;; esac
cd "$SRC"
command -v clang >/dev/null || skip "clang is not installed (tools/deps.sh installs it)"
make -s fuzz-build >"$T/build.log" 2>&1 || { tail -30 "$T/build.log"; fail "fuzz harnesses do not build"; }
names=$(ls tests/fuzz/fuzz_*.c | sed 's|tests/fuzz/fuzz_||; s|\.c$||')
tools/fuzz.sh smoke 0 $names || fail "a fuzz harness found a crash (see build/fuzz/)"
for n in $names; do ok "fuzz $n"; done
done_ok
