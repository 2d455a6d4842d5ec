# run_candidate_args.sh - candidates given as arguments: a key=value trainer
# (per_device_batch_size=N) and an argparse trainer (--batch-size N), each
# allocating memory in proportion to its batch under a real address-space
# limit.  `run --retry=oom` walks the candidates and every attempt gets its
# own candidate's args after the command's (each trainer writes the argv it
# got); the args are in the signature (candidates that differ only by them
# differ), signature.inert_args masks a value from the command or from the
# args alike; --dry-run, profile show --explain, env and exec say or apply
# them; args that are not a list of strings exit 65 with their position.
. "$(dirname "$0")/lib.sh"
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P" XLAUNCH_STORE="$T/calib.db" ARGV_LOG="$T/argv.log"
RUNS="$XDG_STATE_HOME/xlaunch/runs"
# key=value, as many trainers take their config on the command line
cat >"$T/kv.py" <<'PY'
import json, os, sys
with open(os.environ["ARGV_LOG"], "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\n")
conf = dict(a.split("=", 1) for a in sys.argv[1:])
b = bytearray(int(conf["per_device_batch_size"]) << 24)   # 16 MiB a sample
print("batch", conf["per_device_batch_size"], "steps", conf["steps"], "allocated", len(b) >> 20, "MiB")
PY
# argparse
cat >"$T/ap.py" <<'PY'
import argparse, json, os, sys
with open(os.environ["ARGV_LOG"], "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\n")
ap = argparse.ArgumentParser()
ap.add_argument("--batch-size", type=int, required=True)
ap.add_argument("--steps", type=int, default=1)
a = ap.parse_args()
b = bytearray(a.batch_size << 24)
print("batch", a.batch_size, "steps", a.steps, "allocated", len(b) >> 20, "MiB")
PY
# 128 and 64 samples (2 GiB, 1 GiB) cannot fit under 1 GiB of address space
cat >"$P/kv.yaml" <<'Y'
description: micro batch as key=value arguments
limits: {address_space: 1GiB}
signature:
  inert_args: "steps --steps"
candidates:
  - {name: mb128, args: [per_device_batch_size=128]}
  - {name: mb64, args: ["per_device_batch_size=64"]}
  - {name: mb16, args: [per_device_batch_size=16]}
Y
cat >"$P/ap.yaml" <<'Y'
description: micro batch as argparse options
limits: {address_space: 1GiB}
signature:
  inert_args: "--steps"
candidates:
  - name: bs128
    args: [--batch-size, 128]
  - name: bs8
    args: [--batch-size, "8", --steps, "3"]
Y
cd "$T"
argv_lines() { python3 -c 'import json, sys; print("|".join(" ".join(json.loads(l)) for l in open(sys.argv[1])))' "$ARGV_LOG"; }
manifests() {  # the manifests of the attempts the last command announced, in order
	grep -o ' run [0-9]\{8\}T[^ ]*' "$T/err" | sed 's/^ run //' | while read -r id; do
		echo "$RUNS/$id/manifest.json"
	done
}

# key=value: the retry walks mb128 -> mb64 -> mb16, each with its own args
rm -f "$ARGV_LOG"
run "$XL" run --retry=oom kv -- python3 kv.py steps=100
expect_rc 0 "kv: ends ok"
expect_err "attempt 1/3: oom (python-memoryerror" "kv: mb128 runs out of memory"
expect_err "attempt 2/3: oom (python-memoryerror" "kv: mb64 runs out of memory"
expect_err "attempt 3/3: ok" "kv: mb16 runs"
expect_out "batch 16 steps 100 allocated 256 MiB" "kv: the trainer read its batch from the args"
expect_eq "$(argv_lines)" \
	"steps=100 per_device_batch_size=128|steps=100 per_device_batch_size=64|steps=100 per_device_batch_size=16" \
	"kv: each attempt got its own candidate's args after the command's, never an earlier one's"
manifests >"$T/m.list"
expect_eq "$(wc -l <"$T/m.list")" 3 "kv: three attempts announced"
python3 - "$T/m.list" <<'PY' || fail "kv: manifests"
import json, sys
ms = [json.load(open(p.strip())) for p in open(sys.argv[1])]
want = ["128", "64", "16"]
for m, n in zip(ms, want):
    assert m["argv"] == ["python3", "kv.py", "steps=100", "per_device_batch_size=" + n], m["argv"]
    assert m["candidate_args"] == ["per_device_batch_size=" + n], m
    parts = m["signature"]["parts"]
    # the command's inert value masked, the candidate's args signed
    assert parts["argv"] == ["python", "kv.py", "steps=*", "per_device_batch_size=" + n], parts["argv"]
    assert parts["candidate_args"] == 1, parts
hashes = {m["signature"]["hash"] for m in ms}
assert len(hashes) == 3, hashes
# the candidates differ only by their args: the shape is the same
assert len({m["signature"]["shape_hash"] for m in ms}) == 1
PY
ok "kv: the manifests show the argv each attempt ran; three signatures that differ only in args"

