#!/bin/sh
# Every feature gate and pin of etc/bundles.yaml against the release
# metadata recorded from PyPI (tests/data/releases).
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"

python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed (tools/deps.sh installs it)"
run python3 "$SRC/tests/release_facts.py" "$XL"
cat "$T/out"
expect_rc 0 "gates and pins agree with the releases"
done_ok
