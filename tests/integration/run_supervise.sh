# run_supervise.sh - `xlaunch run` with real child processes: exit statuses,
# signals both ways, no orphans, timeouts, limits, retries, manifests,
# report lines, slow terminals and kept records.
. "$(dirname "$0")/lib.sh"
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P" XLAUNCH_STORE="$T/store/calib.db"
RUNS="$XDG_STATE_HOME/xlaunch/runs"
cat >"$P/plain.yaml" <<'Y'
description: no candidates
env: {PLAIN: yes}
Y
cat >"$P/ladder.yaml" <<'Y'
description: a candidate that cannot fit under the cap, then one that can
env: {LADDER: 1}
limits: {address_space: 1GiB}
candidates:
  - name: big
    env: {ALLOC_MB: 3000}
  - name: small
    env: {ALLOC_MB: 16}
Y
ALLOC='import os; b = bytearray(int(os.environ["ALLOC_MB"]) << 20); print("allocated", len(b) >> 20, "MiB")'
# the run directory of the last attempt the last command announced on stderr
# ("... run ID"); FILE defaults to $T/err
last_manifest() {
	id=$(grep -o ' run [0-9]\{8\}T[^ ]*' "${1:-$T/err}" | tail -1 | sed 's/^ run //')
	[ -n "$id" ] && [ -d "$RUNS/$id" ] || { echo "FAIL: no run announced in ${1:-$T/err}" >&2; exit 1; }
	echo "$RUNS/$id"
}
jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=d
for k in sys.argv[2].split("."): v=v[k] if not k.isdigit() else v[int(k)]
print(v)' "$1" "$2"; }

# exit statuses
for code in 0 1 7 255; do
	run "$XL" run plain -- sh -c "exit $code"
	expect_rc "$code" "run passes exit $code"
done
run "$XL" run plain -- sh -c 'kill -SEGV $$'
expect_rc 139 "killed by SIGSEGV is 139"
expect_err "crash (killed by signal 11" "SIGSEGV classified crash"
m=$(last_manifest)
expect_eq "$(jget "$m/manifest.json" outcome)" crash "manifest outcome crash"
# run ids: UTC to the microsecond, then host, pid, rank and attempt
basename "$m" | grep -Eq '^[0-9]{8}T[0-9]{6}\.[0-9]{6}Z-[A-Za-z0-9_-]+-[0-9]+-r0-a1$' ||
	fail "run id '$(basename "$m")' is not TIME-HOST-PID-rRANK-aATTEMPT"
ok "run id format"
expect_eq "$(jget "$m/manifest.json" id)" "$(basename "$m")" "the manifest names its run id"
run "$XL" run plain -- sh -c 'echo out; echo err >&2; exit 3'
expect_rc 3 "exit 3"
expect_out "out" "child stdout reaches the terminal"
expect_err "err" "child stderr reaches the terminal"
m=$(last_manifest)
expect_eq "$(cat "$m/stdout.log")" "out" "stdout.log"
expect_eq "$(cat "$m/stderr.log")" "err" "stderr.log"
expect_eq "$(jget "$m/manifest.json" outcome)" error "outcome error"
expect_eq "$(jget "$m/manifest.json" exit_status)" 3 "manifest exit status"
run "$XL" run plain -- /no/such/binary
expect_rc 127 "missing command"

# the child's environment carries the run id and report path
run "$XL" run plain -- sh -c 'echo "id=$XLAUNCH_RUN_ID"; echo "report=$XLAUNCH_REPORT"; echo "plain=$PLAIN"'
expect_out "plain=yes" "profile env"
m=$(last_manifest)
expect_out "id=$(basename "$m")" "XLAUNCH_RUN_ID is the run directory's name"
expect_out "report=$m/report.jsonl" "XLAUNCH_REPORT in the run directory"
[ "$(stat -c %a "$RUNS")" = 700 ] || fail "runs directory is not private"
[ "$(stat -c %a "$m")" = 700 ] || fail "run directory is not private"
ok "private run directories"

