#!/bin/sh
# flags lint against XLA's own reader: the cases XLA's parser decides in
# ways that look surprising, flags files read with their file and line,
# and a differential test against the real XLA inside jaxlib (.venv).
# make test generates 600 values (about 35 s, most of it the catalog
# coverage count, one child per xla_* name); XLA_CASES=N runs more.  The
# large run's figures are in tests/bench/RESULTS.md ("Differential tests").
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"

verdict() {  # verdict VALUE EXPECTED description (judged as the model's release)
	run "$XL" flags lint --json --release jaxlib==0.10.2 --var XLA_FLAGS -- "$1"
	grep -qF "\"verdict\": \"$2\"" "$T/out" || { cat "$T/out"; fail "$3: verdict is not $2"; }
	ok "$3"
}
# booleans: true/false in any case, 1 and 0; nothing else
verdict "--xla_gpu_enable_triton_gemm=1" accepts "a boolean takes 1"
verdict "--xla_gpu_enable_triton_gemm=True" accepts "a boolean takes True"
verdict "--xla_gpu_enable_triton_gemm=yes" parse-fails "a boolean refuses yes"
# a single dash is never matched: unknown, and XLA aborts
verdict "-xla_gpu_enable_triton_gemm=true" unknown-flags "one dash is an unknown flag"
expect_out '"code": "single-dash"' "single dash named"
# a bad value stops XLA before its unknown-flag check
verdict "--xla_gpu_autotune_level=x --xla_bogus" parse-fails "a bad value comes first"
expect_out "refuses a value first" "the unknown flag says so"
# a word starts right after a closing quote
verdict "--xla_dump_to='a'--xla_gpu_autotune_level=x" parse-fails "glued word read on its own"
expect_out '"code": "glued-word"' "glued word reported"
# list-valued flags accumulate
run "$XL" flags lint --release jaxlib==0.10.2 -- "--xla_disable_hlo_passes=a --xla_disable_hlo_passes=b"
expect_rc 0 "repeated list flag is no conflict"
expect_out "appends" "accumulation explained"
# --help and -- end in refusals of their own
verdict "--xla_hlo_profile --help" parse-fails "--help left over fails the parse"
verdict "--xla_hlo_profile -- --xla_hlo_profile" unknown-flags "-- passes the rest through as unknown"
# an unterminated quote runs to the end and is accepted
verdict '--xla_dump_to="a b' accepts "unterminated quote runs to the end"
# a value that does not start with '-' is a flags file
printf -- '--xla_hlo_profile\n\n  --xla_gpu_autotune_level=z\n' >"$T/flags.txt"
verdict "$T/flags.txt" parse-fails "flags file read"
run "$XL" flags lint --release jaxlib==0.10.2 -- "$T/flags.txt"
expect_rc 65 "flags file lint fails"
expect_out "$T/flags.txt:3:3: error:" "file, line and column of the bad token"
verdict "$T/none.txt" no-file "missing flags file"
printf -- '--xla_hlo_profile\n' >"$T/ok.txt"
verdict "$T/ok.txt" accepts "good flags file"

# the real reader in jaxlib
venv=$(cd "$SRC" && tools/venv.sh demo 2>"$T/venv.err") || {
	cat "$T/venv.err"
	skip "$(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"
}
case "$venv" in /*) ;; *) venv="$SRC/$venv" ;; esac
run "$venv/bin/python" "$SRC/tests/xla_reader_ref.py" "$XL" --cases "${XLA_CASES:-600}" \
	--catalog "$SRC/etc/flags/xla.yaml"
grep -v '^  missing' "$T/out" | tail -30
expect_rc 0 "the model agrees with jaxlib's XLA"
done_ok
