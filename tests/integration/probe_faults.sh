# probe_faults.sh - faults injected through fake libcuda.so.1 and fake PJRT
# plugins built here are each reported for what they are, within the limit,
# and no process is left behind.
. "$(dirname "$0")/lib.sh"
CC=${CC:-cc}
command -v "$CC" >/dev/null || skip "no C compiler ($CC) to build the fakes"

build_cuda() {  # build_cuda NAME DEFINE
	mkdir -p "$T/$1"
	$CC -shared -fPIC -O1 -o "$T/$1/libcuda.so.1" "$SRC/tests/fakes/fake_libcuda.c" "-D$2" ||
		fail "cannot build fake libcuda ($2)"
}
build_pjrt() {  # build_pjrt NAME DEFINE
	$CC -shared -fPIC -O1 -I"$SRC" -o "$T/fake_pjrt_$1.so" "$SRC/tests/fakes/fake_pjrt.c" "-D$2" ||
		fail "cannot build fake PJRT plugin ($2)"
}
# no_leftover DIR: no process still maps a library from DIR (a killed child
# may take a moment to be gone: waited for)
unmapped() { ! grep -l "$1" /proc/[0-9]*/maps 2>/dev/null | grep -v "/proc/self/" | grep -q .; }
no_leftover() {
	wait_until "$HANG_S" unmapped "$1" || fail "a process still has $1 loaded"
	ok "no process left behind ($1)"
}
field() {  # field EXPR: python expression on b = the first backend
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); b=d["backends"][0]; print(eval(sys.argv[2]))' "$T/out" "$1"
}

build_cuda nodev FAKE_NODEV
build_cuda hang FAKE_HANG
build_cuda crash FAKE_CRASH
build_cuda wrong FAKE_WRONG
build_pjrt hang FAKE_HANG_CREATE
build_pjrt compile FAKE_FAIL_COMPILE
build_pjrt major FAKE_API_MAJOR=99

LD_LIBRARY_PATH="$T/nodev" run "$XL" probe --backend cuda --json --no-record --timeout $PROBE_LIMIT
expect_rc 69 "no device: installed but not alive"
expect_eq "$(field 'b["state"]+"/"+b["stage"]')" "installed/installed" "no device stops at installed"
expect_out "CUDA_ERROR_NO_DEVICE" "driver's own error name"
expect_out "no CUDA-capable device is detected" "driver's own error text"
expect_out "sees no NVIDIA GPU" "explained"

# the fakes that hang never return: any end is the limit's doing, and
# `timeout` stops a probe that would wait for them (exit 124, not 69)
start=$(date +%s)
LD_LIBRARY_PATH="$T/hang" run timeout "$HANG_S" "$XL" probe --backend cuda --timeout 1s --json --no-record
secs=$(( $(date +%s) - start ))
expect_rc 69 "hang"
expect_eq "$(field 'b["state"]+"/"+b["stage"]')" "hung/installed" "hang in cuInit is hung at installed"
expect_out "hung at installed" "hang error text"
ok "returned at the limit (${secs}s with a 1s limit)"
no_leftover "$T/hang"

LD_LIBRARY_PATH="$T/crash" run "$XL" probe --backend cuda --json --no-record --timeout $PROBE_LIMIT
expect_rc 69 "crash"
expect_eq "$(field 'b["state"]+"/"+b["stage"]')" "crashed/installed" "crash in cuInit"
expect_out "crashed at installed (SIGSEGV)" "crash names the signal"

LD_LIBRARY_PATH="$T/wrong" XLAUNCH_DATADIR="$SRC" run "$XL" probe --backend cuda --json --no-record --timeout $PROBE_LIMIT
expect_rc 69 "wrong numbers"
expect_eq "$(field 'b["state"]+"/"+b["stage"]')" "installed/executed" "wrong numbers stop at executed"
expect_out "verification failed: element 12345" "wrong element named"
expect_eq "$(field 'b["devices"][0]["kind"]')" "fake_libcuda device" "devices listed before the failure"

start=$(date +%s)
run timeout "$HANG_S" "$XL" probe --backend "pjrt:$T/fake_pjrt_hang.so" --timeout 1s --json --no-record
secs=$(( $(date +%s) - start ))
expect_rc 69 "pjrt hang"
expect_eq "$(field 'b["state"]+"/"+b["stage"]')" "hung/installed" "hang in client create"
expect_eq "$(field 'b["version"]')" "PJRT C API 0.7" "API version read before the hang"
ok "returned at the limit (${secs}s with a 1s limit)"
no_leftover "$T/fake_pjrt_hang.so"

XLAUNCH_DATADIR="$SRC" run "$XL" probe --backend "pjrt:$T/fake_pjrt_compile.so" --json --no-record --timeout $PROBE_LIMIT
expect_rc 69 "pjrt compile failure"
expect_eq "$(field 'b["state"]+"/"+b["stage"]')" "installed/devices" "compile failure stops at devices"
expect_out "PJRT_Client_Compile: fake_pjrt: compilation refused" "plugin's own message"
expect_eq "$(field 'b["devices"][0]["memory_bytes"]')" "1073741824" "memory from PJRT_Device_MemoryStats"
expect_eq "$(field 'b["devices"][0]["memory_source"]')" "PJRT_Device_MemoryStats bytes_limit" "memory source named"

# a GPU plugin older than the allocator options the probe gives: the client
# is made again with the platform allocator, and the refusal is kept
build_pjrt gpu_options FAKE_REFUSE_OPTIONS
XLAUNCH_DATADIR="$SRC" run "$XL" probe --backend "pjrt:$T/fake_pjrt_gpu_options.so" --json --no-record --timeout $PROBE_LIMIT
expect_rc 69 "pjrt options refused, then compile failure"
expect_eq "$(field 'b["state"]+"/"+b["stage"]')" "installed/devices" "client made the second time"
expect_eq "$(field 'b["details"]["allocator"]')" "platform" "platform allocator after the refusal"
expect_eq "$(field 'b["details"]["client_options_refused"]')" "fake_pjrt: unknown option memory_fraction (injected fault)" "refusal recorded"

run "$XL" probe --backend "pjrt:$T/fake_pjrt_major.so" --json --no-record --timeout $PROBE_LIMIT
expect_rc 69 "unsupported API major"
expect_eq "$(field 'b["state"]+"/"+b["stage"]')" "installed/installed" "unsupported major is installed"
expect_out "speaks PJRT C API 99.7; this xlaunch supports major version 0 only" "unsupported major named"

run "$XL" probe --backend "pjrt:$T/nonexistent.so" --json --no-record --timeout $PROBE_LIMIT
expect_rc 0 "a missing plugin is absent"
expect_eq "$(field 'b["state"]')" "absent" "missing plugin absent"

# several at once: one document, every backend reported
LD_LIBRARY_PATH="$T/nodev" run "$XL" probe --backend cpu,cuda,"pjrt:$T/fake_pjrt_major.so" --json --no-record --timeout $PROBE_LIMIT
python3 -m json.tool "$T/out" >/dev/null || fail "not valid JSON"
expect_eq "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["backends"]))' "$T/out")" "3" "three backends"
done_ok
