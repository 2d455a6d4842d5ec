# calib_show.sh - `xlaunch calib show RUN|last`: one attempt from the
# store's row and its run directory's manifest (the outcome and its reason,
# why the candidate, memory figures with kind and source, the compile table
# with causes, the storm verdict, the ranks of its job, the run directory),
# as text and JSON; a run id prefix, `last`, an ambiguous prefix (64), an
# unknown run (66), and a run kept only in its run directory (--no-record).
# On an SQLite file; calib_show_pg.sh runs the same on PostgreSQL
# (STORE_BACKEND=postgresql), where the run id prefix is a range of the
# primary key too.
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P" XLAUNCH_STORE="$T/store/calib.db"
if [ "${STORE_BACKEND:-sqlite}" = postgresql ]; then
	pg_setup
	XLAUNCH_STORE=$(pg_store show)
fi
printf 'description: nothing set\nenv: {PLAIN: yes}\n' >"$P/plain.yaml"
jget() { python3 -c 'import json,sys; v=json.load(sys.stdin)
for k in sys.argv[1].split("."): v=v[k] if not k.isdigit() else v[int(k)]
print(v)' "$1"; }
LINE='Finished XLA compilation of jit(step) in 0.01 sec'

run "$XL" calib show last
expect_rc 66 "nothing recorded yet"
expect_err "no run recorded in" "says where it looked"

# a storm: compilations of one function arriving until the end
run "$XL" run plain -- sh -c 'for i in $(seq 20); do sleep 0.1; echo "$1" >&2; done' sh "$LINE"
expect_rc 0 "a storm exits 0"
storm_id=$(grep -o ' run [0-9]\{8\}T[^ ]*' "$T/err" | tail -1 | sed 's/^ run //')
[ -n "$storm_id" ] || fail "no run announced"
run "$XL" calib show last
expect_rc 0 "last"
expect_out "run $storm_id" "the newest attempt"
expect_out "outcome: compile-storm, exit status 0" "the outcome"
expect_out "  reason: jit(step) recompiled " "and its reason"
expect_out "storm: yes, judged by time (arrival): jit(step) recompiled " "the storm verdict"
grep -qE '^  jit\(step\) +jax +20 +0 +[0-9]+ +0\.2 +- +JAX says why with JAX_EXPLAIN_CACHE_MISSES=1$' "$T/out" ||
	{ cat "$T/out"; fail "the compile table: function, runtime, compiles, loads, after warm-up, seconds, XLA bytes (none: no dump), cause"; }
ok "the compile table with its cause"
expect_out "observed  host_peak_rss" "memory figures by kind"
grep -qE '^  observed +host_peak_rss +[0-9.]+ [KMG]?i?B +- +[a-z(].+' "$T/out" ||
	{ cat "$T/out"; fail "a figure without its source"; }
ok "with their source"
expect_out "job: none (a launch of one process)" "no job"
expect_out "run directory: $XDG_STATE_HOME/xlaunch/runs/$storm_id" "the run directory"
expect_out "candidate: -, only: the profile has no candidates" "why this candidate"

run "$XL" calib show --json "$(echo "$storm_id" | cut -c1-22)"
expect_rc 0 "a prefix of the id, as JSON"
expect_eq "$(jget id <"$T/out")" "$storm_id" "the run the prefix names"
expect_eq "$(jget storm.storm <"$T/out")" True "the verdict"
expect_eq "$(jget storm.rule <"$T/out")" arrival "its rule"
expect_eq "$(jget compile.functions.0.name <"$T/out")" "jit(step)" "the compile object"
expect_eq "$(jget recorded <"$T/out")" True "in the store"
expect_eq "$(jget choice.place <"$T/out")" only "the choice"
expect_eq "$(jget ranks <"$T/out")" None "no job"

# a second run: a prefix both share is ambiguous; one not recorded is
# still shown from its run directory
run "$XL" run --no-record plain -- sh -c 'echo hello'
expect_rc 0 "a run not recorded"
plain_id=$(grep -o ' run [0-9]\{8\}T[^ ]*' "$T/err" | tail -1 | sed 's/^ run //')
run "$XL" calib show "$plain_id"
expect_rc 0 "found in its run directory"
expect_out "(not in the store)" "says it is not recorded"
expect_out "outcome: ok, exit status 0" "the manifest's outcome"
run "$XL" calib show 20
expect_rc 64 "an ambiguous prefix"
expect_err "is ambiguous" "says so"
run "$XL" calib show 19990101T
expect_rc 66 "no such run"
run "$XL" calib show ../x
expect_rc 64 "not an id"

# the ranks of a job, from the store alone (no run directory here)
sig=$(printf '%064d' 7)
printf '%s\n' \
 '{"type":"attempt","id":"J-r0","time":1700000000,"profile":"p","signature":"'$sig'","host":"h1","rank":0,"outcome":"oom","exit_status":1,"job_id":"job7"}' \
 '{"type":"attempt","id":"J-r1","time":1700000001,"profile":"p","signature":"'$sig'","host":"h2","rank":1,"outcome":"peer-failed","exit_status":143,"job_id":"job7"}' \
	>"$T/job.jsonl"
run "$XL" calib import "$T/job.jsonl"
expect_rc 0 "a job's ranks imported"
run "$XL" calib show J-r0
expect_rc 0 "a rank of a job"
expect_out "job job7: 2 rank attempts recorded" "the job"
grep -qE '^  1 +h2 +peer-failed +143 +J-r1$' "$T/out" || { cat "$T/out"; fail "the other rank"; }
ok "the other rank's outcome"
expect_out "run directory: none on this host" "no run directory"
run "$XL" calib show --json J-r1
expect_eq "$(jget ranks.1.rank <"$T/out")" 0 "ranks in JSON"
done_ok
