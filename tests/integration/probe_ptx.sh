# probe_ptx.sh - the CUDA probe's PTX kernel assembles, for the targets the
# probe writes into it, with the toolkit's own assembler.  No GPU is needed;
# the driver's JIT reads the same PTX at run time.
. "$(dirname "$0")/lib.sh"
PTXAS=$(command -v ptxas || ls /usr/local/cuda/bin/ptxas 2>/dev/null || true)
[ -n "$PTXAS" ] || skip "ptxas (the CUDA toolkit) is not installed"
K="$SRC/kernels/cuda/triad.ptx"
grep -q '^\.target TARGET$' "$K" || fail "the kernel no longer has the TARGET placeholder the probe fills in"
for target in sm_50 sm_75; do
	sed "s/^\.target TARGET$/.target $target/" "$K" >"$T/k_$target.ptx"
	# assemble for the target itself when this ptxas still knows it, and for
	# the newest architectures the JIT will compile it for
	for arch in $target sm_80 sm_90; do
		if ! "$PTXAS" --help 2>/dev/null | grep -q "$arch" && [ "$arch" = sm_50 ]; then
			continue
		fi
		if "$PTXAS" -arch="$arch" "$T/k_$target.ptx" -o "$T/k_${target}_$arch.cubin" 2>"$T/err"; then
			ok "PTX .target $target assembles for $arch"
		elif grep -q "is not defined for option" "$T/err"; then
			echo "note: this ptxas no longer targets $arch"
		else
			cat "$T/err"; fail "PTX .target $target does not assemble for $arch"
		fi
	done
done
[ "$nchecks" -ge 3 ] || fail "too few architectures checked ($nchecks)"
done_ok
