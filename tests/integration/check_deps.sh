# check_deps.sh - tools/check-deps.sh passes on the tree and fails, naming
# the file, the line and the rule, on each kind of include that points the
# wrong way between modules and rooms, and on a function that is too long.
. "$(dirname "$0")/lib.sh"
cd "$SRC"
run tools/check-deps.sh .
expect_rc 0 "the tree's includes point the right way"

# one wrong include at a time, in a copy of the modules
inject() {  # inject FILE LINE: a copy with LINE appended to FILE
	rm -rf "$T/tree"
	mkdir "$T/tree"
	cp -R common calib probe bundle launcher kernels "$T/tree/"
	printf '%s\n' "$2" >>"$T/tree/$1"
	run tools/check-deps.sh "$T/tree"
}
inject calib/order.c '#include "launcher/run/run.h"'
expect_rc 1 "calib -> launcher/run refused"
expect_out "check-deps: calib/order.c:" "file and line named"
expect_out "calib may not depend on launcher/run" "rule named"
# the rooms of launcher/
inject launcher/report/report.c '#include "launcher/run/run.h"'
expect_rc 1 "report -> run refused: the report reads the store only"
expect_out "launcher/report may not depend on launcher/run" "the room's rule named"
inject launcher/flags/lint.c '#include "launcher/profile/profile.h"'
expect_rc 1 "flags -> profile refused"
inject launcher/profile/resolve.c '#include "launcher/run/run.h"'
expect_rc 1 "profile -> run refused"
inject launcher/cmd-profile.c '#include "launcher/profile/layer.h"'
expect_rc 1 "a room's back room refused to a command"
expect_out "private to launcher/profile/ (use launcher/profile/profile.h)" "the front door named"
# the compile watch builds on common/ alone, and is entered by its front door
inject launcher/watch/watch.c '#include "launcher/run/run.h"'
expect_rc 1 "watch -> run refused"
expect_out "check-deps: launcher/watch/watch.c:" "the watch's file named"
expect_out "launcher/watch may not depend on launcher/run" "the watch's rule named"
inject launcher/watch/verdict.c '#include "launcher/profile/profile.h"'
expect_rc 1 "watch -> profile refused"
inject launcher/watch/dump.c '#include "calib/calib.h"'
expect_rc 1 "watch -> calib refused"
inject launcher/run/attempt.c '#include "launcher/watch/dump.h"'
expect_rc 1 "the watch's back room refused to run"
expect_out "private to launcher/watch/ (use launcher/watch/watch.h)" "the watch's front door named"
# the watch's own unit tests build on the watch and common/ alone
rm -rf "$T/tree"; mkdir -p "$T/tree/tests/unit"
cp -R common calib probe bundle launcher kernels "$T/tree/"
cp tests/unit/test_watch_*.c "$T/tree/tests/unit/"
run tools/check-deps.sh "$T/tree"
expect_rc 0 "the watch's unit tests include the watch and common/ only"
printf '%s\n' '#include "launcher/run/outcome.h"' >>"$T/tree/tests/unit/test_watch_storm.c"
run tools/check-deps.sh "$T/tree"
expect_rc 1 "a watch unit test that includes the run room refused"
expect_out "check-deps: tests/unit/test_watch_storm.c:" "the test named"
expect_out "the watch's unit tests build on launcher/watch/ and common/ alone" "the rule named"
inject launcher/report/report.c '#include "launcher/watch/watch.h"'
expect_rc 1 "report -> watch refused"
inject launcher/profile/resolve.c '#include "launcher/watch/watch.h"'
expect_rc 1 "profile -> watch refused"
inject launcher/plan/plan.c '#include "launcher/flags/xlareader.h"'
expect_rc 1 "another room's back room refused"
inject launcher/plan/plan.c '#include "launcher/cmd-run.c"'
expect_rc 1 "including a command refused"
expect_out "nothing includes a command" "the rule named"
# the plan room: below run, above profile and flags, entered by plan.h
inject launcher/plan/plan.c '#include "launcher/run/run.h"'
expect_rc 1 "plan -> run refused"
expect_out "launcher/plan may not depend on launcher/run" "the plan's rule named"
inject launcher/plan/job.c '#include "launcher/watch/watch.h"'
expect_rc 1 "plan -> watch refused"
inject launcher/run/launch.c '#include "launcher/plan/job.h"'
expect_rc 1 "the plan's back room refused to run"
expect_out "private to launcher/plan/ (use launcher/plan/plan.h)" "the plan's front door named"
inject launcher/cmd-calib.c '#include "launcher/run/run.h"'
expect_rc 1 "the calib commands plan without the run room"
expect_out "launcher/cmd-calib.c:" "the command named"
inject launcher/profile/resolve.c '#include "launcher/plan/plan.h"'
expect_rc 1 "profile -> plan refused"
inject common/str.c '#include "probe/probe.h"'
expect_rc 1 "common -> probe refused"
inject probe/probe_run.c '#include "bundle/bundle.h"'
expect_rc 1 "probe -> bundle refused"
inject bundle/pyenv.c '#include "probe/probe.h"'
expect_rc 1 "bundle -> probe outside bundle/bundle.c refused"
expect_out "only bundle/bundle.c reads from the probe" "the exception named"
inject launcher/cmd-calib.c '#include "calib/store.h"'
expect_rc 1 "a private header of another module refused"
expect_out "private to calib/ (use calib/calib.h)" "the public header named"
inject calib/postgres.c '#include "calib/store.h"'
expect_rc 1 "the store's internals in a driver refused"
expect_out "a store driver includes calib/driver.h only" "the driver contract named"
inject launcher/cmd-run.c '#include <sqlite3.h>'
expect_rc 1 "SQL outside the store backend refused"
inject launcher/cmd-run.c '#include <libpq-fe.h>'
expect_rc 1 "libpq outside the PostgreSQL backend refused"
inject calib/store.c '#include <libpq-fe.h>'
expect_rc 1 "libpq in another file of calib refused"
expect_out "the PostgreSQL driver is calib/postgres.c" "the rule named"
inject launcher/cmd-env.c '#include <getopt.h>'
expect_rc 1 "a hand-written option loop refused"
inject calib/order.c '#include "tests/fuzz/targets.h"'
expect_rc 1 "modules do not include tests"
# what is allowed stays allowed
inject launcher/cmd-env.c '#include "bundle/bundle.h"'
expect_rc 0 "launcher -> bundle allowed"
inject bundle/bundle.c '#include "probe/probe.h"'
expect_rc 0 "bundle/bundle.c -> probe allowed"
inject launcher/run/launch.c '#include "launcher/profile/profile.h"'
expect_rc 0 "run -> profile allowed"
inject launcher/run/launch.c '#include "launcher/plan/plan.h"'
expect_rc 0 "run -> plan allowed"
inject launcher/plan/plan.c '#include "launcher/profile/profile.h"'
expect_rc 0 "plan -> profile allowed"
inject launcher/cmd-calib.c '#include "launcher/plan/plan.h"'
expect_rc 0 "a calib command -> plan allowed"
inject launcher/profile/resolve.c '#include "launcher/flags/flags.h"'
expect_rc 0 "profile -> flags allowed"
inject launcher/run/launch.c '#include "launcher/watch/watch.h"'
expect_rc 0 "run -> watch allowed"
inject launcher/watch/inductor.c '#include "common/common.h"'
expect_rc 0 "watch -> common allowed"
inject launcher/cmd-run.c '#include "launcher/watch/watch.h"'
expect_rc 0 "a command -> watch allowed"