# manifest complete and valid JSON
python3 - "$m/manifest.json" <<'PY' || fail "manifest fields"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ["id", "argv", "profile", "profile_chain", "candidate", "attempt", "env", "unset", "flags",
          "policy", "limits", "signature", "host", "rank", "start", "end", "wall_s", "outcome",
          "exit_status", "predicted_bytes", "observed_bytes", "observed_kind", "observed_source",
          "compile_count", "figures", "observation", "xla_dump"]:
    assert k in d, k
assert d["argv"][0] == "sh" and d["outcome"] == "ok" and d["env"]["PLAIN"] == "yes"
assert len(d["signature"]["hash"]) == 64
assert d["observed_kind"] in ("host_peak_vm", "host_peak_rss") and d["observed_bytes"] > 0, d
PY
ok "manifest complete"

# signals: SIGTERM to xlaunch reaches the child, which says so
cat >"$T/trap.sh" <<'S'
trap 'echo got-TERM >"$1"; exit 0' TERM
echo ready >"$1.ready"
while :; do sleep 0.1; done
S
"$XL" run plain -- sh "$T/trap.sh" "$T/sig" >"$T/out" 2>"$T/err" &
xp=$!
wait_until "$HANG_S" test -f "$T/sig.ready" || fail "the child did not set its trap"
kill -TERM $xp
set +e; wait $xp; rc=$?; set -e
expect_eq "$(cat "$T/sig" 2>/dev/null)" got-TERM "SIGTERM forwarded to the child"
expect_rc 0 "child's own exit status after handling SIGTERM"
m=$(last_manifest)
expect_eq "$(jget "$m/manifest.json" outcome)" interrupted "outcome interrupted"
# SIGTERM that reaches xlaunch just after its child ended of its own copy
# (Slurm signals every process of a step at once): still interrupted.  The
# child fills xlaunch's terminal, which nobody reads yet, so xlaunch is
# still flushing it, its child reaped, when the signal comes
mkfifo "$T/term.fifo"
"$XL" run plain -- sh -c 'echo $$ >"$1"; head -c 300000 /dev/zero; exit 143' sh "$T/late.child" \
	>"$T/term.fifo" 2>"$T/err" &
xp=$!
exec 3<"$T/term.fifo"
wait_until "$HANG_S" test -s "$T/late.child" || fail "the child did not start"
child_reaped() { [ ! -e "/proc/$(cat "$T/late.child")" ]; }
wait_until "$HANG_S" child_reaped || fail "the child was not reaped"
kill -TERM $xp
timeout "$HANG_S" cat <&3 >/dev/null
exec 3<&-
set +e; wait $xp; rc=$?; set -e
expect_rc 143 "the child's status"
expect_err "attempt 1/1: interrupted (interrupted by Terminated" "a SIGTERM after the child's end is an interruption"
# ... and when xlaunch had nothing left to do: the child ended of a SIGTERM
# that xlaunch did not forward, and xlaunch's own comes once the child is
# gone (from a process outside the child's group, as Slurm sends it)
cat >"$T/late.sh" <<'S'
xl=$PPID
setsid sh -c ': >"$3"; while kill -0 "$1" 2>/dev/null; do :; done; kill -TERM "$2"' sh $$ "$xl" "$1" &
while [ ! -e "$1" ]; do :; done
kill -TERM $$
S
run "$XL" run plain -- sh "$T/late.sh" "$T/late.apart"
expect_rc 143 "the child's status, xlaunch not killed"
expect_err "attempt 1/1: interrupted (interrupted by Terminated" "a SIGTERM just after the child's end is an interruption"
# USR1 is forwarded too and does not end the run
cat >"$T/usr1.sh" <<'S'
trap 'echo got-USR1 >"$1"; exit 5' USR1
echo ready >"$1.ready"
while :; do sleep 0.1; done
S
"$XL" run plain -- sh "$T/usr1.sh" "$T/u" >"$T/out" 2>"$T/err" &
xp=$!
wait_until "$HANG_S" test -f "$T/u.ready" || fail "the child did not set its trap"
kill -USR1 $xp
set +e; wait $xp; rc=$?; set -e
expect_eq "$(cat "$T/u" 2>/dev/null)" got-USR1 "SIGUSR1 forwarded"
expect_rc 5 "exit after USR1"

