# SPDX-License-Identifier: Apache-2.0
# Thin entry over CMake.  The README's two commands:
#   make demo   install what is missing, build, run xprobe on the bundled demo
#   make test   check the layering and banned functions, install what is
#               missing, build (plain, ASan+UBSan, fuzz), run unit, CLI,
#               live and fuzz tests
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
PY := /usr/bin/python3
# Seconds per fuzz target.  CI gives `make test` 90 minutes on 2 cores;
# everything but the fuzzing takes about 6 of them, so 12 targets x 90 s =
# 18 minutes keeps the whole run near 25 minutes, well under 40, with room
# for a few more targets.
FUZZ_SECONDS ?= 90
# make install: under $(DESTDIR)$(PREFIX) (cmake/install.cmake lists what);
# install-files does the same from an existing build directory, BUILD_DIR.
PREFIX ?= /usr/local
DESTDIR ?=
BUILD_DIR ?= build

.PHONY: all deps build build-asan build-fuzz demo test test-unit test-cli \
	test-asan test-fuzz tracefs bench clean build-tsan test-tsan check-layering \
	install install-files

all: build

deps:
	@./scripts/install-deps.sh

build: deps
	@cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build build -j $(JOBS)

build-asan: deps
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DXPROBE_SANITIZE=ON >/dev/null
	@cmake --build build-asan -j $(JOBS)

build-fuzz: deps
	@CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DXPROBE_FUZZ=ON >/dev/null
	@cmake --build build-fuzz -j $(JOBS)

tracefs:
	@./scripts/ensure-tracefs.sh

demo: build tracefs
	@./scripts/demo.sh build/bin/xprobe

test-unit: build build-asan
	@cd build && ctest --output-on-failure -j $(JOBS)
	@cd build-asan && ctest --output-on-failure -j $(JOBS)

test-cli: build build-asan tracefs
	@XPROBE_BIN=$(CURDIR)/build/bin/xprobe XPROBE_BUILD=$(CURDIR)/build \
		$(PY) -m pytest -q -p no:cacheprovider tests/cli tests/live
	@XPROBE_BIN=$(CURDIR)/build-asan/bin/xprobe XPROBE_BUILD=$(CURDIR)/build-asan \
		ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		$(PY) -m pytest -q -p no:cacheprovider tests/cli

test-fuzz: build-fuzz
	@./scripts/run-fuzz.sh build-fuzz/fuzz $(FUZZ_SECONDS)

# libxprobe's multi-threaded recorder (and the session lifecycle) under
# ThreadSanitizer, in its own build directory (tests/unit/test_lib_threads.c);
# the Agent's server and producers too (test_lib_agent: its fixture loads
# the TSan-built libxprobe.so and aborts on a report).
build-tsan: deps
	@CC=clang CXX=clang++ cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DXPROBE_TSAN=ON >/dev/null
	@cmake --build build-tsan -j $(JOBS) --target test_lib_threads test_lib_session \
		test_lib_agent libxprobe xpl_agent_fixture test_lib_cupti cupti_double

# test_lib_cupti (the CUPTI backend against its test double, no CUDA
# toolkit needed): its buffer completions run on the double's worker thread
test-tsan: build-tsan
	@cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure \
		-R '^test_lib_(threads|session|agent|cupti)$$'

# The layering rule and the banned functions (scripts/check-layering.py),
# then the checker's own test against planted violations.  Needs no build:
# it runs first.
check-layering:
	@$(PY) scripts/check-layering.py
	@$(PY) -m pytest -q -p no:cacheprovider tests/tools

test: check-layering test-unit test-tsan test-cli test-fuzz
	@echo "xprobe: all tests passed"

# DESTDIR made absolute: cmake --install would take a relative one from
# its own working directory.
XP_INSTALL = DESTDIR="$(if $(DESTDIR),$(abspath $(DESTDIR)))" cmake --install $(1) --prefix "$(PREFIX)"

install: build
	@$(call XP_INSTALL,build)

install-files:
	@$(call XP_INSTALL,$(BUILD_DIR))

bench: build
	@XPROBE_BENCH_DEPS=1 ./scripts/install-deps.sh
	@for b in bench/bench_*.sh; do echo "== $$b"; $$b || exit 1; done

clean:
	rm -rf build build-asan build-fuzz build-tsan