# a function longer than 150 lines
{
	printf 'int too_long(void)\n{\n\tint x = 0;\n'
	i=0
	while [ $i -lt 160 ]; do printf '\tx++;\n'; i=$((i + 1)); done
	printf '\treturn x;\n}\n'
} >"$T/long.c"
rm -rf "$T/tree"; mkdir "$T/tree"
cp -R common calib probe bundle launcher kernels "$T/tree/"
cp "$T/long.c" "$T/tree/calib/long.c"
run tools/check-deps.sh "$T/tree"
expect_rc 1 "a function of 164 lines refused"
expect_out "check-funcs: calib/long.c:2: too_long() is 164 lines long (at most 150" "the function and its length named"
MAX_FUNC_LINES=200 run tools/check-deps.sh "$T/tree"
expect_rc 0 "MAX_FUNC_LINES raises the bound"
# the same with its body opened on the signature's line
sed -e 's/^int too_long(void)$/int too_long(void) {/' -e '/^{$/d' "$T/long.c" >"$T/tree/calib/long.c"
run tools/check-deps.sh "$T/tree"
expect_rc 1 "a body opened on the signature's line is measured too"
expect_out "check-funcs: calib/long.c:1: too_long() is 164 lines long" "that function named"

# two files of one folder that call each other
rm -rf "$T/tree"; mkdir "$T/tree"
cp -R common calib probe bundle launcher kernels "$T/tree/"
printf 'void xl_circle_back(void);\nvoid xl_circle_there(void)\n{\n\txl_circle_back();\n}\n' >"$T/tree/calib/there.c"
printf 'void xl_circle_there(void);\nvoid xl_circle_back(void)\n{\n\txl_circle_there();\n}\n' >"$T/tree/calib/back.c"
run tools/check-deps.sh "$T/tree"
expect_rc 1 "two files that call each other refused"
expect_out "check-circles: calib/back.c and calib/there.c call each other" "the pair named"
done_ok