# no orphan after kill -9 of xlaunch: the whole process group goes
cat >"$T/tree.sh" <<'S'
sleep 300 &
echo $! >"$1.grandchild"
echo $$ >"$1.child"
wait
S
"$XL" run plain -- sh "$T/tree.sh" "$T/tree" >/dev/null 2>&1 &
xp=$!
# tree.child is written last
wait_until "$HANG_S" test -s "$T/tree.child" || fail "the child did not start its grandchild"
gc=$(cat "$T/tree.grandchild"); ch=$(cat "$T/tree.child")
kill -0 "$gc" || fail "grandchild not running"
kill -KILL $xp
tree_gone() { ! kill -0 "$gc" 2>/dev/null && ! kill -0 "$ch" 2>/dev/null; }
wait_until "$HANG_S" tree_gone || { kill -9 "$gc" "$ch" 2>/dev/null; fail "child tree outlived a SIGKILLed xlaunch"; }
ok "no orphans after kill -9"

# --timeout: SIGTERM, then SIGKILL after the grace period (the child has 5 s
# to ignore TERM: it needs a few milliseconds of CPU)
run "$XL" run plain --timeout 5s --grace 1s -- sh -c 'trap "" TERM; sleep 60'
expect_rc 137 "timeout kills with SIGKILL after grace when TERM is ignored"
m=$(last_manifest)
expect_eq "$(jget "$m/manifest.json" outcome)" timeout "outcome timeout"
run "$XL" run plain --timeout 1 -- sleep 30
expect_rc 143 "timeout SIGTERM"

# limits: an allocation above address_space fails for real and is an oom;
# the retry walks to the next candidate, and the next run orders it last
run "$XL" run ladder -- python3 -c "$ALLOC"
expect_rc 0 "ladder ends ok"
expect_err "attempt 1/2: oom (python-memoryerror: MemoryError)" "big is oom"
expect_err "attempt 2/2: ok" "small is ok"
expect_out "allocated 16 MiB" "small ran"
run "$XL" run ladder --dry-run -- python3 -c "$ALLOC"
expect_out "1. small            known-good" "known-good first"
expect_out "2. big              known-bad" "known-bad last"
run "$XL" run ladder -- python3 -c "$ALLOC"
expect_rc 0 "second launch ok"
expect_err "attempt 1/2: profile 'ladder' candidate 'small' (known-good" "first attempt is the known-good one"
run "$XL" run ladder --retry=none -c big -- python3 -c "$ALLOC"
expect_rc 1 "pinned candidate, no retry"
run "$XL" run ladder --retry=bogus -- true
expect_rc 64 "bad --retry"
expect_err "xlaunch run: option '--retry': 'bogus' is not a list of outcomes" "bad --retry named"
run "$XL" run ladder --max-attempts 0 -- true
expect_rc 64 "bad --max-attempts"
expect_err "option '--max-attempts': '0' is not a whole number from 1 to 1000" "bad --max-attempts named"
run "$XL" run ladder --timeout soon -- true
expect_rc 64 "bad --timeout"
expect_err "option '--timeout': 'soon' is not a duration" "bad --timeout named"
run "$XL" run ladder -c nope -- true
expect_rc 66 "unknown candidate: not found"
expect_err "no candidate 'nope' (candidates: big, small)" "candidates listed"

# report lines: good, malformed, unknown, huge
cat >"$T/rep.py" <<'PY'
import json, os
with open(os.environ["XLAUNCH_REPORT"], "a") as f:
    f.write(json.dumps({"kind": "memory", "predicted_bytes": 123456}) + "\n")
    f.write("this is not json\n")
    f.write(json.dumps({"kind": "weird"}) + "\n")
    f.write('{"kind":"memory","peak_bytes":' + "9" * 3000000 + "}\n")
    f.write(json.dumps({"kind": "memory", "peak_bytes": 777777, "limit_bytes": 1000000, "source": "test",
                        "memory_kind": "device_peak"}) + "\n")
    f.write(json.dumps({"kind": "memory", "peak_bytes": 555, "source": "mine"}) + "\n")
    f.write(json.dumps({"kind": "compile", "count": 3}) + "\n")
    f.write(json.dumps({"kind": "step", "step": 10}) + "\n")
