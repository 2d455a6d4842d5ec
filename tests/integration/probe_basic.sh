# probe_basic.sh - cpu and opencl (PoCL, where installed) reach verified,
# cuda is absent where no libcuda.so.1 loads, --json is one valid document,
# exit codes, usage errors.
. "$(dirname "$0")/lib.sh"

run "$XL" probe --help
expect_rc 0 "probe --help"
expect_out "--backend LIST" "help names --backend"

run "$XL" probe --backend cdua
expect_rc 64 "unknown backend"
expect_err "xlaunch probe: option '--backend': 'cdua' is not a list of cpu, opencl" "unknown backend named"
run "$XL" probe --timeout never
expect_rc 64 "bad timeout"
expect_err "option '--timeout': 'never' is not a duration above 0 and up to 1h" "bad timeout named"
expect_err "usage: xlaunch probe" "usage follows"

run "$XL" probe --backend cpu --json --no-record --timeout $PROBE_LIMIT
expect_rc 0 "cpu alone is alive"
python3 -m json.tool "$T/out" >/dev/null || fail "probe --json is not valid JSON"
ok "valid JSON"
state=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); b=d["backends"][0]
assert set(d) == {"host", "backends"}, d.keys()
for k in ("name","state","stage","error","version","devices","bandwidth_gbs","gflops","elapsed_s"):
    assert k in b, k
assert b["bandwidth_gbs"] > 0 and b["gflops"] > 0
assert b["devices"][0]["memory_bytes"] > 0 and b["devices"][0]["kind"]
print(b["name"], b["state"], b["stage"])' "$T/out") || fail "cpu JSON fields"
expect_eq "$state" "cpu alive verified" "cpu verified with figures"

# opencl: verified where PoCL is installed (its ICD file), otherwise not
# shown; cuda: absent unless this host has a libcuda.so.1 the loader finds
if [ -e /etc/OpenCL/vendors/pocl.icd ]; then
	backends=opencl,cuda want="opencl=alive/verified cuda=absent/absent"
else
	echo "SKIP part: PoCL is not installed (no /etc/OpenCL/vendors/pocl.icd; tools/deps.sh installs it): opencl not checked"
	backends=cuda want="cuda=absent/absent"
fi
run "$XL" probe --backend $backends --json --no-record --timeout $PROBE_LIMIT
python3 -m json.tool "$T/out" >/dev/null || fail "probe --json is not valid JSON"
got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(" ".join(b["name"]+"="+b["state"]+"/"+b["stage"] for b in d["backends"]))' "$T/out")
if python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
	echo "SKIP part: this host has a libcuda.so.1 the loader finds: cuda absent not checked"
	[ "$backends" = cuda ] || expect_eq "${got%% *}" "opencl=alive/verified" "opencl verified on PoCL"
else
	expect_eq "$got" "$want" "cuda absent (opencl verified where PoCL is)"
	expect_rc 0 "absent backends do not fail the probe"
	grep -q "libcuda.so.1: cannot open shared object file" "$T/out" || fail "cuda absent without the loader's words"
	ok "cuda absent with dlopen's reason"
fi

# the human table: one line per backend
run "$XL" probe --backend cpu,cuda --no-record --timeout $PROBE_LIMIT
expect_out "BACKEND" "table header"
expect_out "verified" "table shows the stage"
[ "$(grep -c '^cpu ' "$T/out")" -eq 1 ] || fail "one line for cpu"
ok "one line per backend"
done_ok
