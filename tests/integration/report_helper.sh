# report_helper.sh - etc/report/xlaunch_report.py and examples/train_mlp.py:
# the report protocol as a training script writes it, silence when
# XLAUNCH_REPORT is unset, no harm from an unwritable report path, and a real
# JAX job on four host devices whose restart loads its programs from the
# persistent compilation cache.
REAL_HOME=${HOME:-}
. "$(dirname "$0")/lib.sh"
HELPER="$SRC/etc/report"
export PYTHONDONTWRITEBYTECODE=1  # leave no __pycache__ in the source tree
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"

# summarize FILE: one line of facts about a report file, or an error on the
# first line that is not a JSON object with a known kind.
summarize() {
	python3 - "$1" <<'PY'
import json, sys
kinds, pred, peak, count, hits, steps, src = set(), 0, 0, -1, -1, 0, "-"
for n, line in enumerate(open(sys.argv[1]), 1):
    try:
        r = json.loads(line)
    except ValueError as e:
        sys.exit("line %d is not JSON: %s" % (n, e))
    k = r.get("kind")
    if k not in ("memory", "compile", "step"):
        sys.exit("line %d: unknown kind %r" % (n, k))
    kinds.add(k)
    if k == "memory" and "predicted_bytes" in r:
        pred = r["predicted_bytes"]
    if k == "memory" and "peak_bytes" in r:
        peak, src = r["peak_bytes"], r["source"]
        if "limit_bytes" not in r:
            sys.exit("line %d: peak without limit_bytes" % n)
    if k == "compile":
        count, hits = r["count"], r.get("cache_hits", -1)
    if k == "step":
        steps += 1
        if not isinstance(r.get("step_time_s"), float):
            sys.exit("line %d: step without step_time_s" % n)
print("kinds=%s predicted=%d peak=%d source=%s count=%d hits=%d steps=%d"
      % (",".join(sorted(kinds)), pred, peak, src, count, hits, steps))
PY
}
field() {  # field NAME SUMMARY
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# --- the helper alone, with the system python and no jax -----------------
cd "$T"
run env -u XLAUNCH_REPORT python3 -c '
import sys; sys.path.insert(0, sys.argv[1])
import xlaunch_report as xr
assert not xr.enabled()
assert xr.report_step(1, 0.5, 0.1) is None
assert xr.report_compiles(3, 1) == 3
assert xr.report_peak(1000, None, "user") == 1000
assert xr.host_peak_rss_bytes() > 0
assert xr.emit({"kind": "step", "step": 0}) is False
print("done")' "$HELPER"
expect_rc 0 "helper runs without XLAUNCH_REPORT"
expect_out "done" "helper calls return"
expect_eq "$(cat "$T/err")" "" "nothing on stderr without XLAUNCH_REPORT"
expect_eq "$(ls "$T" | grep -v -e '^out$' -e '^err$' -e '^home$' -e '^state$' -e '^config$')" "" "no file written without XLAUNCH_REPORT"

XLAUNCH_REPORT="$T/no/such/dir/report.jsonl" run python3 -c '
import sys; sys.path.insert(0, sys.argv[1])
import xlaunch_report as xr
class fake_compiled:
    def memory_analysis(self):
        raise RuntimeError("injected failure")
for i in range(5):
    xr.report_step(i, 1.0, 0.1)
xr.report_compiles(2)
assert xr.report_predicted_from_jax(fake_compiled()) is None
assert xr.report_step("not a step") is None
print("still running")' "$HELPER"
expect_rc 0 "an unwritable report path does not harm the run"
expect_out "still running" "the run goes on after failed writes"
expect_eq "$(grep -c "cannot write to '$T/no/such/dir/report.jsonl'" "$T/err")" 1 "one warning for many failed writes"
expect_err "memory_analysis() failed: injected failure" "a failing runtime query is a warning"
expect_err "report_step failed: " "a bad argument is a warning, not an exception"

R="$T/report.jsonl"
echo '{"kind":"step","step":-1,"loss":null,"step_time_s":0.5}' >"$R"
report_t0=$(python3 -c 'import time; print(time.time())')
XLAUNCH_REPORT="$R" run python3 -c '
import sys; sys.path.insert(0, sys.argv[1])
import xlaunch_report as xr
xr.report_step(0, float("nan"), 0.25)
xr.report_step(1, 0.5, float("inf"))
xr.report_compiles(4, cache_hits=3)
xr.report_peak(2048, 4096, "user")' "$HELPER"
expect_rc 0 "reports to a file"
expect_eq "$(wc -l <"$R" | tr -d ' ')" 5 "lines appended after what was there"
# every line says when it was written (the wall clock's seconds): within the
# run of the helper, in order
line() { sed -n "$1p" "$R" | sed 's/,"t":[0-9.]*}$/}/'; }
tof() { sed -n "$1p" "$R" | sed -n 's/.*,"t":\([0-9.]*\)}$/\1/p'; }
expect_eq "$(line 2)" '{"kind":"step","step":0,"loss":null,"step_time_s":0.25}' "NaN loss written as null"
expect_eq "$(line 3)" '{"kind":"step","step":1,"loss":0.5,"step_time_s":null}' "infinite time written as null"
expect_eq "$(line 4)" '{"kind":"compile","count":4,"cache_hits":3}' "compile line"
expect_eq "$(line 5)" '{"kind":"memory","peak_bytes":2048,"limit_bytes":4096,"source":"user"}' "peak line"
python3 -c 'import sys, time; t = [float(x) for x in sys.argv[2:]]
sys.exit(0 if len(t) == 4 and float(sys.argv[1]) <= t[0] <= t[1] <= t[2] <= t[3] <= time.time() else 1)' \
	"$report_t0" "$(tof 2)" "$(tof 3)" "$(tof 4)" "$(tof 5)" || fail "the lines' times: $(tof 2) $(tof 3) $(tof 4) $(tof 5), after $report_t0"
ok "each line carries the time it was written"

# concurrent writers (ranks, threads) never interleave within a line
R2="$T/many.jsonl"
for w in 1 2 3 4; do
	XLAUNCH_REPORT="$R2" python3 -c '
import sys; sys.path.insert(0, sys.argv[1])
import xlaunch_report as xr
for i in range(300):
    xr.emit({"kind": "step", "step": i, "step_time_s": 0.5, "pad": "x" * 3000})' "$HELPER" &
done
wait
s=$(summarize "$R2") || fail "concurrent lines: $s"
expect_eq "$(field steps "$s")" 1200 "1200 whole lines from 4 concurrent writers"

# --- a real JAX job ------------------------------------------------------
cd "$SRC"
set +e
venv_err=$(HOME="$REAL_HOME" tools/venv.sh demo 2>&1 >/dev/null)
venv_rc=$?
set -e
if [ $venv_rc -eq 77 ]; then
	reason=$(echo "$venv_err" | sed -n 's/^SKIP: //p' | tail -1)
	skip "${reason:-tools/venv.sh demo could not make .venv}"
fi
[ $venv_rc -eq 0 ] || fail "tools/venv.sh demo: exit $venv_rc: $venv_err"
PY="$SRC/.venv/bin/python"

export JAX_PLATFORMS=cpu JAX_COMPILATION_CACHE_DIR="$T/jax-cache"
export JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0 JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES=0
for n in 1 2; do
	XLAUNCH_REPORT="$T/run$n.jsonl" XLA_FLAGS=--xla_force_host_platform_device_count=4 \
		run "$PY" examples/train_mlp.py 3 --micro-batch 64 --hidden 128
	expect_rc 0 "training run $n"
	expect_eq "$(head -n 1 "$T/out")" "devices: 4" "run $n sees the four host devices"
	expect_out "mean step time: " "run $n prints the step time"
	s=$(summarize "$T/run$n.jsonl") || fail "run $n report: $s"
	expect_eq "$(field kinds "$s")" "compile,memory,step" "run $n reports every kind ($s)"
	[ "$(field predicted "$s")" -gt 0 ] || fail "run $n: predicted_bytes not positive ($s)"
	[ "$(field peak "$s")" -gt 0 ] || fail "run $n: peak_bytes not positive ($s)"
	expect_eq "$(field source "$s")" "host_rss" "run $n peak from the host's RSS on CPU"
	expect_eq "$(field steps "$s")" 3 "run $n reports each step"
	eval "count$n=$(field count "$s") hits$n=$(field hits "$s")"
done
expect_eq "$hits1" 0 "a cold cache has no hits"
[ "$count1" -gt 0 ] || fail "the cold run compiled nothing (count $count1)"
[ "$hits2" -gt 0 ] || fail "the restart loaded nothing from the persistent cache (hits $hits2)"
[ "$count2" -lt "$count1" ] || fail "the restart compiled as much as the cold run ($count2 >= $count1)"
ok "restart: $count1 -> $count2 compiles, $hits2 cache hits"

# without the flag, one device; the environment sizes the job unless an option does
unset JAX_COMPILATION_CACHE_DIR
# (and XLAUNCH_REPORT_HELPER names the helper to use: here a copy that
# reports to the file named by another variable)
mkdir "$T/helper"
sed 's/^ENV_VAR = .*/ENV_VAR = "XLT_OTHER_REPORT"/' etc/report/xlaunch_report.py >"$T/helper/xlaunch_report.py"
XLAUNCH_REPORT_HELPER="$T/helper/xlaunch_report.py" XLT_OTHER_REPORT="$T/other.jsonl" \
	MICRO_BATCH=32 HIDDEN=64 run "$PY" examples/train_mlp.py 1 --hidden 96
expect_rc 0 "run on one device"
s=$(summarize "$T/other.jsonl") || fail "report through XLAUNCH_REPORT_HELPER: $s"
expect_eq "$(field steps "$s")" 1 "the helper named by XLAUNCH_REPORT_HELPER is used"
expect_eq "$(head -n 1 "$T/out")" "devices: 1" "one device without the flag"
expect_out "micro batch: 32 per device, global batch 32, hidden 96" "MICRO_BATCH from the environment, --hidden over HIDDEN"
MICRO_BATCH=zero run "$PY" examples/train_mlp.py 1
expect_rc 1 "a bad MICRO_BATCH is refused"
expect_err "MICRO_BATCH='zero': not a positive integer" "the bad value is named"

# an address-space cap turns a too-large batch into a real allocation error;
# peak and compile lines are still reported
XLAUNCH_REPORT="$T/oom.jsonl" XLA_FLAGS=--xla_force_host_platform_device_count=4 MICRO_BATCH=2097152 \
	run sh -c 'ulimit -v 8388608 && exec "$0" examples/train_mlp.py 1' "$PY"
expect_rc 1 "too large a batch under an 8 GiB address-space cap fails"
expect_err "RESOURCE_EXHAUSTED: Out of memory allocating" "the runtime's out-of-memory error"
s=$(summarize "$T/oom.jsonl") || fail "oom report: $s"
[ "$(field predicted "$s")" -gt 8589934592 ] || fail "predicted bytes should exceed the cap ($s)"
[ "$(field peak "$s")" -gt 0 ] || fail "peak reported after the failure ($s)"
ok "oom attempt reported: $s"
done_ok
