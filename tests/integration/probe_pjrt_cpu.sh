# probe_pjrt_cpu.sh - a real PJRT plugin all the way to verified: XLA's CPU
# plugin from PyPI (tools/venv.sh pjrt), found in the environment's
# site-packages, compiles the StableHLO kernel for the working set the
# host's shape calls for (four times the last-level cache, 64 MiB at least,
# 1 GiB where the cache is unknown, a quarter of the available memory at
# most; the plugin gives no device memory: it says why), runs it, checks it
# and times executions queued back to back.  The expectation is worked out
# by tests/integration/host_llc.py from the same host files the probe reads,
# on this host and on three hosts it stands for through XLAUNCH_HOST_ROOT
# (an 8 MiB cache, a 64 MiB one, none described), so every branch of the
# rule runs whatever the host.
. "$(dirname "$0")/lib.sh"
cd "$SRC"
venv=$(tools/venv.sh pjrt 2>"$T/venv.err") || { cat "$T/venv.err"; skip "$(grep SKIP "$T/venv.err" | tail -1 | sed 's/^SKIP: //')"; }
export VIRTUAL_ENV="$SRC/$venv"
# --timeout $PROBE_LIMIT (lib.sh) guards against a hang only (the backend
# took 2 to 6 s here with a load average of 7).  The figure's check compares
# two times of one probe; a probe whose times disagree is run again, three rounds at most,
# as the host may be shared.
# probe_shape NAME [LLC]: the probe on this host (no LLC) or on a host
# root with an LLC-byte last-level cache (0: none described)
probe_shape() {
	name=$1
	if [ $# -gt 1 ]; then
		rm -rf "$T/host" && python3 "$SRC/tests/integration/host_llc.py" --make "$T/host" "$2"
		export XLAUNCH_HOST_ROOT="$T/host"
	else
		unset XLAUNCH_HOST_ROOT
	fi
	expect=$(python3 "$SRC/tests/integration/host_llc.py" --rule)
	round=0
	while :; do
		round=$((round + 1))
		run "$XL" probe --backend pjrt --json --no-record --timeout $PROBE_LIMIT
		expect_rc 0 "a real plugin is alive"
		set +e
		python3 - "$T/out" "$expect" <<-'PY'
	import json, sys
	ws, rule = sys.argv[2].split("\t")
	ws = int(ws)
	d = json.load(open(sys.argv[1]))
	b = [x for x in d["backends"] if x["name"].startswith("pjrt:")]
	assert len(b) == 1, d
	b = b[0]
	assert b["state"] == "alive" and b["stage"] == "verified", b
	assert b["version"].startswith("PJRT C API 0."), b["version"]
	assert b["devices"] and all(dv["kind"] == "cpu" for dv in b["devices"]), b["devices"]
	assert b["bandwidth_gbs"] and b["bandwidth_gbs"] > 0, b
	assert b["details"]["path"].endswith("pjrt_c_api_cpu_plugin.so"), b["details"]
	for dv in b["devices"]:
	    # the CPU plugin keeps no allocator statistics: unknown, in its words
	    assert dv["memory_bytes"] is None, dv
	    assert dv["memory_unknown"].startswith("PJRT_Device_MemoryStats: "), dv
	det = b["details"]
	assert det["platform"] == "cpu" and det["measured_device"] == 0, det
	# the rule this host's shape calls for, rounded up to whole 12-byte elements
	assert det["working_set_rule"] == rule, (det["working_set_rule"], rule)
	assert ws <= det["working_set_bytes"] < ws + 12, (det["working_set_bytes"], ws)
	q = det["executions_queued"]
	assert 1 <= len(q) <= 2 and all(k >= 3 for k in q), q
	# queued executions, the transfers outside: no slower per execution than
	# the first one alone (which the figure leaves out).  With both cores of this
	# 2-core host busy beside the probe (load average 7) the ratio was 0.9 to 1.1
	# in three runs of four and 1.6 in the fourth (three executions timed in a
	# batch): 2 is the margin for that
	per = det["working_set_bytes"] / (b["bandwidth_gbs"] * 1e9)
	if per > 2 * det["first_execution_s"]:
	    print("per execution queued %.4f s, first alone %.4f s" % (per, det["first_execution_s"]))
	    sys.exit(3)
	PY
		prc=$?
		set -e
		[ $prc -eq 0 ] && break
		[ $prc -eq 3 ] && [ $round -lt 3 ] && continue
		fail "probe document ($name, round $round)"
	done
	ok "pjrt: verified with the StableHLO kernel ($name: ${expect#*	})"
}
probe_shape "this host"
probe_shape "an 8 MiB last-level cache" $((8 << 20))
probe_shape "a 64 MiB last-level cache" $((64 << 20))
probe_shape "no cache described" 0
unset XLAUNCH_HOST_ROOT
plugin=$(python3 -c 'import json,sys; print([x for x in json.load(open(sys.argv[1]))["backends"] if x["name"].startswith("pjrt:")][0]["details"]["path"])' "$T/out")
run "$XL" probe --backend "pjrt:$plugin" --no-record --timeout $PROBE_LIMIT
expect_rc 0 "pjrt:PATH"
expect_out "verified" "table says verified"
grep -Eq "[0-9]+ x cpu \(memory unknown\)" "$T/out" || { cat "$T/out"; fail "equal devices not on one line, or the unknown memory not said"; }
ok "equal devices on one line, memory unknown said"
run "$XL" bundle show --json
expect_rc 0 "bundle show in the plugin's environment"
python3 - "$T/out" <<'PY' || fail "bundle show lists the plugin's API version"
import json, sys
d = json.load(open(sys.argv[1]))
plugins = d.get("pjrt_plugins") or []
assert any(str(p.get("api_version", "")).startswith("0.") for p in plugins), plugins
PY
ok "bundle show reads the plugin's PJRT API version"
done_ok
