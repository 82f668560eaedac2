# hotloop: build, test and install.
#   make            build ./hotloop (objects under build/)
#   make check      unit + end-to-end tests, then the same under ASan+UBSan
#   make demo       build and profile the bundled example
#   make deps       install the Debian packages hotloop needs
#   make fuzz       run the fuzz targets for a while (FUZZ_SECONDS each)
# DEVELOPER=1 adds -Werror; V=1 shows the commands; SAN=1 builds with ASan+UBSan (used by check).

PREFIX    ?= /usr/local
B         ?= build
CC        ?= cc
VERSION   := 0.1.0

PKGS      := libdw libelf libprotobuf-c jansson zlib
CFLAGS    ?= -O2 -g
CFLAGS    += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare \
             -Wshadow -Wstrict-prototypes -fno-omit-frame-pointer \
             -Ilib -I$(B)/gen -DHOTLOOP_VERSION='"$(VERSION)"'
LDLIBS    += -ldw -lelf -lprotobuf-c -ljansson -linih -lz -liberty -lcapstone -lsqlite3 -lmicrohttpd -lcurl -lcrypto -lpthread -lm
# zstd: heaptrack's files come compressed with it
LDLIBS    += -lzstd
ifeq ($(V),1)
Q :=
QUIET = @:
else
Q := @
QUIET = @echo
endif
ifeq ($(DEVELOPER),1)
CFLAGS    += -Werror
endif
ifeq ($(SAN),1)
CFLAGS    += -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDFLAGS   += -fsanitize=address,undefined
endif

