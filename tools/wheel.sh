#!/bin/sh
# wheel.sh - the wheel and the sdist (`make wheel`, `make sdist`).
#   tools/wheel.sh wheel   -> dist/xlaunch-VERSION-py3-none-manylinux_X_Y_x86_64.whl
#   tools/wheel.sh sdist   -> dist/xlaunch-VERSION.tar.gz
#   tools/wheel.sh bin     -> build/wheel/glibc-G/xlaunch only (the binary the wheel holds)
# WHEEL_DIST=DIR puts the wheel or the sdist in DIR instead of dist/.
# The wheel's binary is `make`'s release binary: the same sources, the same
# CFLAGS, libyaml, jansson and sqlite3 linked statically, libpq, OpenCL, CUDA,
# NVML and PJRT loaded at run time.  Two things differ: the compiler is zig cc
# (ziglang from PyPI) aimed at glibc $WHEEL_GLIBC (2.17 unless set), so the
# binary asks for no newer glibc symbol than that, and no data directory is
# compiled in (DATADIR=): the binary reads ../share/xlaunch beside itself,
# where the wheel puts its data.  Debian's static archives of the three
# libraries were compiled against Debian's glibc and call fcntl64 and stat64
# (glibc 2.28 and 2.33), so they are compiled again, the same way, from
# Debian's source packages of the versions installed here (apt-get source,
# fetched into build/wheel/src at build time and kept nowhere else), with
# the options Debian gives them.  auditwheel (PyPI) then reads the wheel and
# names the manylinux tag it satisfies; the wheel gets that tag.
# Exits 77 with a "SKIP:" line when PyPI or the Debian archive cannot be
# reached, so tests can say why they were skipped.
set -e
cd "$(dirname "$0")/.."
GLIBC=${WHEEL_GLIBC:-2.17}
W=build/wheel
D="$W/glibc-$GLIBC"
MAKE=${MAKE:-make}
DIST=${WHEEL_DIST:-dist}
ROOT=$(pwd)

venv=$(tools/venv.sh wheel) || exit $?
PY="$ROOT/$venv/bin/python"
export PATH="$ROOT/$venv/bin:$PATH"
# zig's caches (its libc stubs for the target among them) under build/
export ZIG_GLOBAL_CACHE_DIR="$ROOT/$W/zig-cache" ZIG_LOCAL_CACHE_DIR="$ROOT/$W/zig-cache"

