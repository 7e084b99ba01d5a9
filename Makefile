# libloop build. `make` builds the library and examples, `make test` runs
# every suite, `make demo` runs the examples, `make bench` the benchmarks.
GO      ?= go
CC      ?= gcc
BUILD   := build
LIB     := $(BUILD)/libloop.so
CFLAGS  ?= -O2 -g -Wall -Wextra
INC     := -Iinclude
LDLIB   := -L$(BUILD) -lloop -Wl,-rpath,$(abspath $(BUILD))
PYTHON  ?= python3

GO_SRC  := go.mod $(wildcard libloop/*.go capi/*.go capi/*.c capi/*.h) include/libloop.h $(wildcard include/libloop/*.h)
EXAMPLES_C := $(wildcard examples/*.c)
EXAMPLE_BINS := $(patsubst examples/%.c,$(BUILD)/examples/%,$(EXAMPLES_C))
CTESTS_C := $(wildcard tests/c/*.c)
CTEST_BINS := $(patsubst tests/c/%.c,$(BUILD)/ctests/%,$(CTESTS_C))

.PHONY: install test-install test-exports all lib examples demo test test-core test-purego test-c test-asan test-vet test-cmake test-python bench bench-c bench-python bench-net bench-spawn clean soak fuzz test-valgrind

all: lib examples

lib: $(LIB)

# The cgo-generated header is an internal detail: drop it, ours is include/libloop.h.
# Only the ll_* functions are exported (capi/exports.map); -trimpath keeps
# build paths out of the library.
# The map's hash rides along as a string (-X) so that go's build cache,
# which does not read the map, relinks when it changes.
EXPORTS_HASH := $(shell cksum capi/exports.map | cut -d' ' -f1)
SO_LDFLAGS := -X main.exportsMap=$(EXPORTS_HASH) -extldflags '-Wl,--version-script=$(abspath capi/exports.map)'

$(LIB): $(GO_SRC) capi/exports.map
	@mkdir -p $(BUILD)
	$(GO) build -trimpath -buildmode=c-shared -ldflags "$(SO_LDFLAGS)" -o $(LIB) ./capi
	@rm -f $(BUILD)/libloop.h

examples: $(EXAMPLE_BINS)

$(BUILD)/examples/%: examples/%.c include/libloop.h $(wildcard include/libloop/*.h) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) $< -o $@ $(LDLIB) -lpthread

$(BUILD)/ctests/%: tests/c/%.c $(wildcard tests/c/*.h) include/libloop.h $(wildcard include/libloop/*.h) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) $< -o $@ $(LDLIB) -lpthread

demo: all
	@for e in $(EXAMPLE_BINS); do echo "== $$e"; $$e || exit 1; done
	@if [ -f examples/hello_asyncio.py ]; then echo "== examples/hello_asyncio.py"; \
	  PYTHONPATH=bindings/python LIBLOOP_LIBRARY=$(abspath $(LIB)) $(PYTHON) examples/hello_asyncio.py; fi

# Every suite, in order; tests/run_all.sh goes on past a failure and ends
# with "suites: N passed, N failed".
test: lib
	@bash tests/run_all.sh

test-core:
	$(GO) test -race -count=1 ./libloop/... ./capi/...

test-vet:
	$(GO) vet ./libloop/... ./capi/... ./bindings/go/... ./tests/...
	GOOS=darwin $(GO) vet ./libloop/...
	GOOS=freebsd $(GO) vet ./libloop/...

test-purego: lib
	LIBLOOP_LIBRARY=$(abspath $(LIB)) $(GO) test -count=1 ./bindings/go/... ./tests/...

test-c: $(CTEST_BINS)
	@pass=0; fail=0; for t in $(CTEST_BINS); do \
	  if $$t; then pass=$$((pass+1)); else echo "FAIL $$t"; fail=$$((fail+1)); fi; done; \
	  echo "C tests: $$pass passed, $$fail failed"; [ $$fail -eq 0 ]

# The C tests again under AddressSanitizer and UndefinedBehaviorSanitizer
# (the C side: the Go runtime's own memory is not instrumented; leak
# detection is off because the Go runtime's allocations are never freed).
ASAN_BINS := $(patsubst tests/c/%.c,$(BUILD)/asan/%,$(CTESTS_C))
SANFLAGS := -g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

$(BUILD)/asan/%: tests/c/%.c $(wildcard tests/c/*.h) include/libloop.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) $(INC) $< -o $@ $(LDLIB) -lpthread -lm

test-asan: $(ASAN_BINS)
	@pass=0; fail=0; for t in $(ASAN_BINS); do \
	  if ASAN_OPTIONS=detect_leaks=0 $$t; then pass=$$((pass+1)); else echo "FAIL $$t"; fail=$$((fail+1)); fi; done; \
	  echo "C tests under ASan/UBSan: $$pass passed, $$fail failed"; [ $$fail -eq 0 ]

# A fresh machine has no cmake: install it when we can (root with apt-get).
test-cmake:
	@command -v cmake >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "cmake missing: installing it with apt-get"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake >/dev/null; \
	  else echo "cmake is required for the CMake suite (apt-get install cmake)"; exit 1; fi; }
	cmake -S . -B $(BUILD)/cmake -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD)/cmake -j2
	cd $(BUILD)/cmake && ctest --output-on-failure

# The Python suite runs under every interpreter listed (both exist on a fresh machine).
PYTHONS ?= $(PYTHON) $(wildcard /usr/bin/python3)

test-python: lib
	@if [ -d bindings/python/tests ]; then \
	  for py in $(PYTHONS); do echo "== Python suite: $$py ($$($$py -V 2>&1))"; \
	    LIBLOOP_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $$py -m unittest discover -s bindings/python/tests -t bindings/python || exit 1; \
	  done; \
	else echo "no Python suite yet"; fi

# Benchmarks are not tests: C against libuv/libev, then Python against
# asyncio/uvloop (needs python3-uvloop for /usr/bin/python3; see bench/python),
# then the network workloads W4, W5, W10 from C against libuv/libev
# (bench/run_net.sh; needs libuv1-dev and libev-dev, and says so if missing),
# then the subprocess workloads W8, W8-1g (bench/run_spawn.sh, same needs).
bench: bench-c bench-python bench-net bench-spawn

bench-c: lib
	bash bench/run.sh

bench-python: lib
	bash bench/python/run.sh

bench-net: lib
	bash bench/run_net.sh

# make install [PREFIX=/usr/local] [DESTDIR=...]: the library, the headers
# and libloop.pc (pkg-config --cflags --libs libloop).
PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
VERSION := $(shell sed -n 's/^\#define LL_VERSION_[A-Z]* \([0-9]*\)$$/\1/p' include/libloop.h | paste -sd. -)

install: lib
	install -d "$(DESTDIR)$(LIBDIR)/pkgconfig" "$(DESTDIR)$(INCLUDEDIR)/libloop"
	install -m 755 $(LIB) "$(DESTDIR)$(LIBDIR)/libloop.so"
	install -m 644 include/libloop.h "$(DESTDIR)$(INCLUDEDIR)/libloop.h"
	install -m 644 include/libloop/*.h "$(DESTDIR)$(INCLUDEDIR)/libloop/"
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' libloop.pc.in > "$(DESTDIR)$(LIBDIR)/pkgconfig/libloop.pc"

# Install into a scratch DESTDIR and build an example with pkg-config alone.
test-install: lib
	@command -v pkg-config >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pkg-config >/dev/null 2>&1 || \
	    { DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pkg-config >/dev/null; }; \
	  else echo "pkg-config is required (apt-get install pkg-config)"; exit 1; fi; }
	@d=$$(mktemp -d) && $(MAKE) -s install DESTDIR=$$d PREFIX=/usr && \
	  flags=$$(PKG_CONFIG_SYSROOT_DIR=$$d PKG_CONFIG_LIBDIR=$$d/usr/lib/pkgconfig pkg-config --cflags --libs libloop) && \
	  echo "pkg-config --cflags --libs libloop: $$flags" && \
	  $(CC) $(CFLAGS) examples/echo_server.c $$flags -Wl,-rpath,$$d/usr/lib -o $$d/echo_server && \
	  $$d/echo_server | tail -1 && rm -rf $$d && echo "install (C, pkg-config): ok"
	@/usr/bin/python3 -c 'import setuptools, wheel' 2>/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-setuptools python3-wheel python3-pip >/dev/null 2>&1 || \
	    { DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-setuptools python3-wheel python3-pip >/dev/null; }; \
	  else echo "the Python install check needs python3-setuptools, python3-wheel and python3-pip"; exit 1; fi; }
	@d=$$(mktemp -d) && LIBLOOP_LIBRARY=$(abspath $(LIB)) /usr/bin/python3 -m pip install -q --no-build-isolation \
	    --no-deps --target $$d bindings/python >/dev/null 2>&1 && rm -rf bindings/python/build bindings/python/*.egg-info && \
	  (cd $$d && env -u LIBLOOP_LIBRARY PYTHONPATH=$$d /usr/bin/python3 -m libloop) && rm -rf $$d && \
	  echo "install: 1 passed, 0 failed"

test-exports: lib
	@bash tests/check_exports.sh $(LIB)

bench-spawn: lib
	bash bench/run_spawn.sh

clean:
	rm -rf $(BUILD)

# The soak (not in `make test`): 1,000 connections pinging an echo server,
# timers and futures churning, children spawned and killed, with RSS, fds
# and threads sampled every SOAK_INTERVAL s for SOAK_MINUTES (default 60)
# into $(BUILD)/soak.csv, and a summary of the curve at the end.
SOAK_MINUTES ?= 60
$(BUILD)/soak: tests/soak/soak.c tests/soak/soak_stats.h include/libloop.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) $< -o $@ $(LDLIB) -lpthread

soak: $(BUILD)/soak
	SOAK_MINUTES=$(SOAK_MINUTES) nice -n 10 $(BUILD)/soak $(BUILD)/soak.csv

# Every go test -fuzz target for FUZZTIME each (default 10m; not in make test).
fuzz:
	bash tests/fuzz.sh

# C tests under valgrind with the Go runtime's noise suppressed (not in make test).
test-valgrind: lib
	bash tests/valgrind/run.sh
