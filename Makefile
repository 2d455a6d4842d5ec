# xlaunch - see README.md.  `make` builds ./xlaunch; `make test`, `make demo`.
PKG_CONFIG ?= pkg-config
CC ?= cc
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(PREFIX)/bin
DATADIR = $(PREFIX)/share/xlaunch
MANDIR = $(PREFIX)/share/man/man1
PYTHON ?= python3

PKGS = yaml-0.1 jansson sqlite3 libpq
WERROR ?=
SAN ?=

# CFLAGS, CPPFLAGS, LDFLAGS and LDLIBS given on the command line keep what
# the build needs (override ... +=): `make CFLAGS=-O0` still builds C11 with
# the warnings on.
CFLAGS ?= -O2 -g
override CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wno-unused-parameter $(WERROR)
override CPPFLAGS += -MMD -MP -I. $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
# libyaml, jansson and sqlite3 are linked statically by default when their
# archives are installed (the -dev packages ship them): loading three shared
# libraries is most of what `xlaunch exec` would otherwise add to a launch
# (tests/bench/RESULTS.md).  STATIC_DEPS=0 links them as shared libraries.
STATIC_DEPS ?= 1
# libpq (PostgreSQL stores) is not linked: calib/postgres.c dlopen()s
# libpq.so.5 the first time a postgresql:// store is opened, so no other
# command loads it and the dozen libraries it needs (TLS, Kerberos, LDAP).
# LIBPQ=link links it as a shared library instead (tests/bench/RESULTS.md
# compares the two).
LIBPQ ?= dlopen
LINK_PKGS = $(filter-out libpq,$(PKGS))
DEP_LIBS = $(shell $(PKG_CONFIG) --libs $(LINK_PKGS) 2>/dev/null)
PQ_LIBS = $(shell $(PKG_CONFIG) --libs libpq 2>/dev/null)
ifeq ($(LIBPQ),link)
override CPPFLAGS += -DXL_LIBPQ_LINKED
override LDLIBS += $(PQ_LIBS)
endif
ifeq ($(SAN),1)
STATIC_DEPS = 0
endif
ifeq ($(STATIC_DEPS),1)
override LDLIBS += -Wl,-Bstatic $(DEP_LIBS) -Wl,-Bdynamic -ldl -lpthread
else
override LDLIBS += $(DEP_LIBS) -ldl -lpthread
endif

ifeq ($(SAN),1)
BUILD = build/san
override CFLAGS += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
override LDFLAGS += -fsanitize=address,undefined
else
BUILD = build/rel
endif

