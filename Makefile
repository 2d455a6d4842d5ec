# xlaunch - see README.md.  `make` builds ./xlaunch; `make test`, `make demo`.
PKG_CONFIG ?= pkg-config
CC ?= cc
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(PREFIX)/bin
DATADIR = $(PREFIX)/share/xlaunch
MANDIR = $(PREFIX)/share/man/man1
PYTHON ?= python3

PKGS = yaml-0.1 jansson sqlite3
WERROR ?=
SAN ?=

CFLAGS ?= -O2 -g
CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wno-unused-parameter $(WERROR)
CPPFLAGS += -MMD -MP -I. $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null) \
	-DXL_DATADIR='"$(DATADIR)"'
LDLIBS += $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null) -ldl -lpthread -lm

ifeq ($(SAN),1)
BUILD = build/san
CFLAGS += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
else
BUILD = build/rel
endif

MODULES = common launcher calib probe
SRCS = $(foreach m,$(MODULES),$(wildcard $(m)/*.c))
OBJS = $(patsubst %.c,$(BUILD)/%.o,$(SRCS))
LIBOBJS = $(filter-out $(BUILD)/launcher/main.o,$(OBJS))

ifeq ($(SAN),1)
BIN = $(BUILD)/xlaunch
else
BIN = xlaunch
endif

UNIT_SRCS = $(wildcard tests/unit/test_*.c)
UNIT_BINS = $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

.PHONY: all deps test unit integration demo install clean fuzz bench man check-deps
all: $(BIN) $(BUILD)/xlaunch.1

$(BIN): $(OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/libxlaunch.a: $(LIBOBJS)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libxlaunch.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libxlaunch.a \
		$(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null) $(LDLIBS)

# The man page is assembled from one part per command family.
$(BUILD)/xlaunch.1: $(sort $(wildcard man/*.man))
	@mkdir -p $(dir $@)
	cat $^ > $@

man: $(BUILD)/xlaunch.1

# Install the Debian packages the build and the tests need, when missing.
deps:
	@tools/deps.sh

test: deps
	$(MAKE) all $(UNIT_BINS)
	tools/run-tests.sh $(BUILD) $(BIN)

demo: deps
	$(MAKE) all
	tools/demo.sh $(BIN)

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

clean:
	rm -rf build xlaunch

-include $(OBJS:.o=.d)
