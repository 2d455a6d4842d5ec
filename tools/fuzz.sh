#!/bin/sh
# Runs the libFuzzer harnesses built under build/fuzz.
#   tools/fuzz.sh run SECONDS NAME...   each for SECONDS on a copy of its corpus
#   tools/fuzz.sh smoke 0 NAME...       each over its seeds plus 3000 new inputs
# New inputs found in a long run stay in build/fuzz/corpus/NAME; a crash
# leaves build/fuzz/crash-* and a non-zero exit.
set -e
mode=$1; secs=$2; shift 2
suite="$(pwd)/../shared/testdata/yaml-test-suite"
status=0
for name in "$@"; do
	bin=build/fuzz/fuzz_$name
	corpus=build/fuzz/corpus/$name
	mkdir -p "$corpus"
	[ -d "tests/fuzz/corpus/$name" ] && cp -n tests/fuzz/corpus/"$name"/* "$corpus"/ 2>/dev/null || true
	if [ "$name" = profile ] && [ -d "$suite" ]; then
		cp -n "$suite"/*.yaml "$corpus"/ 2>/dev/null || true
	fi
	if [ "$mode" = smoke ]; then
		args="-runs=3000 -max_len=4096"
	else
		args="-max_total_time=$secs -print_final_stats=1"
	fi
	echo "fuzz $name ($mode)"
	# shellcheck disable=SC2086
	# absolute paths: a harness may work in a directory of its own
	if ! ASAN_OPTIONS=detect_leaks=1 "$bin" $args -artifact_prefix="$(pwd)/build/fuzz/" "$(pwd)/$corpus" \
		>build/fuzz/$name.log 2>&1; then
		tail -40 build/fuzz/$name.log
		status=1
	else
		grep -E '^(#[0-9]+ *DONE|stat::number_of_executed_units|Done )' build/fuzz/$name.log | tail -2 || true
	fi
done
exit $status
