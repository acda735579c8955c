# SPDX-License-Identifier: Apache-2.0
# Thin entry over CMake.  The README's two commands:
#   make demo   install what is missing, build, run xprobe on the bundled demo
#   make test   check the layering and banned functions, install what is
#               missing, build (plain, ASan+UBSan, fuzz), run unit, CLI,
#               live and fuzz tests
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
PY := /usr/bin/python3
# Fuzzing.  `make test` replays every target's whole corpus
# (tests/fuzz/corpus/<target>/) and then fuzzes each for FUZZ_SECONDS, so
# every decoder is exercised on every commit within the suite's budget;
# `make fuzz` is the long campaign, FUZZ_LONG_SECONDS per target, and
# with FUZZ_MERGE=1 it adds the inputs that reached new code to the
# corpus (docs/development.md, "Fuzzing").
FUZZ_SECONDS ?= 8
FUZZ_LONG_SECONDS ?= 600
FUZZ_MERGE ?= 0
# make install: under $(DESTDIR)$(PREFIX) (cmake/install.cmake lists what);
# install-files does the same from an existing build directory, BUILD_DIR.
PREFIX ?= /usr/local
DESTDIR ?=
BUILD_DIR ?= build

.PHONY: all deps test-deps build build-asan build-fuzz build-all demo test test-unit test-cli test-live \
	test-asan test-fuzz fuzz tracefs bench clean build-tsan test-tsan check-layering \
	install install-files

all: build

# what building and running the CLI need (make, make demo, make install)
deps:
	@./scripts/install-deps.sh build

# and what the tests, the sanitizer and the fuzz builds run (make test)
test-deps:
	@./scripts/install-deps.sh test

build: deps
	@./scripts/cmake-configure.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXPROBE_TEST_HOOKS=ON
	@cmake --build build -j $(JOBS)

build-asan: test-deps
	@./scripts/cmake-configure.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DXPROBE_SANITIZE=ON \
		-DXPROBE_TEST_HOOKS=ON
	@cmake --build build-asan -j $(JOBS)

build-fuzz: test-deps
	@CC=clang CXX=clang++ ./scripts/cmake-configure.sh build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DXPROBE_TEST_HOOKS=ON \
		-DXPROBE_FUZZ=ON
	@cmake --build build-fuzz -j $(JOBS)

tracefs:
	@./scripts/ensure-tracefs.sh

demo: build tracefs
	@./scripts/demo.sh build/bin/xprobe

test-unit: build build-asan
	@cd build && ctest --output-on-failure -j $(JOBS)
	@cd build-asan && ctest --output-on-failure -j $(JOBS)
	@XPROBE_BUILD=$(CURDIR)/build $(PY) -m pytest -q -p no:cacheprovider \
		tests/tools/test_check_layering.py -k lib_objects

# the offline CLI suite, plain then under ASan+UBSan
test-cli: build build-asan tracefs
	@XPROBE_BIN=$(CURDIR)/build/test-bin/xprobe XPROBE_BUILD=$(CURDIR)/build \
		$(PY) -m pytest -q -p no:cacheprovider tests/cli
	@XPROBE_BIN=$(CURDIR)/build-asan/test-bin/xprobe XPROBE_BUILD=$(CURDIR)/build-asan \
		ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		$(PY) -m pytest -q -p no:cacheprovider tests/cli

# the live suite: eBPF, uprobes, perf events, ptrace against fixtures (root)
test-live: build tracefs
	@XPROBE_BIN=$(CURDIR)/build/test-bin/xprobe XPROBE_BUILD=$(CURDIR)/build \
		$(PY) -m pytest -q -p no:cacheprovider tests/live

# every build make test needs, one after the other (each uses every core)
build-all: build build-asan build-tsan build-fuzz

test-fuzz: build-fuzz
	@./scripts/run-fuzz.sh build-fuzz/fuzz $(FUZZ_SECONDS)

fuzz: build-fuzz
	@XPROBE_FUZZ_MERGE=$(FUZZ_MERGE) ./scripts/run-fuzz.sh build-fuzz/fuzz $(FUZZ_LONG_SECONDS)

# libxprobe's multi-threaded recorder (and the session lifecycle) under
# ThreadSanitizer, in its own build directory (tests/unit/test_lib_threads.c);
# the Agent's server and producers too (test_lib_agent: its fixture loads
# the TSan-built libxprobe.so and aborts on a report).
build-tsan: test-deps
	@CC=clang CXX=clang++ ./scripts/cmake-configure.sh build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DXPROBE_TEST_HOOKS=ON \
		-DXPROBE_TSAN=ON
	@cmake --build build-tsan -j $(JOBS) --target test_lib_threads test_lib_session \
		test_lib_agent libxprobe xpl_agent_fixture test_lib_cupti cupti_double

# test_lib_cupti (the CUPTI backend against its test double, no CUDA
# toolkit needed): its buffer completions run on the double's worker thread
test-tsan: build-tsan
	@cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure \
		-R '^test_lib_(threads|session|agent|cupti)$$'

# The layering rule and the banned functions (scripts/check-layering.py),
# then the checker's own test against planted violations.  Needs no build:
# it runs first; the one case that reads the built objects' symbols (nm)
# runs in test-unit, after the build.
check-layering: test-deps
	@$(PY) scripts/check-layering.py
	@$(PY) -m pytest -q -p no:cacheprovider tests/tools -k "not lib_objects"

# each stage timed, the table printed at the end (scripts/test-stages.sh)
test:
	@MAKE="$(MAKE)" ./scripts/test-stages.sh

# DESTDIR made absolute: cmake --install would take a relative one from
# its own working directory.
XP_INSTALL = DESTDIR="$(if $(DESTDIR),$(abspath $(DESTDIR)))" cmake --install $(1) --prefix "$(PREFIX)"

install: build
	@$(call XP_INSTALL,build)

install-files:
	@$(call XP_INSTALL,$(BUILD_DIR))

bench: build
	@./scripts/install-deps.sh bench
	@for b in bench/bench_*.sh; do echo "== $$b"; $$b || exit 1; done

clean:
	rm -rf build build-asan build-fuzz build-tsan
