# SPDX-License-Identifier: MIT
# libloop build. `make` builds the library and examples, `make test` runs
# every suite, `make demo` runs the examples, `make bench` the benchmarks.
GO      ?= go
CC      ?= gcc
BUILD   := build
LIB     := $(BUILD)/libloop.so
PYOBJ   := $(BUILD)/libloop-cpython.so
PYOBJ_SRC := $(wildcard bindings/python/cpython/*.c)
CFLAGS  ?= -O2 -g -Wall -Wextra
INC     := -Iinclude
LDLIB   := -L$(BUILD) -lloop -Wl,-rpath,$(abspath $(BUILD))
PYTHON  ?= python3

GO_SRC  := go.mod $(wildcard libloop/*.go internal/*/*.go capi/*.go capi/*.c capi/*.h capi/cloop/*.go capi/cloop/*.c capi/cloop/*.h capi/spawn/*.go capi/spawn/*.c capi/spawn/*.h) include/libloop.h $(wildcard include/libloop/*.h)
EXAMPLES_C := $(wildcard examples/*.c)
EXAMPLE_BINS := $(patsubst examples/%.c,$(BUILD)/examples/%,$(EXAMPLES_C))
CTESTS_C := $(wildcard tests/c/*.c)
CTEST_BINS := $(patsubst tests/c/%.c,$(BUILD)/ctests/%,$(CTESTS_C))

.PHONY: lint lint-go lint-c lint-python errtab test-real-libs test-real-servers conformance test-docs install test-install test-exports test-spdx test-abi test-types openssl-cli all lib examples demo test test-core test-purego test-c test-fs-portable test-asan test-vet test-cmake test-python bench bench-c bench-python bench-python-net bench-real bench-net bench-udp bench-tls bench-spawn bench-chart clean soak fuzz test-valgrind lib-debug bench-footprint test-stripped

all: lib examples

lib: $(LIB) $(PYOBJ)

# The cgo-generated header is an internal detail: drop it, ours is include/libloop.h.
# Only the ll_* functions are exported (capi/exports.map); -trimpath keeps
# build paths out of the library.
# The map's hash rides along as a string (-X) so that go's build cache,
# which does not read the map, relinks when it changes.
# The library's SONAME is libloop.so.MAJOR (the major of LL_VERSION_* in the
# header): programs record it, and build/libloop.so.MAJOR links to
# build/libloop.so so that they also run from the build tree.
VERSION := $(shell sed -n 's/^\#define LL_VERSION_[A-Z]* \([0-9]*\)$$/\1/p' include/libloop.h | paste -sd. -)
SOMAJOR := $(firstword $(subst ., ,$(VERSION)))
SONAME  := libloop.so.$(SOMAJOR)
EXPORTS_HASH := $(shell cksum capi/exports.map | cut -d' ' -f1)
SO_LDFLAGS := -X main.exportsMap=$(EXPORTS_HASH) -extldflags '-Wl,--version-script=$(abspath capi/exports.map) -Wl,-soname,$(SONAME)'
# -s -w leave out Go's symbol table and DWARF (9.1 MB → 6.4 MB on disk, the
# size of `strip`): nothing reads them at run time (a Go traceback names
# functions from the pclntab, which stays; ll_* are in .dynsym), and the
# loaded image, hence RSS and speed, is the same. gdb, perf and callgrind
# need them: `make lib-debug` builds build/debug/libloop.so with both (run
# with LIBLOOP_LIBRARY or LIBLOOP_LIB_DIR pointing there).
STRIP_LDFLAGS := -s -w
# make does not see a change of link flags: this stamp does (rewritten only
# when the SONAME, the export map's hash or the strip flags change).
LIB_STAMP := $(BUILD)/.lib-flags
$(shell mkdir -p $(BUILD) && [ "$$(cat $(LIB_STAMP) 2>/dev/null)" = "$(SONAME) $(EXPORTS_HASH) $(STRIP_LDFLAGS)" ] || echo "$(SONAME) $(EXPORTS_HASH) $(STRIP_LDFLAGS)" > $(LIB_STAMP))

$(LIB): $(GO_SRC) capi/exports.map $(LIB_STAMP)
	@mkdir -p $(BUILD)
	$(GO) build -trimpath -buildmode=c-shared -ldflags "$(STRIP_LDFLAGS) $(SO_LDFLAGS)" -o $(LIB) ./capi
	@rm -f $(BUILD)/libloop.h
	@ln -sf libloop.so $(BUILD)/$(SONAME)

DEBUG_LIB := $(BUILD)/debug/libloop.so
lib-debug: $(DEBUG_LIB)

$(DEBUG_LIB): $(GO_SRC) capi/exports.map $(LIB_STAMP)
	@mkdir -p $(dir $@)
	$(GO) build -trimpath -buildmode=c-shared -ldflags "$(SO_LDFLAGS)" -o $@ ./capi
	@rm -f $(dir $@)libloop.h
	@ln -sf libloop.so $(dir $@)$(SONAME)

# The Python binding's C side (bindings/python/cpython, llpy.h) is an
# object of its own, loaded by the package with ctypes beside libloop.so:
# no Python headers, no link to libpython nor to libloop.so (-z defs holds
# it to libc: CPython's functions and libloop's come in llpy_bind's
# tables). build_backend/libloop_build.py builds it for wheels with the
# same flags (_OBJECT_FLAGS there). The package finds build/'s beside its
# source tree, as it finds build/libloop.so. `make lib` builds it (cheap:
# a few small C files) so that an editable install has it.
PYOBJ_FLAGS := -O2 -g -Wall -Wextra -fPIC -fvisibility=hidden -shared -Wl,-z,defs \
    -Wl,-soname,libloop-cpython.so
$(PYOBJ): $(PYOBJ_SRC) bindings/python/cpython/llpy.h include/libloop.h $(wildcard include/libloop/*.h)
	@mkdir -p $(BUILD)
	$(CC) $(PYOBJ_FLAGS) $(INC) $(PYOBJ_SRC) -o $@

# Its C tests (bindings/python/tests/c) link it and libloop.so.
PYCTESTS_C := $(wildcard bindings/python/tests/c/*.c)
PYCTEST_BINS := $(patsubst bindings/python/tests/c/%.c,$(BUILD)/pyctests/%,$(PYCTESTS_C))
PYCTEST_INC := -Ibindings/python/cpython -Itests/c
$(BUILD)/pyctests/%: bindings/python/tests/c/%.c tests/c/check.h $(wildcard bindings/python/tests/c/*.h) $(PYOBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) $(PYCTEST_INC) $< -o $@ $(PYOBJ) $(LDLIB) -lpthread

examples: $(EXAMPLE_BINS)

$(BUILD)/examples/%: examples/%.c include/libloop.h $(wildcard include/libloop/*.h) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) $< -o $@ $(LDLIB) -lpthread

$(BUILD)/ctests/%: tests/c/%.c $(wildcard tests/c/*.h) include/libloop.h $(wildcard include/libloop/*.h) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) $< -o $@ $(LDLIB) -lpthread

# The TLS tests and examples/https_get make their certificates with the
# openssl command (and talk to openssl s_server / s_client): install it when
# missing and we can (root with apt-get).
openssl-cli:
	@command -v openssl >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "openssl missing: installing it with apt-get"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null; \
	  else echo "the openssl command is required by the TLS tests (apt-get install openssl)"; exit 1; fi; }

demo: all openssl-cli
	@for e in $(EXAMPLE_BINS); do echo "== $$e"; $$e || exit 1; done
	@if [ -f examples/hello_asyncio.py ]; then echo "== examples/hello_asyncio.py"; \
	  PYTHONPATH=bindings/python LIBLOOP_LIBRARY=$(abspath $(LIB)) $(PYTHON) examples/hello_asyncio.py; fi

# Every suite, in order; tests/run_all.sh goes on past a failure and ends
# with "suites: N passed, N failed".
test: lib
	@bash tests/run_all.sh

test-core:
	$(GO) test -race -count=1 ./libloop/... ./capi/... ./internal/...

# The purego binding is vetted for macOS too; on FreeBSD purego's own fakecgo
# package does not pass vet (its cgo_export_dynamic lines), so there only the
# core and internal packages are.
test-vet:
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./libloop/... ./internal/... ./bindings/go/...
	GOOS=freebsd $(GO) vet ./libloop/... ./internal/...

# Static checks, failing on any finding: go vet (test-vet above), then
# tests/lint.sh: gofmt and staticcheck, cppcheck, pyflakes (it says what each
# covers; tests/cppcheck-suppressions.txt which C checks are off, and why).
# The script runs even when vet fails, so one run shows every finding.
# staticcheck is built pinned from the Go module proxy; cppcheck and
# python3-pyflakes are installed with apt-get when missing and root.
# lint-go, lint-c and lint-python run one language's part.
STATICCHECK_VERSION ?= v0.8.2
LINT_ENV := GO="$(GO)" BUILD="$(BUILD)" STATICCHECK_VERSION=$(STATICCHECK_VERSION)

lint:
	@rc=0; $(MAKE) --no-print-directory test-vet || rc=1; $(LINT_ENV) bash tests/lint.sh || rc=1; exit $$rc

lint-go:
	@rc=0; $(MAKE) --no-print-directory test-vet || rc=1; $(LINT_ENV) bash tests/lint.sh go || rc=1; exit $$rc

lint-c:
	@$(LINT_ENV) bash tests/lint.sh c

lint-python:
	@$(LINT_ENV) bash tests/lint.sh python

test-purego: lib
	LIBLOOP_LIBRARY=$(abspath $(LIB)) $(GO) test -count=1 ./bindings/go/... ./tests/...

# The C file pool's portable branch (capi/cloop/fspool.c: condition
# variables, the loop woken through Go; the BSDs' and macOS's), which no
# Linux build would compile: a second library built with
# LL__FSPOOL_PORTABLE, and the file pool's C tests against it (also run
# by test-c; the library's build is a relink of the cached packages).
PORTABLE := $(BUILD)/portable
PORTABLE_LIB := $(PORTABLE)/libloop.so
PORTABLE_BINS := $(patsubst %,$(PORTABLE)/ctests/%,test_fs_pool test_fs_callback test_fs test_fs_spin)

$(PORTABLE_LIB): $(GO_SRC) capi/exports.map $(LIB_STAMP)
	@mkdir -p $(PORTABLE)
	CGO_CFLAGS="$${CGO_CFLAGS:--O2 -g} -DLL__FSPOOL_PORTABLE" $(GO) build -trimpath -buildmode=c-shared -ldflags "$(STRIP_LDFLAGS) $(SO_LDFLAGS)" -o $@ ./capi
	@rm -f $(PORTABLE)/libloop.h
	@grep -q 'libloop file pool: portable branch' $@ || { echo "$@: built without the portable branch (LL__FSPOOL_PORTABLE did not reach fspool.c)"; rm -f $@; exit 1; }
	@ln -sf libloop.so $(PORTABLE)/$(SONAME)

$(PORTABLE)/ctests/%: tests/c/%.c $(wildcard tests/c/*.h) include/libloop.h $(wildcard include/libloop/*.h) $(PORTABLE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) $< -o $@ -L$(PORTABLE) -lloop -Wl,-rpath,$(abspath $(PORTABLE)) -lpthread

test-fs-portable: $(PORTABLE_BINS)
	@pass=0; fail=0; for t in $(PORTABLE_BINS); do \
	  if $$t; then pass=$$((pass+1)); else echo "FAIL $$t"; fail=$$((fail+1)); fi; done; \
	  echo "C file pool, portable branch: $$pass passed, $$fail failed"; [ $$fail -eq 0 ]

test-c: $(CTEST_BINS) $(PORTABLE_BINS) openssl-cli
	@pass=0; fail=0; for t in $(CTEST_BINS) $(PORTABLE_BINS); do \
	  if $$t; then pass=$$((pass+1)); else echo "FAIL $$t"; fail=$$((fail+1)); fi; done; \
	  echo "C tests: $$pass passed, $$fail failed"; [ $$fail -eq 0 ]

# The docs' examples (docs/examples): every C file is compiled and run, then
# the Python and Go ones; each checks what its page promises and exits 1 if
# it is not so.
DOCEX_C := $(wildcard docs/examples/*.c)
DOCEX_BINS := $(patsubst docs/examples/%.c,$(BUILD)/docs/%,$(DOCEX_C))

$(BUILD)/docs/%: docs/examples/%.c docs/examples/must.h include/libloop.h $(wildcard include/libloop/*.h) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) $< -o $@ $(LDLIB) -lpthread

test-docs: $(DOCEX_BINS)
	@pass=0; fail=0; \
	for t in $(DOCEX_BINS); do \
	  if $$t; then pass=$$((pass+1)); else echo "FAIL $$t"; fail=$$((fail+1)); fi; done; \
	for py in docs/examples/*.py; do \
	  if LIBLOOP_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(PYTHON) $$py; then pass=$$((pass+1)); \
	  else echo "FAIL $$py"; fail=$$((fail+1)); fi; done; \
	for g in docs/examples/go/*/; do \
	  if LIBLOOP_LIBRARY=$(abspath $(LIB)) $(GO) run ./$$g; then pass=$$((pass+1)); \
	  else echo "FAIL $$g"; fail=$$((fail+1)); fi; done; \
	echo "docs examples: $$pass passed, $$fail failed"; [ $$fail -eq 0 ]

# The C tests again under AddressSanitizer and UndefinedBehaviorSanitizer
# (the C side: the Go runtime's own memory is not instrumented; leak
# detection is off because the Go runtime's allocations are never freed).
ASAN_BINS := $(patsubst tests/c/%.c,$(BUILD)/asan/%,$(CTESTS_C))
SANFLAGS := -g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

$(BUILD)/asan/%: tests/c/%.c $(wildcard tests/c/*.h) include/libloop.h $(wildcard include/libloop/*.h) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) $(INC) $< -o $@ $(LDLIB) -lpthread -lm

# The Python binding's C tests too, its sources compiled in.
ASAN_PY_BINS := $(patsubst bindings/python/tests/c/%.c,$(BUILD)/asan-py/%,$(PYCTESTS_C))
$(BUILD)/asan-py/%: bindings/python/tests/c/%.c tests/c/check.h $(wildcard bindings/python/tests/c/*.h) $(PYOBJ_SRC) bindings/python/cpython/llpy.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) $(INC) $(PYCTEST_INC) $< $(PYOBJ_SRC) -o $@ $(LDLIB) -lpthread -lm

test-asan: $(ASAN_BINS) $(ASAN_PY_BINS) openssl-cli
	@pass=0; fail=0; for t in $(ASAN_BINS) $(ASAN_PY_BINS); do \
	  if ASAN_OPTIONS=detect_leaks=0 $$t; then pass=$$((pass+1)); else echo "FAIL $$t"; fail=$$((fail+1)); fi; done; \
	  echo "C tests under ASan/UBSan: $$pass passed, $$fail failed"; [ $$fail -eq 0 ]

# A fresh machine has no cmake: install it when we can (root with apt-get).
test-cmake: openssl-cli
	@command -v cmake >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "cmake missing: installing it with apt-get"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake >/dev/null; \
	  else echo "cmake is required for the CMake suite (apt-get install cmake)"; exit 1; fi; }
	cmake -S . -B $(BUILD)/cmake -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD)/cmake -j2
	cd $(BUILD)/cmake && ctest --output-on-failure

# The Python suite runs under every interpreter users run that this machine
# image carries: Debian's 3.11 and pyenv's 3.11, 3.12 and 3.13. A missing one
# fails the suite (PYTHONS=... to choose others by hand).
PYENV_ROOT ?= $(shell pyenv root 2>/dev/null || echo $$HOME/.pyenv)
PYTHONS ?= /usr/bin/python3 $(foreach v,3.11.7 3.12.1 3.13.0,$(PYENV_ROOT)/versions/$(v)/bin/python3)

# The network modules, run again without the C hot path.
PY_NET_TESTS := $(foreach m,tcp tcp_connect tcp_server tcp_streams tcp_peer_calls tls tls_data sink \
	direct_write direct_write_gather direct_write_packed stream_write_c,tests.test_$(m))

test-python: lib $(PYCTEST_BINS)
	@pass=0; fail=0; for t in $(PYCTEST_BINS); do \
	  if $$t; then pass=$$((pass+1)); else echo "FAIL $$t"; fail=$$((fail+1)); fi; done; \
	  echo "the binding's C tests: $$pass passed, $$fail failed"; [ $$fail -eq 0 ]
	@if [ -d bindings/python/tests ]; then \
	  for py in $(PYTHONS); do \
	    [ -x "$$py" ] || { echo "missing interpreter: $$py (the Python suite runs under each of: $(PYTHONS))"; exit 1; }; \
	    echo "== Python suite: $$py ($$($$py -V 2>&1))"; \
	    LIBLOOP_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $$py -m unittest discover -s bindings/python/tests -t bindings/python || exit 1; \
	  done; \
	  echo "== Python network suites without the C hot path (LIBLOOP_PY_HOTPATH=0: the ctypes sink and write)"; \
	  LIBLOOP_PY_HOTPATH=0 LIBLOOP_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(firstword $(PYTHONS)) -m unittest \
	    $(PY_NET_TESTS) || exit 1; \
	  echo "== Python TLS suites on asyncio's own SSLProtocol (LIBLOOP_PY_SSL_FAST=0)"; \
	  LIBLOOP_PY_SSL_FAST=0 LIBLOOP_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python $(firstword $(PYTHONS)) -m unittest \
	    tests.test_tls tests.test_tls_data || exit 1; \
	else echo "no Python suite yet"; fi

# Real libraries on libloop's loop as on asyncio's (tests/python_real_libs.py):
# aiohttp's server, client and websockets under Debian's python3, which has
# python3-aiohttp (installed with apt-get when missing and root).
test-real-libs: lib
	@/usr/bin/python3 -c 'import aiohttp' 2>/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "aiohttp missing: installing python3-aiohttp with apt-get"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-aiohttp >/dev/null 2>&1 || \
	    { DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-aiohttp >/dev/null; }; \
	  else echo "the real-library test needs python3-aiohttp (apt-get install python3-aiohttp)"; exit 1; fi; }
	LIBLOOP_LIBRARY=$(abspath $(LIB)) PYTHONPATH=bindings/python timeout 300 /usr/bin/python3 tests/python_real_libs.py

# Real libraries against real servers, the smoke version of `make bench-real`:
# asyncpg (one connection; a pool of 10 with 200 tasks) against a PostgreSQL
# server, redis.asyncio (likewise) against a Redis server, uvicorn (h11)
# under keep-alive requests and a second of wrk, each for a few hundred
# operations on asyncio's loop, uvloop's (when installed) and libloop's, every
# answer checked, no timing. bench/python/real_libs.sh starts both servers on
# 127.0.0.1 in a temporary directory and stops them; it installs postgresql,
# redis-server, python3-asyncpg, python3-redis, python3-uvicorn and wrk with
# apt-get when missing and root, and fails saying what is missing otherwise.
test-real-servers: lib
	bash bench/python/real_libs.sh smoke

# Benchmarks are not tests: C against libuv/libev, then Python against
# asyncio/uvloop (needs python3-uvloop for /usr/bin/python3; see bench/python)
# and the Python network workloads (bench/python/run_net.sh), then real
# libraries against real servers (asyncpg, redis-py, uvicorn;
# bench/python/real_libs.sh),
# then the network workloads W4, W5, W10 from C against libuv/libev
# (bench/run_net.sh; needs libuv1-dev and libev-dev, and says so if missing),
# then UDP datagrams/s against libuv and libev (bench/run_udp.sh, same needs),
# then the subprocess workloads W8, W8-1g (bench/run_spawn.sh, same needs).
# then W11, TLS (bench/run_tls.sh), then the footprint (size, threads,
# RSS; bench/run_footprint.sh). Last, bench-chart draws
# bench/results/chart.png from the raw results.
bench: bench-c bench-python bench-python-net bench-real bench-net bench-udp bench-tls bench-spawn bench-fs bench-footprint bench-chart

bench-c: lib
	bash bench/run.sh

bench-python: lib
	bash bench/python/run.sh

# The Python loops' network and process workloads (W4, W5, W9, W10, W8):
# asyncio vs uvloop vs libloop, a few minutes; needs python3-uvloop,
# python3-aiohttp and wrk (bench/python/run_net.sh says what is missing).
bench-python-net: lib
	bash bench/python/run_net.sh

# asyncpg against PostgreSQL, redis-py against Redis (one connection; a pool
# of 10 with 200 tasks) and uvicorn under wrk, on asyncio, uvloop and libloop,
# pinned to one CPU and not (16-24 minutes on a shared 2-core machine). bench/python/real_libs.sh starts
# and stops the servers, installs what is missing when root, and otherwise
# says what is missing and skips.
bench-real: lib
	bash bench/python/real_libs.sh

bench-net: lib
	bash bench/run_net.sh

# UDP: datagrams/s received on one socket, 64 B and 1 KiB, libloop against
# libuv (UV_UDP_RECVMMSG) and libev (bench/run_udp.sh; same needs as bench-net).
bench-udp: lib
	bash bench/run_udp.sh

# W11, TLS echo and handshakes: libloop from C against asyncio and uvloop
# with ssl= (bench/run_tls.sh; needs openssl and /usr/bin/python3's uvloop).
bench-tls: lib
	bash bench/run_tls.sh

# make install [PREFIX=/usr/local] [DESTDIR=...]: the library as
# libloop.so.X.Y.Z with the links libloop.so.MAJOR (its SONAME, what programs
# load) and libloop.so (what -lloop finds), the headers, libloop.pc
# (pkg-config --cflags --libs libloop) and the CMake package
# (find_package(libloop): lib/cmake/libloop, paths relative to itself).
PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
CMAKEDIR := $(LIBDIR)/cmake/libloop
CMAKE_SUBST := -e 's|@LIBLOOP_VERSION@|$(VERSION)|g' -e 's|@LIBLOOP_SONAME@|$(SONAME)|g' \
    -e "s|@LIBLOOP_REL_LIBDIR@|$$(realpath -m --relative-to=$(CMAKEDIR) $(LIBDIR))|g" \
    -e "s|@LIBLOOP_REL_INCLUDEDIR@|$$(realpath -m --relative-to=$(CMAKEDIR) $(INCLUDEDIR))|g" \
    -e "s|@LIBLOOP_SIZEOF_VOID_P@|$$(( $$(getconf LONG_BIT) / 8 ))|g"

install: lib
	install -d "$(DESTDIR)$(LIBDIR)/pkgconfig" "$(DESTDIR)$(INCLUDEDIR)/libloop" "$(DESTDIR)$(CMAKEDIR)"
	install -m 755 $(LIB) "$(DESTDIR)$(LIBDIR)/libloop.so.$(VERSION)"
	ln -sfn libloop.so.$(VERSION) "$(DESTDIR)$(LIBDIR)/$(SONAME)"
	ln -sfn $(SONAME) "$(DESTDIR)$(LIBDIR)/libloop.so"
	install -m 644 include/libloop.h "$(DESTDIR)$(INCLUDEDIR)/libloop.h"
	install -m 644 include/libloop/*.h "$(DESTDIR)$(INCLUDEDIR)/libloop/"
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' libloop.pc.in > "$(DESTDIR)$(LIBDIR)/pkgconfig/libloop.pc"
	sed $(CMAKE_SUBST) cmake/libloopConfig.cmake.in > "$(DESTDIR)$(CMAKEDIR)/libloopConfig.cmake"
	sed $(CMAKE_SUBST) cmake/libloopConfigVersion.cmake.in > "$(DESTDIR)$(CMAKEDIR)/libloopConfigVersion.cmake"

# Install into scratch prefixes and use the result as a user would: C with
# pkg-config and with find_package, the SONAME, and pip (tests/check_install.sh).
test-install: lib
	@bash tests/check_install.sh

test-exports: lib
	@bash tests/check_exports.sh $(LIB)

# The library ships without Go's symbol table and DWARF (tests/check_stripped.sh).
test-stripped: lib
	@bash tests/check_stripped.sh $(LIB)

# The copies of the error table (LL_ERRNO_MAP, include/libloop/errno.h): the Go core's and
# the bindings' constants and texts, and the table of docs/errors.md, are
# written by tools/errtab.py (also `go generate ./libloop`); commit them.
errtab:
	$(PYTHON) tools/errtab.py

# The headers against the Python and Go bindings: every function (with its
# arity) and constant bound, or omitted on purpose; the error table's copies
# against LL_ERRNO_MAP, stale ones included; the ctypes structs against the
# headers' (tests/check_abi.py).
test-abi:
	@$(PYTHON) tests/check_abi.py && $(PYTHON) tests/check_abi.py --self-test

# The Python stubs under mypy --strict (tests/check_types.sh; installs
# python3-mypy with apt-get when missing and root).
test-types:
	@bash tests/check_types.sh

# Every source file carries SPDX-License-Identifier: MIT (tests/check_spdx.sh).
test-spdx:
	@bash tests/check_spdx.sh

bench-spawn: lib
	bash bench/run_spawn.sh

# File reads from the page cache, 4 KiB and 1 MiB, 1, 4 and 16 in flight:
# ll_fs_read against libuv's uv_fs_read (bench/run_fs.sh; needs libuv1-dev).
bench-fs: lib
	bash bench/run_fs.sh

# What embedding each loop costs before it works: the library's size on
# disk and stripped, threads and RSS after loading it, after one loop and
# with 10,000 idle connections; libloop from C against libuv and libev, from
# Python against asyncio and uvloop (bench/run_footprint.sh, ~1 minute a run;
# docs/FOOTPRINT.md explains the numbers).
bench-footprint: lib
	bash bench/run_footprint.sh

# libloop against each peer, from whichever latest raw results exist (a
# PNG; bench/chart.py): the C workloads, the Python ones, and the real
# libraries against real servers (asyncpg, redis-py, uvicorn; bench-real).
# Needs matplotlib (apt-get install python3-matplotlib): without it, or on
# any error, it says so and the bench still succeeds.
CHART_RAW = $(wildcard bench/results/latest-raw.txt bench/results/net-latest-raw.txt \
    bench/results/spawn-latest-raw.txt bench/results/python-raw.txt bench/results/real-raw.txt)
bench-chart:
	@py=$$(for p in $(PYTHON) /usr/bin/python3; do $$p -c 'import matplotlib' 2>/dev/null && { echo $$p; break; }; done); \
	if [ -z "$$py" ]; then echo "bench chart skipped: matplotlib is missing (apt-get install python3-matplotlib)"; \
	elif [ -z "$(CHART_RAW)" ]; then echo "bench chart skipped: no raw results in bench/results"; \
	else $$py bench/chart.py bench/results/chart.png $(CHART_RAW) || echo "bench chart failed (the tables stand)"; fi

clean:
	rm -rf $(BUILD)

# The soak (not in `make test`): 1,000 connections pinging an echo server,
# timers and futures churning, children spawned and killed, with RSS, fds
# and threads sampled every SOAK_INTERVAL s for SOAK_MINUTES (default 60)
# into $(BUILD)/soak.csv, and a summary of the curve at the end.
SOAK_MINUTES ?= 60
$(BUILD)/soak: tests/soak/soak.c tests/soak/soak_stats.h include/libloop.h $(wildcard include/libloop/*.h) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) $< -o $@ $(LDLIB) -lpthread

soak: $(BUILD)/soak
	SOAK_MINUTES=$(SOAK_MINUTES) nice -n 10 $(BUILD)/soak $(BUILD)/soak.csv

# CPython's own asyncio test suite (test.test_asyncio, from each
# interpreter's test package; Debian's python3 has one only with
# libpython3.11-testsuite) on asyncio's loop and on libloop's, module by
# module, under every interpreter of PYTHONS that has it; what passes on
# asyncio's and not here lands in build/conformance-diff-X.Y.Z.txt, and a
# table per version ends the run. Not in make test (~20 min a version with
# CONFORMANCE_JOBS=1; 2 runs two modules at once).
CONFORMANCE_JOBS ?= 1
conformance: lib
	@for py in $(PYTHONS); do \
	  if ! $$py -c 'import test.test_asyncio' 2>/dev/null; then echo "== $$py: no test.test_asyncio (skipped)"; continue; fi; \
	  v=$$($$py -c 'import platform; print(platform.python_version())'); \
	  echo "== conformance on Python $$v ($$py)"; \
	  LIBLOOP_LIBRARY=$(abspath $(BUILD))/libloop.so PYTHONPATH=bindings/python \
	    $$py bindings/python/tools/cpython_asyncio.py --compare --jobs $(CONFORMANCE_JOBS) \
	    --diff $(BUILD)/conformance-diff-$$v.txt | tee $(BUILD)/conformance-$$v.txt; \
	done; \
	echo "== conformance, per version"; cat $(BUILD)/conformance-*.txt 2>/dev/null | grep '^TOTAL'

# Every go test -fuzz target for FUZZTIME each (default 10m; not in make test).
fuzz:
	bash tests/fuzz.sh

# C tests under valgrind, the Go runtime built with its valgrind annotations (not in make test).
test-valgrind: lib
	bash tests/valgrind/run.sh
