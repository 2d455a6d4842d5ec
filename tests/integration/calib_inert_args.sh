# calib_inert_args.sh - a family survives a harmless change: a step count
# in argv makes every candidate "unseen", and calib order says which part of
# the signature differs from the family's latest launch; with the option
# named in signature.inert_args its value is left out of the signature, so
# the candidate launched with another step count stays known-good and an
# OOM stays known-bad.
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"

mkdir -p "$T/profiles"
export XLAUNCH_PROFILE_PATH="$T/profiles"
cat >"$T/job.py" <<'PY'
import os, sys
mb = int(os.environ["MICRO_BATCH"])
if mb > 8:
    print("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1073741824 bytes.", file=sys.stderr)
    sys.exit(1)
b = bytearray(mb * 4 * 1048576)
print("steps", sys.argv[sys.argv.index("--steps") + 1])
PY
profile() {  # profile NAME [INERT]
	{
		echo "description: a step count that shapes nothing"
		echo "env: {MICRO_BATCH: 8}"
		echo "signature:"
		[ -n "${2:-}" ] && echo "  inert_args: \"$2\""
		echo "  train: {micro_batch: 8}"
		echo "candidates:"
		echo "  - name: mb16"
		echo "    env: {MICRO_BATCH: 16}"
		echo "    signature: {train: {micro_batch: 16}}"
		echo "  - name: mb8"
	} >"$T/profiles/$1.yaml"
}
profile plain
profile inert "--steps, --log-every"
cd "$T"
# a store per profile: an OOM of one would make the other's candidate suspect
store() { export XLAUNCH_STORE="$T/$1.db"; }
order() {  # order PROFILE STEPS: "name:place ..."
	store "$1"
	run "$XL" calib order "$1" --json -- python3 job.py --steps "$2" --log-every=5
	expect_rc 0 "order $1 --steps $2"
	python3 -c 'import json, sys; print(" ".join(c["name"] + ":" + c["place"] for c in json.load(open(sys.argv[1]))["order"]))' "$T/out"
}
for p in plain inert; do
	store "$p"
	run "$XL" run --retry=oom "$p" -- python3 job.py --steps 100 --log-every=5
	expect_rc 0 "$p: mb16 runs out of memory, mb8 runs"
	expect_err "attempt 1/2: oom" "$p: the first attempt ran out of memory"
	[ "$(order "$p" 100)" = "mb8:known-good mb16:known-bad" ] || fail "$p: order at the same step count: $(cat "$T/out")"
	ok "$p: known-good first, known-bad last"
done

# another step count: without inert_args, a new signature, and said why
got=$(order plain 200)
case $got in
*"mb8:unseen"*) ;;
*) fail "plain, --steps 200: $got" ;;
esac
ok "plain: another step count is another signature"
store plain
run "$XL" calib order plain -- python3 job.py --steps 200 --log-every=5
expect_out "differs from the family's latest launch (run " "which launch it is compared with"
expect_out ") in --steps 200 (was 100)" "which part differs, said"
run "$XL" calib predict plain -c mb8 -- python3 job.py --steps 200 --log-every=5
expect_out "never launched; differs from the family's latest launch (run " "predict says it too"
expect_out ") in --steps 200 (was 100)" "with the part that differs"
# the latest launch of attempts in one second (times are whole seconds, as
# a retry's two attempts often are): the later one, whichever candidate it
# ran and however their signatures' hashes sort
for later in mb8 mb16; do
	export XLAUNCH_STORE="$T/tie-$later.db"
	earlier=mb8; [ "$later" = mb8 ] && earlier=mb16
	for c in "$earlier 20260101T000000.000001Z-h-1-r0-a1" "$later 20260101T000000.000002Z-h-1-r0-a2"; do
		run "$XL" calib record plain -c "${c% *}" --outcome ok --id "${c#* }" --time 2026-01-01T00:00:00Z -- \
			python3 job.py --steps 100 --log-every=5
		expect_rc 0 "record ${c% *} at 00:00:00"
	done
	run "$XL" calib predict plain -c mb8 -- python3 job.py --steps 200 --log-every=5
	expect_out "latest launch (run 20260101T000000.000002Z-h-1-r0-a2) in " "$later recorded last in the same second is the latest launch"
done

# with it: the same signature, the history kept
[ "$(order inert 200)" = "mb8:known-good mb16:known-bad" ] || fail "inert, --steps 200: $(cat "$T/out")"
ok "inert: a step count and a log interval that shape nothing keep the history"
[ "$(order inert 7)" = "mb8:known-good mb16:known-bad" ] || fail "inert, --steps 7"
ok "inert: any step count"
store inert
run "$XL" run inert -- python3 job.py --steps 300 --log-every=50
expect_rc 0 "inert: runs the known-good candidate"
expect_err "candidate 'mb8' (known-good" "the known-good candidate first, at another step count"
expect_out "steps 300" "the job still gets its own step count"
# a profile key that is not a string is refused
printf 'description: bad\nsignature:\n  inert_args: {steps: 1}\n' >"$T/profiles/bad.yaml"
run "$XL" profile show bad
expect_rc 65 "signature.inert_args as a map is refused"
expect_err "inert_args" "the key named in the error"
echo "ok ($nchecks checks)"
