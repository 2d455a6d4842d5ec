#!/bin/sh
# bundle compare / bundle match: the command-line contract, and agreement
# with the reference implementation of PEP 440 on generated inputs.
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"

run "$XL" bundle compare 1.0 1.0.0;            expect_rc 0 "equal releases"; expect_eq "$(cat "$T/out")" 0 "1.0 == 1.0.0"
run "$XL" bundle compare 1.0.dev0 1.0a0;       expect_eq "$(cat "$T/out")" -1 "dev before alpha"
run "$XL" bundle compare 1!0.1 2.0;            expect_eq "$(cat "$T/out")" 1 "epoch wins"
run "$XL" bundle compare 2.9.0+gitc04e61c 2.9.0; expect_eq "$(cat "$T/out")" 1 "local sorts after public"
run "$XL" bundle compare 1.0 not-a-version;    expect_rc 65 "invalid version"
expect_err "not-a-version" "error names the version"
run "$XL" bundle compare 1.0;                  expect_rc 64 "one argument"
run "$XL" bundle match ">=2.9" 2.9.0a0+git21fec65 2.9.1
expect_rc 1 "custom pre-release build does not satisfy >=2.9"
expect_out "2.9.0a0+git21fec65	no" "line per version"
expect_out "2.9.1	yes" "yes line"
run "$XL" bundle match ">=2.9.0a0,<2.10" 2.9.0a0+git21fec65 2.9.1
expect_rc 0 "all match"
run "$XL" bundle match "==0.10.*" 0.10.2 0.10.0rc1 0.11
expect_rc 1 "wildcard"; expect_out "0.10.0rc1	yes" "prefix match admits pre-releases"
run "$XL" bundle match ">=1.0+local" 1.0;      expect_rc 65 "local label with >="
run "$XL" bundle match "~=1" 1.0;              expect_rc 65 "~= needs two components"
run "$XL" bundle match ">=1.0" 1.0 x;          expect_rc 65 "invalid version in the list"
run "$XL" --json bundle match "==1.0" 1.0.0
expect_out '"match": true' "json form"

command -v python3 >/dev/null 2>&1 || skip "python3 is not installed: the differential test against packaging needs it"
run python3 "$SRC/tests/bundle_pep440_ref.py" "$XL" --pairs "${PAIRS:-1500}" --specs "${SPECS:-400}"
[ "$rc" -eq 77 ] && skip "$(cat "$T/out")"
cat "$T/out" | tail -20
expect_rc 0 "agrees with the reference implementation"
done_ok
