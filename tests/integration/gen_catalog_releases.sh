#!/bin/sh
# tools/gen-catalog with --releases: a bad release list or a bad `releases`,
# `variants` or `replaced_by` in a catalog fails the build with file:line:col;
# a good pair compiles.
. "${XLAUNCH_SRC:-.}/tests/integration/lib.sh"

GEN=
for b in "$(dirname "$XL")/tools/gen-catalog" "$(dirname "$XL")/build/rel/tools/gen-catalog" \
	"$SRC/build/rel/tools/gen-catalog"; do
	[ -x "$b" ] && { GEN=$b; break; }
done
[ -n "$GEN" ] || skip "no built tools/gen-catalog (run make first)"

cat >"$T/rel.yaml" <<'EOF'
packages:
  jaxlib:
    repository: jax-ml/jax
    pinned: 0.2.0
    releases:
      - {version: 0.1.0, commit: 1111111111111111111111111111111111111111}
      - {version: 0.2.0, commit: 2222222222222222222222222222222222222222}
      - {version: 0.3.0, commit: 3333333333333333333333333333333333333333, known: false}
EOF
cat >"$T/good.yaml" <<'EOF'
family: xla
kind: flags
variables: [XLA_FLAGS]
complete: true
releases: [jaxlib]
source: {repository: openxla/xla, path: x.cc, commit: abc}
flags:
  - name: xla_a
    type: int
    releases: {jaxlib: "0.1.0-0.2.0"}
    variants:
      - {releases: {jaxlib: "0.1.0"}, type: bool}
    description: "a flag of both releases"
  - name: xla_old
    type: bool
    releases: {jaxlib: "0.1.0"}
    removed: "gone in 0.2.0"
    replaced_by: xla_a
    evidence: "a commit says so"
    description: "a flag of the first release only"
EOF
run "$GEN" "$T/out.c" --releases "$T/rel.yaml" "$T/good.yaml"
expect_rc 0 "a good catalog compiles"
# the catalog table is offsets into the pool: compile it and read it back
cat >"$T/names.c" <<'EOF'
#include "launcher/flags/flags.h"
#include "launcher/flags/knowledge.h"
#include <stdio.h>
int main(void)
{
	for (size_t i = 0; i < xl_nflagdefs; i++)
		printf("%s\n", xl_kstr(xl_kdefs[i].name));
	return 0;
}
EOF
${CC:-cc} -std=c11 -I"$SRC" $(pkg-config --cflags jansson 2>/dev/null) -o "$T/names" "$T/names.c" "$T/out.c" \
	>"$T/cc.log" 2>&1 || { cat "$T/cc.log"; fail "the generated table does not compile"; }
"$T/names" >"$T/names.txt"
[ "$(cat "$T/names.txt")" = "xla_a" ] || { cat "$T/names.txt"; fail "the catalog table is not exactly the pinned release's flag"; }
grep -q 'xla_old\\0' "$T/out.c" || fail "the knowledge pool lacks the older flag"
ok "the catalog table holds the pinned release, the knowledge every flag"

bad() {  # bad FILE EXPECTED-MESSAGE description
	run "$GEN" "$T/out.c" --releases "$T/rel.yaml" "$1"
	expect_rc 65 "$3"
	expect_err "$2" "$3: message"
}
sed 's/"0.1.0-0.2.0"/"0.1.0-0.9.9"/' "$T/good.yaml" >"$T/b1.yaml"
bad "$T/b1.yaml" "b1.yaml:10:" "a range naming no known release"
sed 's/"0.1.0-0.2.0"/"0.3.0"/' "$T/good.yaml" >"$T/b2.yaml"
bad "$T/b2.yaml" "a range that names no known releases in order" "a release outside the knowledge"
sed '/releases: {jaxlib: "0.1.0"}$/d' "$T/good.yaml" >"$T/b3.yaml"
bad "$T/b3.yaml" "'xla_old': no 'releases'" "an entry without releases"
sed 's/{releases: {jaxlib: "0.1.0"}, type: bool}/{releases: {jaxlib: "0.1.0-0.2.0"}, type: bool, colour: red}/' \
	"$T/good.yaml" >"$T/b4.yaml"
