# check_deps.sh - tools/check-deps.sh passes on the tree and fails, naming
# the file, the line and the rule, on each kind of include that points the
# wrong way.
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
inject calib/order.c '#include "launcher/launcher.h"'
expect_rc 1 "calib -> launcher refused"
expect_out "check-deps: calib/order.c:" "file and line named"
expect_out "calib may not depend on launcher" "rule named"
inject common/str.c '#include "probe/probe.h"'
expect_rc 1 "common -> probe refused"
inject probe/probe_run.c '#include "bundle/bundle.h"'
expect_rc 1 "probe -> bundle refused"
inject bundle/pyenv.c '#include "probe/probe.h"'
expect_rc 1 "bundle -> probe outside bundle/bundle.c refused"
expect_out "only bundle/bundle.c reads from the probe" "the exception named"
inject launcher/cmd-calib.c '#include "calib/backend.h"'
expect_rc 1 "a private header of another module refused"
expect_out "private to calib/ (use calib/calib.h)" "the public header named"
inject launcher/cmd-run.c '#include <sqlite3.h>'
expect_rc 1 "SQL outside the store backend refused"
inject launcher/cmd-run.c '#include <libpq-fe.h>'
expect_rc 1 "libpq outside the PostgreSQL backend refused"
inject calib/store.c '#include <libpq-fe.h>'
expect_rc 1 "libpq in another file of calib refused"
expect_out "SQL lives in calib/postgres.c" "the rule named"
inject launcher/cmd-env.c '#include <getopt.h>'
expect_rc 1 "a hand-written option loop refused"
inject calib/order.c '#include "tests/fuzz/targets.h"'
expect_rc 1 "modules do not include tests"
# what is allowed stays allowed
inject launcher/cmd-env.c '#include "bundle/bundle.h"'
expect_rc 0 "launcher -> bundle allowed"
inject bundle/bundle.c '#include "probe/probe.h"'
expect_rc 0 "bundle/bundle.c -> probe allowed"
done_ok