PY
run "$XL" run plain -- python3 "$T/rep.py"
expect_rc 0 "report lines never harm the run"
expect_err "malformed line" "malformed lines warned"
expect_err "unknown kind" "unknown kind warned"
m=$(last_manifest)
expect_eq "$(jget "$m/manifest.json" observed_bytes)" 777777 "observed from the report, of the kind it says"
expect_eq "$(jget "$m/manifest.json" observed_kind)" device_peak "observed kind"
expect_eq "$(jget "$m/manifest.json" observed_source)" "the job's report (test)" "observed source"
expect_eq "$(jget "$m/manifest.json" reported_predicted_bytes)" 123456 "the job's own prediction is kept"
python3 - "$m/manifest.json" <<'PY' || fail "figures of the report"
import json, sys
d = json.load(open(sys.argv[1]))
figs = {(f["role"], f["kind"]): f for f in d["figures"]}
assert figs[("observed", "unclassified")]["bytes"] == 555, figs   # a kind it cannot tell
assert figs[("observed", "host_peak_rss")]["bytes"] > 0, figs     # sampled from outside
assert figs[("observed", "host_peak_vm")]["bytes"] > 0, figs
assert d["observation"]["samples"] >= 1, d["observation"]
assert d["xla_dump"]["dir"] is None and "not an XLA job" in d["xla_dump"]["why_not"], d["xla_dump"]
PY
ok "figures of the report, and from outside"
expect_eq "$(jget "$m/manifest.json" compile_count)" 3 "compile count"

# compile storm from the report: compiles keep coming after warm-up
cat >"$T/storm.py" <<'PY'
import json, os
with open(os.environ["XLAUNCH_REPORT"], "a") as f:
    for step in range(40):
        f.write(json.dumps({"kind": "compile", "count": step + 1}) + "\n")
        f.write(json.dumps({"kind": "step", "step": step}) + "\n")
PY
run "$XL" run plain -- python3 "$T/storm.py"
expect_rc 0 "a storm still exits 0"
expect_err "compile storm" "storm warned"
m=$(last_manifest)
expect_eq "$(jget "$m/manifest.json" outcome)" compile-storm "outcome compile-storm"
# and from JAX_LOG_COMPILES lines in the output (log lines after the warm-up)
run "$XL" run plain -- sh -c 'for i in 1 2 3; do echo "WARNING:jax._src.dispatch:Finished XLA compilation of jit(step) in 0.01 sec" >&2; done'
m=$(last_manifest)
expect_eq "$(jget "$m/manifest.json" compile_count)" 3 "compiles counted from JAX_LOG_COMPILES lines"
run "$XL" run plain -- sh -c 'for i in 1 2 3; do echo "WARNING:jax._src.compiler:Persistent compilation cache hit for '"'"'jit_step'"'"' with key '"'"'k'"'"'" >&2; echo "WARNING:jax._src.dispatch:Finished XLA compilation of jit(step) in 0.01 sec" >&2; done'
m=$(last_manifest)
expect_eq "$(jget "$m/manifest.json" compile_count)" 0 "programs loaded from the persistent cache are not compilations"
expect_eq "$(jget "$m/manifest.json" outcome)" ok "three compiles in warm-up are no storm"

# every OOM text of the runtimes is classified oom
while IFS='|' read -r id text; do
	[ -n "$id" ] || continue
	printf '%s\n' "$text" >"$T/msg"
	run "$XL" run plain --retry=none -- sh -c 'echo "step 1"; cat "$1" >&2; exit 1' sh "$T/msg"
	expect_rc 1 "$id exit"
	expect_err "oom ($id:" "$id classified"