# the next launch, at another step count (inert): known-good first, its args
rm -f "$ARGV_LOG"
run "$XL" run kv -- python3 kv.py steps=500
expect_rc 0 "kv: second launch"
expect_err "attempt 1/3: profile 'kv' candidate 'mb16' (known-good" "kv: inert steps keeps mb16 known-good"
expect_eq "$(argv_lines)" "steps=500 per_device_batch_size=16" "kv: the known-good candidate's args"
run "$XL" run kv --dry-run -- python3 kv.py steps=7
expect_rc 0 "kv: dry run"
expect_out "1. mb16             known-good" "kv: dry run orders mb16 first"
expect_out "     runs: python3 kv.py steps=7 per_device_batch_size=16" "kv: dry run shows the final command"
expect_out "     runs: python3 kv.py steps=7 per_device_batch_size=128" "kv: for every candidate"
expect_out "known-bad" "kv: the oom candidates known-bad"
run "$XL" --json run kv --dry-run -- python3 kv.py steps=7
python3 - "$T/out" <<'PY' || fail "kv: dry run json"
import json, sys
o = {c["name"]: c for c in json.load(open(sys.argv[1]))["order"]}
assert o["mb16"]["args"] == ["per_device_batch_size=16"], o["mb16"]
assert o["mb16"]["place"] == "known-good" and o["mb128"]["place"] == "known-bad", o
assert len({c["signature"] for c in o.values()}) == 3
PY
ok "kv: dry run json: args per candidate, three signatures"
# without a command, the job is the latest run's, less its candidate's args
run "$XL" --json calib order kv
expect_rc 0 "kv: order without a command"
python3 - "$T/out" <<'PY' || fail "kv: order from the latest run: $(cat "$T/out")"
import json, sys
o = {c["name"]: c["place"] for c in json.load(open(sys.argv[1]))["order"]}
assert o == {"mb16": "known-good", "mb64": "known-bad", "mb128": "known-bad"}, o
PY
ok "kv: calib order without a command takes the command alone from the latest run"

# argparse: the candidate's own --steps is masked too; its --batch-size is signed
rm -f "$ARGV_LOG"
run "$XL" run ap -- python3 ap.py --steps 100
expect_rc 0 "ap: ends ok"
expect_err "attempt 1/2: oom (python-memoryerror" "ap: bs128 runs out of memory"
expect_out "batch 8 steps 3 allocated 128 MiB" "ap: argparse read the candidate's options, its --steps last"
expect_eq "$(argv_lines)" "--steps 100 --batch-size 128|--steps 100 --batch-size 8 --steps 3" \
	"ap: each attempt got its own candidate's args"
m=$(manifests | tail -1)
python3 - "$m" <<'PY' || fail "ap: signature argv"
import json, sys
p = json.load(open(sys.argv[1]))["signature"]["parts"]
assert p["argv"] == ["python", "ap.py", "--steps", "*", "--batch-size", "8", "--steps", "*"], p["argv"]
PY
ok "ap: inert_args masks --steps from the command and from the candidate's args alike"
run "$XL" --json calib order ap -- python3 ap.py --steps 9
python3 - "$T/out" <<'PY' || fail "ap: order at another step count: $(cat "$T/out")"
import json, sys
o = {c["name"]: c["place"] for c in json.load(open(sys.argv[1]))["order"]}
assert o == {"bs8": "known-good", "bs128": "known-bad"}, o
PY
ok "ap: another step count keeps the history"

# profile show, env, exec
run "$XL" profile show kv -c mb64 --explain
expect_rc 0 "show -c mb64"
expect_out "args:        'per_device_batch_size=64'    # $P/kv.yaml:7" "show --explain: the args and where they were set"
expect_out "appended to the command after its own arguments" "show --explain: what they do"
run "$XL" profile show kv
expect_no_out "args:" "show without a candidate: no args"
run "$XL" env ap -c bs8
expect_out "# candidate bs8 appends to the command: '--batch-size' '8' '--steps' '3'" "env: a comment names the args"
run "$XL" --json profile show ap -c bs8
expect_eq "$(jget "$T/out" args.2)" "--steps" "show --json: args"
rm -f "$ARGV_LOG"
run "$XL" exec ap -c bs8 -- python3 ap.py
expect_rc 0 "exec -c bs8"
expect_eq "$(argv_lines)" "--batch-size 8 --steps 3" "exec: the candidate's args appended"

# args must be a list of strings, with the position of what is not
printf 'candidates:\n  - name: a\n    args: --batch-size 8\n' >"$P/bad1.yaml"
printf 'candidates:\n  - name: a\n    args: {batch_size: 8}\n' >"$P/bad2.yaml"
printf 'candidates:\n  - name: a\n    args: [--batch-size, [8]]\n' >"$P/bad3.yaml"
run "$XL" run bad1 -- true
expect_rc 65 "args as a scalar"
expect_err "bad1.yaml:3:11: candidate args must be a list of strings" "scalar: the position"
run "$XL" profile check bad2
expect_rc 65 "args as a mapping"
expect_err "bad2.yaml:3:11: candidate args must be a list of strings (args: [--batch-size, \"8\"]), not a mapping" "mapping: the position"
run "$XL" run bad3 --dry-run
expect_rc 65 "an arg that is a list"
expect_err "bad3.yaml:3:26: candidate args: item 2 must be a string, not a list" "nested: the item's position"
done_ok
