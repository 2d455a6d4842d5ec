#!/bin/sh
# bundle_driver.sh - the NVIDIA driver version from both kernel module
# flavours, through the binary: the proprietary and the open module's
# /proc/driver/nvidia/version (tests/data/nvidia), /sys/module/nvidia/version
# read first, all under XLAUNCH_HOST_ROOT; then the CUDA driver floor of a
# CUDA 13 runtime: driver 580 passes, 550 does not.
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
N="$SRC/tests/data/nvidia"
host_root() {  # host_root NAME PROC-FIXTURE [SYS-FIXTURE]: a root with those files
	r="$T/$1"; mkdir -p "$r/proc/driver/nvidia"
	cp "$N/$2" "$r/proc/driver/nvidia/version"
	if [ -n "${3:-}" ]; then mkdir -p "$r/sys/module/nvidia"; cp "$N/$3" "$r/sys/module/nvidia/version"; fi
	echo "$r"
}
R550=$(host_root p550 proc-version-550-proprietary)
R580=$(host_root o580 proc-version-580-open)
RSYS=$(host_root s580 proc-version-550-proprietary sys-version-580)

# a venv of the real interpreter holding a CUDA 13 runtime wheel's metadata
PY=$(python3 -c 'import sys; print(sys.executable)')
V="$T/venv"; mkdir -p "$V/bin"; ln -s "$PY" "$V/bin/python"
printf 'home = %s\ninclude-system-site-packages = false\n' "$(dirname "$PY")" >"$V/pyvenv.cfg"
SITE="$V/lib/python$("$PY" -S -c 'import sys; print("%d.%d" % sys.version_info[:2])')/site-packages"
mkdir -p "$SITE/nvidia_cuda_runtime-13.0.96.dist-info"
printf 'Metadata-Version: 2.1\nName: nvidia-cuda-runtime\nVersion: 13.0.96\n' >"$SITE/nvidia_cuda_runtime-13.0.96.dist-info/METADATA"

module() {  # module ROOT: the kernel module version bundle show reads
	XLAUNCH_HOST_ROOT="$1" run "$XL" bundle show --json --python "$V/bin/python"
	[ "$rc" -eq 0 ] || { echo "bundle show exit $rc: $(cat "$T/err")"; return; }
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cuda"]["kernel_module"])' "$T/out"
}
expect_eq "$(module "$R550")" 550.54.15 "the proprietary module's text"
expect_eq "$(module "$R580")" 580.159.04 "the open module's text (not 86 from x86_64)"
expect_eq "$(module "$RSYS")" 580.159.04 "/sys/module/nvidia/version first"
XLAUNCH_HOST_ROOT="$R580" run "$XL" bundle show --python "$V/bin/python"
expect_out "NVIDIA 580.159.04" "the human output names the driver"
expect_eq "$(module "$T/nothing")" None "no driver files: null"

XLAUNCH_HOST_ROOT="$R580" run "$XL" bundle check --python "$V/bin/python"
expect_rc 0 "CUDA 13 runtime on the open module's 580 driver"
expect_no_out "cuda-driver-floor" "no floor error with 580"
XLAUNCH_HOST_ROOT="$R550" run "$XL" bundle check --python "$V/bin/python"
expect_rc 1 "CUDA 13 runtime on driver 550"
expect_out "CUDA runtime 13.0.96 (nvidia-cuda-runtime) needs NVIDIA driver 580 or newer; the driver is 550.54.15" "the floor error names both"
XLAUNCH_HOST_ROOT="$RSYS" run "$XL" bundle check --python "$V/bin/python" --json
expect_rc 0 "the /sys version wins over an older /proc text"
done_ok
