# valgrind.sh - the common commands under valgrind's memcheck: no invalid
# reads or writes, no uninitialised use, no definite leaks.
. "$(dirname "$0")/lib.sh"
command -v valgrind >/dev/null || skip "valgrind is not installed"
case "$XL" in */build/san/*) skip "the sanitizer build cannot run under valgrind (it has ASan)" ;; esac
export XLAUNCH_STORE="$T/calib.db" XLAUNCH_PROFILE_PATH="$SRC/profiles"
vg() {
	run valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
		--show-leak-kinds=definite --trace-children=no "$XL" "$@"
	[ "$rc" -ne 99 ] || { cat "$T/err"; fail "valgrind: xlaunch $*"; }
	! grep -q "==[0-9]*== " "$T/err" || { cat "$T/err"; fail "valgrind report: xlaunch $*"; }
	ok "valgrind clean: xlaunch $*"
}
vg env cpu-jax --format json
vg profile show tpu-v6e-spmd --explain
vg profile check
vg flags lint --var LIBTPU_INIT_ARGS "--xla_tpu_enable_async_collective_fusion=true --xla_tpu_enable_async_collective_fusion=false TPU_MEGACORE=MEGACORE_DENSE"
vg flags lint --release jaxlib==0.4.35 -- --xla_gpu_enable_command_buffer=DYNAMIC_SLICE --xla_gpu_graph_level=1 --xla_gpu_enable_pdl_launch=1
vg flags explain --release jaxlib==0.10.2 xla_gpu_graph_level
vg --json flags explain --release jaxlib==0.12.0.1 xla_gpu_enable_command_buffer
vg bundle compare 1.0rc1 1.0.post1
vg bundle match ">=2.9,<3" 2.9.0a0+git21fec65 2.9.1
vg run cpu-jax -- true
vg calib history --json
vg calib order cpu-jax
# a PostgreSQL store (libpq loaded at run time), when the runner has a server
if [ -n "${XLAUNCH_TEST_PG:-}" ]; then
	pg_setup
	PGS=$(pg_store vg_store)
	vg --store "$PGS" run cpu-jax -- true
	vg --store "$PGS" calib history --json
	vg --store "$PGS" calib order cpu-jax
	vg --store "postgresql://nobody:pw@/nodb?host=$T/nosocket" calib history
	expect_rc 73 "an unreachable server under valgrind"
fi
# the cpu probe's triad steps over four times the last-level cache: slow
# under memcheck, so a generous limit, and it must finish (not be killed)
vg probe --backend cpu --timeout $PROBE_LIMIT
expect_rc 0 "the cpu probe finishes under valgrind"
done_ok