die() { echo "xlaunch: wheel: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
log() { [ -n "${QUIET:-}" ] || echo "wheel: $*" >&2; }

# zig cc, ar and ranlib as commands a configure script and make can call
tools_for_target() {
	zig=$("$PY" -c 'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
	[ -x "$zig" ] || die "no zig in $venv (ziglang)"
	mkdir -p "$D/bin"
	printf '#!/bin/sh\nexec "%s" cc -target x86_64-linux-gnu.%s "$@"\n' "$zig" "$GLIBC" >"$D/bin/cc"
	printf '#!/bin/sh\nexec "%s" ar "$@"\n' "$zig" >"$D/bin/ar"
	printf '#!/bin/sh\nexec "%s" ranlib "$@"\n' "$zig" >"$D/bin/ranlib"
	chmod +x "$D/bin/cc" "$D/bin/ar" "$D/bin/ranlib"
	CC="$ROOT/$D/bin/cc"
	AR="$ROOT/$D/bin/ar"
}

# The source package of an installed -dev package: sets sname and sver.
source_of() {
	_sv=$(dpkg-query -W -f='${source:Package} ${source:Version}' "$1" 2>/dev/null) ||
		die "'$1' is not installed (make deps installs it)"
	sname=${_sv% *} sver=${_sv#* }
}

# deb-src lines for the archives that offer the installed version of each
# package given, as apt-cache policy lists them (no archive is named here)
src_lines() {
	for p in "$@"; do
		apt-cache policy "$p" | awk '
			/^ \*\*\* / { inst = 1; next }
			/^     [^ ]/ { inst = 0 }
			inst && $2 ~ /:\/\// && $NF == "Packages" {
				n = split($3, a, "/"); comp = a[n]; suite = $3
				sub("/" comp "$", "", suite)
				print "deb-src " $2 " " suite " " comp
			}'
	done | sort -u
}

# Debian's source of libyaml, jansson and sqlite3 at the installed versions,
# unpacked under $W/src/NAME-VERSION (once)
fetch_sources() {
	A="$ROOT/$W/apt"
	need=""
	for p in libyaml-dev libjansson-dev libsqlite3-dev; do
		source_of "$p"
		[ -f "$W/src/$sname-$sver.stamp" ] || need="$need $p"
	done
	[ -z "$need" ] && return 0
	mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$A/parts" "$W/src"
	# shellcheck disable=SC2086
	src_lines $need >"$A/sources.list"
	# an installed version the archive no longer offers (an image behind
	# its point release) is this host's state, not a fault of the build
	[ -s "$A/sources.list" ] ||
		skip "apt-cache policy names no archive for the installed version of:$need (apt-get update, then upgrade them)"
	apt="apt-get -q -o Dir::Etc::SourceList=$A/sources.list -o Dir::Etc::SourceParts=$A/parts
		-o Dir::State::Lists=$A/lists -o Dir::Cache=$A/cache -o Debug::NoLocking=1"
	log "fetching Debian's sources of:$need"
	$apt update >"$A/update.log" 2>&1 || { cat "$A/update.log" >&2; skip "cannot read the Debian archive's source index"; }
	for p in $need; do
		source_of "$p"
		set -- "$sname" "$sver"
		rm -rf "$W/src/dl" && mkdir -p "$W/src/dl"
		(cd "$W/src/dl" && $apt source --download-only "$1=$2") >"$A/source.log" 2>&1 ||
			{ cat "$A/source.log" >&2; skip "cannot download Debian's source package $1=$2"; }
		rm -rf "$W/src/$1-$2"
		dpkg-source -x "$W/src/dl/$1_${2#*:}.dsc" "$W/src/$1-$2" >"$A/extract.log" 2>&1 ||
			{ cat "$A/extract.log" >&2; die "dpkg-source could not unpack $1=$2"; }
		rm -rf "$W/src/dl"
		touch "$W/src/$1-$2.stamp"
	done
}

upstream() { v=${1#*:}; echo "${v%-*}"; }

# writes a pkg-config file NAME.pc for -lLIB in $D/deps
pc_file() {
	mkdir -p "$D/deps/lib/pkgconfig"
	cat >"$D/deps/lib/pkgconfig/$1.pc" <<EOF
prefix=$ROOT/$D/deps
Name: $1
Description: $1 for glibc $GLIBC (tools/wheel.sh)
Version: $2
Cflags: -I\${prefix}/include
Libs: -L\${prefix}/lib -l$3
EOF
}

build_yaml() {
	source_of libyaml-dev
	set -- "$sname" "$sver"
	s="$W/src/$1-$2" v=$(upstream "$2") o="$D/obj/yaml"
	[ -f "$D/deps/lib/libyaml.a" ] && [ "$(cat "$D/deps/yaml.version" 2>/dev/null)" = "$2" ] && return 0
	log "libyaml $2 for glibc $GLIBC"
	rm -rf "$o" && mkdir -p "$o" "$D/deps/include" "$D/deps/lib"
	IFS=. read -r ma mi pa <<EOF
$v
EOF
	# what its configure defines: the version, and nothing else it uses
	for c in "$s"/src/*.c; do
		"$CC" -O2 -I"$s/include" -DYAML_VERSION_MAJOR="$ma" -DYAML_VERSION_MINOR="$mi" \
			-DYAML_VERSION_PATCH="$pa" -DYAML_VERSION_STRING="\"$v\"" \
			-c -o "$o/$(basename "$c" .c).o" "$c"
	done
	rm -f "$D/deps/lib/libyaml.a"
	"$AR" rcs "$D/deps/lib/libyaml.a" "$o"/*.o
	cp "$s/include/yaml.h" "$D/deps/include/"
	pc_file yaml-0.1 "$v" yaml
	echo "$2" >"$D/deps/yaml.version"
}

build_jansson() {
	source_of libjansson-dev
	set -- "$sname" "$sver"
	s="$W/src/$1-$2" v=$(upstream "$2") o="$D/obj/jansson"
	[ -f "$D/deps/lib/libjansson.a" ] && [ "$(cat "$D/deps/jansson.version" 2>/dev/null)" = "$2" ] && return 0
	log "jansson $2 for glibc $GLIBC"
	rm -rf "$o" && mkdir -p "$o" "$D/deps/include" "$D/deps/lib"
	# what its configure finds on any glibc: every header and function it
	# asks for is older than glibc 2.17, and so are GCC's __atomic builtins
	sed -e 's/@json_inline@/inline/' -e 's/@json_have_long_long@/1/' \
		-e 's/@json_have_localeconv@/1/' -e 's/@json_have_atomic_builtins@/1/' \
		-e 's/@json_have_sync_builtins@/1/' "$s/src/jansson_config.h.in" >"$o/jansson_config.h"
	for d in HAVE_ENDIAN_H HAVE_FCNTL_H HAVE_LOCALE_H HAVE_SCHED_H HAVE_UNISTD_H \
		HAVE_SYS_PARAM_H HAVE_SYS_STAT_H HAVE_SYS_TIME_H HAVE_SYS_TYPES_H HAVE_STDINT_H \
		HAVE_CLOSE HAVE_GETPID HAVE_GETTIMEOFDAY HAVE_LOCALECONV HAVE_OPEN HAVE_READ \
		HAVE_SCHED_YIELD HAVE_STRTOLL HAVE_SYNC_BUILTINS HAVE_ATOMIC_BUILTINS USE_URANDOM; do
		echo "#define $d 1"
	done >"$o/jansson_private_config.h"
	echo "#define INITIAL_HASHTABLE_ORDER 3" >>"$o/jansson_private_config.h"
	for c in "$s"/src/*.c; do
		"$CC" -O2 -I"$o" -I"$s/src" -DHAVE_CONFIG_H=1 -c -o "$o/$(basename "$c" .c).o" "$c"
	done
	rm -f "$D/deps/lib/libjansson.a"
	"$AR" rcs "$D/deps/lib/libjansson.a" "$o"/*.o
	cp "$s/src/jansson.h" "$o/jansson_config.h" "$D/deps/include/"
	pc_file jansson "$v" jansson
	echo "$2" >"$D/deps/jansson.version"
}

# sqlite3 through its own configure (so what it detects, usleep and
# fdatasync among them, is detected for the target), with the feature
# options of Debian's build (debian/rules, read here) and of its configure
# line (FTS4, FTS5, JSON, load-extension, threads)
build_sqlite() {
	source_of libsqlite3-dev
	set -- "$sname" "$sver"
	s="$ROOT/$W/src/$1-$2" v=$(upstream "$2") o="$D/obj/sqlite"
	[ -f "$D/deps/lib/libsqlite3.a" ] && [ "$(cat "$D/deps/sqlite.version" 2>/dev/null)" = "$2" ] && return 0
	command -v tclsh >/dev/null || die "sqlite3's build needs tclsh (the Debian package tcl; make deps installs it)"
	log "sqlite3 $2 for glibc $GLIBC"
	defs=$(sed -n '/^export CFLAGS +=/,/[^\\]$/p' "$s/debian/rules" | grep -o -- '-D[A-Z0-9_]*\(=[0-9]*\)\?' | tr '\n' ' ')
	[ -n "$defs" ] || die "no feature options found in $s/debian/rules"
	rm -rf "$o" && mkdir -p "$o" "$D/deps/include" "$D/deps/lib"
	(cd "$o" && "$s/configure" CC="$CC" AR="$AR" RANLIB="$ROOT/$D/bin/ranlib" \
		CFLAGS="-O2 -fno-strict-aliasing $defs" --disable-shared --enable-static \
		--disable-tcl --disable-readline --enable-threadsafe --enable-load-extension \
		--enable-fts4 --enable-fts5 --enable-json) >"$D/sqlite-configure.log" 2>&1 ||
		{ tail -30 "$D/sqlite-configure.log" >&2; die "sqlite3's configure failed"; }
	$MAKE -C "$o" -j"${JOBS:-2}" libsqlite3.la >"$D/sqlite-make.log" 2>&1 ||
		{ tail -30 "$D/sqlite-make.log" >&2; die "sqlite3's build failed"; }
	cp "$o/.libs/libsqlite3.a" "$D/deps/lib/"
	cp "$o/sqlite3.h" "$D/deps/include/"
	pc_file sqlite3 "$v" sqlite3
	echo "$2" >"$D/deps/sqlite.version"
}

# xlaunch itself, by the Makefile, with zig cc and the libraries above
build_bin() {
	tools_for_target
	fetch_sources
	build_yaml
	build_jansson
	build_sqlite
	log "xlaunch for glibc $GLIBC"
	rm -f "$D/xlaunch"	# relinked each time: the libraries above are no prerequisite of it in the Makefile
	PKG_CONFIG_PATH="$ROOT/$D/deps/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
		$MAKE -s -j"${JOBS:-2}" all BUILD="$D/obj/xlaunch" BIN="$D/xlaunch" CC="$CC" DATADIR= \
		>"$D/make.log" 2>&1 || { tail -40 "$D/make.log" >&2; die "make failed"; }
}

version() {
	sed -n 's/^#define XLAUNCH_VERSION "\(.*\)"$/\1/p' common/common.h
}

build_wheel() {
	build_bin
	rm -rf "$W/raw" && mkdir -p "$W/raw" "$DIST"
	log "the wheel (hatchling)"
	XLAUNCH_WHEEL_BIN="$ROOT/$D/xlaunch" XLAUNCH_WHEEL_MAN="$ROOT/$D/obj/xlaunch/xlaunch.1" \
		"$PY" -m build -q --wheel --no-isolation --outdir "$W/raw" . >"$W/build.log" 2>&1 ||
		{ cat "$W/build.log" >&2; die "python -m build --wheel failed"; }
	rm -f "$DIST"/xlaunch-"$(version)"-*.whl
	# repair finds nothing to graft (no library outside the manylinux
	# list is linked) and only retags; the binary is left as it is
	auditwheel repair -w "$DIST" "$W"/raw/*.whl >"$W/repair.log" 2>&1 ||
		{ cat "$W/repair.log" >&2; die "auditwheel repair refused the wheel"; }
	whl=$(ls "$DIST"/xlaunch-"$(version)"-*.whl)
	auditwheel show "$whl" >"$W/show.log" 2>&1 || { cat "$W/show.log" >&2; die "auditwheel show failed"; }
	tag=$(tr '\n' ' ' <"$W/show.log" | sed -n 's/.*consistent with the following platform tag: *"\([^"]*\)".*/\1/p')
	[ -n "$tag" ] || { cat "$W/show.log" >&2; die "auditwheel named no platform tag"; }
	case "$whl" in *"$tag"*) ;; *) die "$whl does not carry auditwheel's tag $tag" ;; esac
	echo "$whl"
	log "$(wc -c <"$whl") bytes; auditwheel: $tag"
}

build_sdist() {
	mkdir -p "$DIST"
	rm -f "$DIST"/xlaunch-"$(version)".tar.gz
	"$PY" -m build -q --sdist --no-isolation --outdir "$DIST" . >"$W/sdist.log" 2>&1 ||
		{ cat "$W/sdist.log" >&2; die "python -m build --sdist failed"; }
	echo "$DIST/xlaunch-$(version).tar.gz"
}

mkdir -p "$W"
case "${1:-wheel}" in
wheel) build_wheel ;;
sdist) build_sdist ;;
bin) build_bin; echo "$D/xlaunch" ;;
*) echo "usage: tools/wheel.sh wheel|sdist|bin" >&2; exit 64 ;;
esac