MODULES = common launcher launcher/profile launcher/flags launcher/plan launcher/run launcher/watch launcher/report calib probe bundle
SRCS = $(foreach m,$(MODULES),$(wildcard $(m)/*.c))
OBJS = $(patsubst %.c,$(BUILD)/%.o,$(SRCS))
LIBOBJS = $(filter-out $(BUILD)/launcher/main.o,$(OBJS))

# Flag catalogs: etc/flags/*.yaml stay the source; tools/gen-catalog checks
# them and compiles them into a sorted C table linked into the binary, so
# no launch parses them (see launcher/flags/flags.h).  etc/flags/releases.yaml
# lists the runtime releases the catalogs' `releases` name; the knowledge
# over releases compiles into the same file (launcher/flags/knowledge.h).
RELEASES = etc/flags/releases.yaml
CATALOGS = $(filter-out $(RELEASES),$(sort $(wildcard etc/flags/*.yaml)))
GEN_CATALOG = $(BUILD)/tools/gen-catalog
OBJS += $(BUILD)/gen/catalog_table.o
# The compile caches' key rules, etc/cachekeys.yaml, the same way: `run` and
# `exec` say whether a cache will be cold without parsing YAML.
GEN_CACHEKEYS = $(BUILD)/tools/gen-cachekeys
OBJS += $(BUILD)/gen/cachekeys_table.o

ifeq ($(SAN),1)
BIN = $(BUILD)/xlaunch
else
BIN = xlaunch
endif

UNIT_SRCS = $(wildcard tests/unit/test_*.c)
UNIT_BINS = $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

.PHONY: all help deps test unit integration test-load demo demo-torch-xla install wheel sdist clean fuzz fuzz-build fuzz-smoke bench man check-deps
all: $(BIN) $(BUILD)/xlaunch.1

# Linked beside its place, then copied in one go and renamed over it: a
# running ./xlaunch is never overwritten, and the file is laid out in the page
# cache as `make install` and pip lay it out.  The file the linker writes
# piece by piece starts about 5% slower, the same bytes (tests/bench/RESULTS.md).
$(BIN): $(OBJS)
	$(CC) $(LDFLAGS) -o $@.ld $^ $(LDLIBS)
	cp $@.ld $@.new && rm -f $@.ld && mv -f $@.new $@

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# The data directory is found beside the binary first (../share/xlaunch, so
# an installed tree may move); the compiled-in DATADIR is the fallback.  Only
# common/path.c sees it, and it is rebuilt whenever DATADIR changes (`make`
# then `make install PREFIX=/opt/x` installs a binary that names /opt/x).
DATADIR_STAMP = $(BUILD)/datadir.stamp
$(shell mkdir -p $(BUILD) && { [ -f $(DATADIR_STAMP) ] && \
	[ "$$(cat $(DATADIR_STAMP))" = '$(DATADIR)' ] || printf '%s\n' '$(DATADIR)' > $(DATADIR_STAMP); })
$(BUILD)/common/path.o: $(DATADIR_STAMP)
$(BUILD)/common/path.o: override CPPFLAGS += -DXL_DATADIR='"$(DATADIR)"'

$(GEN_CATALOG): tools/gen-catalog.c tools/gen-c.h $(filter $(BUILD)/common/%,$(OBJS))
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(filter-out %.h,$^) $(LDLIBS)

# the names each release outside the sources registers, as its wheel answered
OBSERVED = $(sort $(wildcard etc/flags/observed/*.txt))
$(BUILD)/gen/catalog_table.c: $(GEN_CATALOG) $(RELEASES) $(CATALOGS) $(OBSERVED)
	@mkdir -p $(dir $@)
	$(GEN_CATALOG) $@ --releases $(RELEASES) $(CATALOGS)

$(BUILD)/gen/catalog_table.o: $(BUILD)/gen/catalog_table.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(GEN_CACHEKEYS): tools/gen-cachekeys.c tools/gen-c.h $(filter $(BUILD)/common/%,$(OBJS))
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(filter-out %.h,$^) $(LDLIBS)

$(BUILD)/gen/cachekeys_table.c: $(GEN_CACHEKEYS) etc/cachekeys.yaml
	@mkdir -p $(dir $@)
	$(GEN_CACHEKEYS) $@ etc/cachekeys.yaml

$(BUILD)/gen/cachekeys_table.o: $(BUILD)/gen/cachekeys_table.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/libxlaunch.a: $(LIBOBJS)
	rm -f $@
	ar rcs $@ $^

# Unit tests: each test_NAME.c with the shared fixtures and main
# (tests/unit/unit.c) and the fuzz targets some of them replay.
TEST_OBJS = $(BUILD)/tests/obj/unit.o $(BUILD)/tests/obj/targets.o

$(BUILD)/tests/obj/unit.o: tests/unit/unit.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/tests/obj/targets.o: tests/fuzz/targets.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(TEST_OBJS) $(BUILD)/libxlaunch.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(TEST_OBJS) $(BUILD)/libxlaunch.a \
		$(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null) $(LDLIBS) $(PQ_LIBS)

# The man page is assembled from one part per command family.
$(BUILD)/xlaunch.1: $(sort $(wildcard man/*.man))
	@mkdir -p $(dir $@)
	cat $^ > $@

man: $(BUILD)/xlaunch.1

help:
	@echo 'make              build ./xlaunch and build/rel/xlaunch.1 (SAN=1: build/san/, ASan+UBSan)'
	@echo 'make test         install what is missing, build, run every test, JOBS at a time'
	@echo '                  (default: the number of CPUs, at most one per 3 GiB of memory;'
	@echo '                  JOBS=1: one after another)'
	@echo 'make test-load    the same while stress-ng keeps the CPUs busy (LOAD_CPUS=N), with'
	@echo '                  LOAD_JOBS tests at once (default: twice the CPUs)'
	@echo 'make demo         probe, then a JAX job on the CPU through the cpu-jax profile'
	@echo 'make demo-torch-xla  the same for PyTorch/XLA (downloads torch and torch_xla)'
	@echo 'make install      PREFIX=/usr/local DESTDIR=: binary, man page, share/xlaunch'
	@echo 'make wheel        dist/xlaunch-VERSION-py3-none-manylinux_2_17_x86_64.whl (and its'
	@echo '                  manylinux2014 alias): this binary for glibc >= 2.17, for pip install'
	@echo 'make sdist        dist/xlaunch-VERSION.tar.gz: pip install builds it with make'
	@echo 'make bench        the benchmarks (tests/bench/RESULTS.md)'
	@echo 'make fuzz         every fuzz harness for FUZZ_SECONDS (fuzz-smoke: a short run)'
	@echo 'make check-deps   the module arrows and function lengths'
	@echo 'make deps         the Debian packages the build and the tests need (make demo installs fewer)'
	@echo 'make clean        remove build/, dist/ and ./xlaunch'

# Install the Debian packages the build and the tests need, when missing.
deps:
	@tools/deps.sh

# The module arrows (launcher -> calib, probe, bundle -> common), checked on
# every #include.
check-deps:
	@tools/check-deps.sh .

# Tests side by side, JOBS at a time (default: the number of CPUs, at most
# one per 3 GiB of memory, which tools/run-tests.sh works out; JOBS=1 runs
# them one after another); tools/run-tests.sh keeps them apart.
NCPUS := $(shell nproc 2>/dev/null || echo 2)
JOBS ?=
test: deps check-deps
	$(MAKE) all $(UNIT_BINS)
	JOBS=$(JOBS) tools/run-tests.sh $(BUILD) $(BIN)

# The whole suite, the same as `make test`, while stress-ng keeps LOAD_CPUS
# cores busy (default 2: both cores of a 2-core host), and with more tests
# at once than there are cores (LOAD_JOBS, default twice the CPUs), so a
# test that depends on timing fails here; the hog is stopped at the end
# whatever happens, and its output stays out of the test log.
LOAD_CPUS ?= 2
LOAD_JOBS ?= $(shell echo $$((2 * $(NCPUS))))
test-load: deps
	tools/under-load.sh -n $(LOAD_CPUS) $(MAKE) test JOBS=$(LOAD_JOBS)

# The demo needs a compiler, the libraries and Python, not the test toolchain.
demo:
	@tools/deps.sh demo
	$(MAKE) all
	tools/demo.sh $(BIN)

# PyTorch/XLA on the CPU: torch and torch_xla from PyPI into build/venv-torch
# (about 4.2 GB the first time), a recompilation caught, the persistent cache
# on the second launch, a storm.
demo-torch-xla: deps
	$(MAKE) all
	tools/demo-torch-xla.sh $(BIN)

# Benchmarks: ratios against a baseline taken in the same run; not in `test`.
bench: all
	@for b in tests/bench/*.sh; do echo "== $$b"; sh $$b $(BIN) || exit 1; done

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR) $(DESTDIR)$(MANDIR)
	install -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/xlaunch
	install -m 0644 $(BUILD)/xlaunch.1 $(DESTDIR)$(MANDIR)/xlaunch.1
	cp -R profiles etc kernels $(DESTDIR)$(DATADIR)/
	find $(DESTDIR)$(DATADIR) -type d -exec chmod 0755 {} +
	find $(DESTDIR)$(DATADIR) -type f -exec chmod 0644 {} +

# The wheel, dist/xlaunch-VERSION-py3-none-manylinux_X_Y_x86_64.whl: this
# release binary built again by zig cc for an old glibc (no data directory
# compiled in: it reads ../share/xlaunch beside itself, the wheel's data),
# the man page, profiles/, etc/ and kernels/; auditwheel names its tag.  The
# build tools come from PyPI into build/venv-wheel (tools/wheel.sh).
wheel: deps
	@tools/wheel.sh wheel

# The source archive, dist/xlaunch-VERSION.tar.gz: `pip install` builds it
# with this host's compiler and Debian's -dev packages.
sdist:
	@tools/wheel.sh sdist

# libFuzzer harnesses: tests/fuzz/fuzz_NAME.c, each linked against every
# module built with clang, ASan and UBSan.  `make fuzz FUZZ_SECONDS=N` runs
# each for N seconds on a copy of its seed corpus (tests/fuzz/corpus/NAME,
# and the YAML test suite for the profile loader); `make fuzz-smoke` runs
# each over its seeds plus a few thousand new inputs (part of `make test`).
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_BUILD = build/fuzz
FUZZ_FLAGS = -g -O1 -std=c11 -D_GNU_SOURCE -I. -DXL_DATADIR='"$(DATADIR)"' \
	$(shell $(PKG_CONFIG) --cflags libpq 2>/dev/null) \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FUZZ_OBJS = $(patsubst %.c,$(FUZZ_BUILD)/obj/%.o,$(filter-out launcher/main.c,$(SRCS))) \
	$(FUZZ_BUILD)/obj/catalog_table.o $(FUZZ_BUILD)/obj/cachekeys_table.o \
	$(FUZZ_BUILD)/obj/tests/fuzz/targets.o
FUZZ_NAMES = $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS = $(addprefix $(FUZZ_BUILD)/fuzz_,$(FUZZ_NAMES))

$(FUZZ_BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -MMD -MP -c -o $@ $<

$(FUZZ_BUILD)/obj/catalog_table.o: $(BUILD)/gen/catalog_table.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -c -o $@ $<

$(FUZZ_BUILD)/obj/cachekeys_table.o: $(BUILD)/gen/cachekeys_table.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -c -o $@ $<

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJS)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJS) $(LDLIBS)

fuzz-build: $(FUZZ_BINS)

fuzz: deps
	$(MAKE) fuzz-build
	tools/fuzz.sh run $(FUZZ_SECONDS) $(FUZZ_NAMES)

fuzz-smoke: deps
	$(MAKE) fuzz-build
	tools/fuzz.sh smoke 0 $(FUZZ_NAMES)

clean:
	rm -rf build dist xlaunch xlaunch.ld xlaunch.new

-include $(OBJS:.o=.d) $(FUZZ_OBJS:.o=.d) $(TEST_OBJS:.o=.d)