bad "$T/b4.yaml" "unknown key 'colour'" "an unknown key in a variant"
sed '/    evidence:/d' "$T/good.yaml" >"$T/b5.yaml"
bad "$T/b5.yaml" "replaced_by and evidence go together" "a successor without evidence"
sed '/name: xla_old/{n;s/type: bool/type: enum\n    values: [a, ""]/}' "$T/good.yaml" >"$T/b7.yaml"
bad "$T/b7.yaml" "a value must be a non-empty scalar" "an empty value (the string pool ends a list at one)"
sed '/name: xla_old/{n;s/type: bool/type: bool\n    tags: [observed]/}' "$T/good.yaml" >"$T/b8.yaml"
bad "$T/b8.yaml" "'xla_old': 'observed' is set by the build (releases.yaml), not in a catalog" \
	"the observed tag written in a catalog"
sed 's/releases: \[jaxlib\]/releases: [jaxlibb]/' "$T/good.yaml" >"$T/b6.yaml"
bad "$T/b6.yaml" "not a package of releases.yaml" "an unknown package"

sed 's/pinned: 0.2.0/pinned: 0.3.0/' "$T/rel.yaml" >"$T/rel2.yaml"
run "$GEN" "$T/out.c" --releases "$T/rel2.yaml" "$T/good.yaml"
expect_rc 65 "pinning a release outside the knowledge"
expect_err "'pinned' must name a release inside the knowledge" "pinned outside: message"
awk '/0.3.0/ { sub(/, known: false/, "") } { print } /0.1.0/ { sub(/0.1.0, commit: 1+/, "0.1.5, commit: 5555555555555555555555555555555555555555, known: false"); print }' \
	"$T/rel.yaml" >"$T/rel3.yaml"
run "$GEN" "$T/out.c" --releases "$T/rel3.yaml" "$T/good.yaml"
expect_rc 65 "a release outside the knowledge before one inside"
expect_err "releases inside the knowledge come before the others" "order: message"

# a release known by what its wheel registers (`observed: FILE`): the names
# of FILE set its bit, a name no catalog entry has becomes an entry without
# a type (tagged observed), a name gone from FILE is not registered there
cd "$T"
printf '# what the wheel of 0.3.0 registers\nxla_a\nxla_new\n' >"$T/obs.txt"
sed 's/, known: false}/, observed: obs.txt}/' "$T/rel.yaml" >"$T/rel4.yaml"
run "$GEN" "$T/out4.c" --releases "$T/rel4.yaml" "$T/good.yaml"
expect_rc 0 "an observed release compiles"
cat >"$T/obs.c" <<'EOF'
#include "launcher/flags/flags.h"
#include "launcher/flags/knowledge.h"
#include <stdio.h>
int main(void)
{
	for (size_t i = 0; i < xl_nkflags; i++)
		printf("%s %llx %d %d\n", xl_kstr(xl_kflags[i].name), (unsigned long long)xl_kflags[i].rel,
		       xl_kflags[i].def, !!(xl_kflags[i].tags & XL_FTAG_OBSERVED));
	for (size_t i = 0; i < xl_nkreleases; i++)
		printf("%s %d %d\n", xl_kstr(xl_kreleases[i].version), xl_kreleases[i].known, xl_kreleases[i].observed);
	return 0;
}
EOF
${CC:-cc} -std=c11 -I"$SRC" -o "$T/obs" "$T/obs.c" "$T/out4.c" >"$T/cc.log" 2>&1 ||
	{ cat "$T/cc.log"; fail "the generated table with an observed release does not compile"; }
"$T/obs" >"$T/obs.out"
expect_eq "$(tr '\n' ';' <"$T/obs.out")" \
	"xla_a 7 0 0;xla_new 4 -1 1;xla_old 1 -1 0;0.1.0 1 0;0.2.0 1 0;0.3.0 1 1;" \
	"bits, entries and releases of an observed release"
printf 'xla_a\nnot a name\n' >"$T/obs.txt"
run "$GEN" "$T/out4.c" --releases "$T/rel4.yaml" "$T/good.yaml"
expect_rc 65 "a bad line in an observed file"
expect_err "obs.txt: not an XLA flag name: 'not a name' (line 2)" "the line named"
rm -f "$T/obs.txt"
run "$GEN" "$T/out4.c" --releases "$T/rel4.yaml" "$T/good.yaml"
expect_rc 65 "a missing observed file"
expect_err "release jaxlib 0.3.0: cannot read 'obs.txt'" "the file named"
sed 's/, known: false}/, known: false, observed: obs.txt}/' "$T/rel.yaml" >"$T/rel5.yaml"
run "$GEN" "$T/out4.c" --releases "$T/rel5.yaml" "$T/good.yaml"
expect_rc 65 "observed and known: false together"
expect_err "an observed release is inside the knowledge" "contradiction named"
done_ok