done <<'TXT'
tpu-compile-hbm|RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 33.52G of 15.48G hbm. Exceeded hbm capacity by 18.04G.
tpu-compile-abort|Aborting compilation early because it's unlikely to have enough memory. Requires 25.5G, has 15.5G available.
tpu-runtime-allocate|Attempting to allocate 4.00G. That was not possible. There are 2.10G free.
tpu-runtime-reserve|Attempting to reserve 6.23G at the bottom of memory. That was not possible. There are 5.13G free, 0B reserved, and 5.13G reservable.
xla-oom|jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 17179869184 bytes.
xla-oom|jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating 12918464632 bytes.
torch-cuda-oom|torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB. GPU 0 has a total capacity of 79.11 GiB of which 3.94 GiB is free.
torch-oom-error|torch.cuda.OutOfMemoryError: out of memory
python-memoryerror|MemoryError
cpp-bad-alloc|terminate called after throwing an instance of 'std::bad_alloc'
cpp-bad-alloc|terminate called after throwing an instance of 'St9bad_alloc'
enomem|OSError: [Errno 12] Cannot allocate memory
TXT
# the same text with exit 0 is not an oom
run "$XL" run plain -- sh -c 'echo "CUDA out of memory (recovered)" >&2; exit 0'
expect_err "attempt 1/1: ok" "an OOM text in a successful run is not an oom"

# a slow terminal never stalls the child: the child writes 2 MB and says
# when it is done, and the terminal reads nothing until then ($HANG_S at
# most: a child stalled behind the terminal would never say it)
(
	"$XL" run plain -- python3 -c '
import sys, time
t = time.time()
sys.stdout.write(("x" * 1023 + "\n") * 2048); sys.stdout.flush()
print("child-write-seconds %.2f" % (time.time() - t), file=sys.stderr)
' 2>"$T/slow.err" | {
		if wait_until "$HANG_S" grep -q child-write-seconds "$T/slow.err"; then : >"$T/slow.first"; fi
		cat >"$T/slow.out"
	}
)
secs=$(grep child-write-seconds "$T/slow.err" | awk '{print $2}')
[ -f "$T/slow.first" ] || fail "the child stalled behind a terminal that read nothing (${secs}s)"
ok "slow terminal did not stall the child: it wrote everything before the terminal read (${secs}s)"
expect_eq "$(wc -c <"$T/slow.out")" 2097152 "the slow terminal still got everything"
m=$(last_manifest "$T/slow.err")
expect_eq "$(wc -c <"$m/stdout.log")" 2097152 "stdout.log has everything"

# ranks: only rank 0 records unless asked
RANK=3 run "$XL" run plain -- true
m=$(last_manifest)
expect_eq "$(jget "$m/manifest.json" rank)" 3 "rank from RANK"
SLURM_PROCID=2 run "$XL" run plain -- true
m=$(last_manifest)
expect_eq "$(jget "$m/manifest.json" rank_from)" SLURM_PROCID "rank from SLURM_PROCID"

# a store that cannot be opened never blocks a launch; the record is kept
# and replayed into the store at the next run
: >"$T/notadir"
XLAUNCH_STORE="$T/notadir/calib.db" run "$XL" run plain -- sh -c 'echo launched'
expect_rc 0 "launch despite a broken store"
expect_out "launched" "the child ran"
expect_err "kept in" "record kept"
n=$(ls "$XDG_STATE_HOME/xlaunch/pending" | wc -l)
expect_eq "$n" 1 "one pending record"
kept_id=$(ls "$XDG_STATE_HOME/xlaunch/pending" | sed 's/\.json$//')
run "$XL" run plain -- true
expect_err "replayed 1 record" "replayed at the next run"
expect_eq "$(ls "$XDG_STATE_HOME/xlaunch/pending" | wc -l)" 0 "nothing pending"
if "$XL" help | grep -q '^  calib'; then
	run "$XL" calib history --json
	grep -q "$kept_id" "$T/out" || fail "the replayed record is in the store"
	ok "replayed record in history"
fi

# nothing from the environment but the managed variables is written down
SECRET_TOKEN=hunter2-do-not-log run "$XL" run plain -- sh -c 'test "${#SECRET_TOKEN}" = 18'
expect_rc 0 "the child still gets the whole environment"
! grep -rq hunter2-do-not-log "$XDG_STATE_HOME" "$T/store" || fail "an unmanaged variable was written to the state directory or the store"
ok "unmanaged variables are not logged"

run "$XL" run --help
expect_out "usage: xlaunch run" "run --help"
run "$XL" run plain
expect_rc 64 "run without a command"
done_ok