LIB_SRC   := $(wildcard lib/*.c)
CMD_SRC   := $(wildcard src/*.c)
GEN_SRC   := $(B)/gen/profile.pb-c.c
WEB_GEN   := $(patsubst web/%,$(B)/gen/%.h,$(wildcard web/*.js web/*.css web/*.html))
LIB_OBJ   := $(LIB_SRC:%.c=$(B)/%.o) $(B)/gen/profile.pb-c.o
CMD_OBJ   := $(CMD_SRC:%.c=$(B)/%.o)
UNIT_SRC  := $(wildcard tests/unit/t-*.c)
UNIT_BIN  := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
WL_SRC    := $(wildcard tests/workloads/*.c tests/workloads/*.cc)
DEPS      := $(LIB_OBJ:.o=.d) $(CMD_OBJ:.o=.d)
# The C and C++ tree-sitter grammars `catalog` matches with, from npm (make deps)
TS_NPM    := build/npm/node_modules
TS_OBJ    := $(B)/ts/c-parser.o $(B)/ts/cpp-parser.o $(B)/ts/cpp-scanner.o
LIB_OBJ   += $(TS_OBJ)
LDLIBS    += -ltree-sitter

.PHONY: all check unit e2e check-san demo deps install clean fuzz bench workloads
all: hotloop
all: $(B)/libhotloop-heap.so
$(B)/hotloop: | $(B)/libhotloop-heap.so

hotloop: $(B)/hotloop
	@if [ "$(B)" = build ]; then ln -sf $(B)/hotloop hotloop; fi

$(B)/hotloop: $(CMD_OBJ) $(B)/libhotloop.a
	$(QUIET) "  LINK    $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/libhotloop.a: $(LIB_OBJ)
	@rm -f $@
	$(QUIET) "  AR      $@"
	$(Q)ar rcs $@ $^

$(B)/gen/profile.pb-c.c $(B)/gen/profile.pb-c.h: lib/profile.proto
	@mkdir -p $(B)/gen
	$(QUIET) "  PROTOC  $<"
	$(Q)protoc-c --proto_path=lib --c_out=$(B)/gen lib/profile.proto

$(B)/gen/profile.pb-c.o: $(B)/gen/profile.pb-c.c
	$(QUIET) "  CC      $@"
	$(Q)$(CC) $(CFLAGS) -w -c -o $@ $<

# web/ files become C string literals: #include "NAME.h" inside an initializer
$(B)/gen/%.h: web/%
	@mkdir -p $(B)/gen
	$(QUIET) "  GEN     $@"
	$(Q)sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< > $@+ && mv $@+ $@

$(LIB_OBJ) $(CMD_OBJ): | $(B)/gen/profile.pb-c.h $(WEB_GEN)
$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(QUIET) "  CC      $@"
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

# Generated grammar sources: ABI 14 is what libtree-sitter 0.20 loads
$(B)/ts/c-%.o: $(TS_NPM)/tree-sitter-c/src/%.c
	@mkdir -p $(dir $@)
	@grep -q '^#define LANGUAGE_VERSION 14$$' $(TS_NPM)/tree-sitter-c/src/parser.c || \
		{ echo "hotloop: $(TS_NPM)/tree-sitter-c is not ABI 14: run make deps (tree-sitter-c@0.23)" >&2; exit 1; }
	$(QUIET) "  CC      $@"
	$(Q)$(CC) $(filter-out -W% -std=%,$(CFLAGS)) -std=gnu11 -w -I$(TS_NPM)/tree-sitter-c/src -c -o $@ $<
$(B)/ts/cpp-%.o: $(TS_NPM)/tree-sitter-cpp/src/%.c
	@mkdir -p $(dir $@)
	@grep -q '^#define LANGUAGE_VERSION 14$$' $(TS_NPM)/tree-sitter-cpp/src/parser.c || \
		{ echo "hotloop: $(TS_NPM)/tree-sitter-cpp is not ABI 14: run make deps (tree-sitter-cpp@0.23)" >&2; exit 1; }
	$(QUIET) "  CC      $@"
	$(Q)$(CC) $(filter-out -W% -std=%,$(CFLAGS)) -std=gnu11 -w -I$(TS_NPM)/tree-sitter-cpp/src -c -o $@ $<
$(TS_NPM)/tree-sitter-c/src/%.c $(TS_NPM)/tree-sitter-cpp/src/%.c:
	@echo "hotloop: $@ is missing: run make deps (it installs the tree-sitter grammars)" >&2; exit 1

$(B)/tests/t-%: tests/unit/t-%.c $(B)/libhotloop.a
	@mkdir -p $(dir $@)
	$(QUIET) "  CC      $@"
	$(Q)$(CC) $(CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< $(B)/libhotloop.a $(LDLIBS) -lcmocka

# The heap recorder's preload runs inside the profiled program: never sanitized.
HEAP_LIB_CFLAGS := -O2 -g -fno-plt -std=gnu11 -Wall -Wextra -Wno-unused-parameter -fPIC -shared -fvisibility=hidden -Ilib
$(B)/libhotloop-heap.so: preload/heap.c lib/heap-stream.h
	@mkdir -p $(dir $@)
	$(QUIET) "  CC      $@"
	$(Q)$(CC) $(HEAP_LIB_CFLAGS) $(if $(filter 1,$(DEVELOPER)),-Werror) -o $@ $< -lunwind -lpthread -lm -ldl

# Workloads are built without sanitizers, with frame pointers and debug info:
# they are the programs being profiled, not the code under test.
workloads:
	@$(MAKE) --no-print-directory -C tests/workloads

unit: $(UNIT_BIN)
	@tests/run-unit $(UNIT_BIN)

e2e: hotloop workloads
	@HOTLOOP=$(CURDIR)/$(B)/hotloop tests/run-e2e

check-san:
	@$(MAKE) --no-print-directory B=build/san SAN=1 build/san/hotloop
	@$(MAKE) --no-print-directory -k B=build/san SAN=1 unit-san e2e-san

unit-san: $(UNIT_BIN)
	@SUITE="unit (asan+ubsan)" tests/run-unit $(UNIT_BIN)

e2e-san: workloads
	@SUITE="e2e (asan+ubsan)" HOTLOOP=$(CURDIR)/$(B)/hotloop tests/run-e2e

check: deps
	@$(MAKE) --no-print-directory all
	@tests/run-all "$(MAKE) --no-print-directory unit" \
	               "$(MAKE) --no-print-directory e2e" \
	               "$(MAKE) --no-print-directory check-san"

deps:
	@tools/deps

demo: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory -C examples/wordfreq
	@tools/demo

fuzz: deps
	@$(MAKE) --no-print-directory -C fuzz run

bench: all workloads
	@bench/run

install: all
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(B)/hotloop $(DESTDIR)$(PREFIX)/bin/hotloop
	install -d $(DESTDIR)$(PREFIX)/lib/hotloop
	install -m 644 $(B)/libhotloop-heap.so $(DESTDIR)$(PREFIX)/lib/hotloop/libhotloop-heap.so
	install -d $(DESTDIR)$(PREFIX)/share/hotloop/catalog
	install -m 644 catalog/*.json $(DESTDIR)$(PREFIX)/share/hotloop/catalog

clean:
	rm -rf build hotloop
	@$(MAKE) --no-print-directory -C tests/workloads clean
	@$(MAKE) --no-print-directory -C examples/wordfreq clean
	@$(MAKE) --no-print-directory -C examples/evd clean
	@$(MAKE) --no-print-directory -C fuzz clean

-include $(DEPS)
