# The README's commands. Each does its own set-up: dependencies (scripts/setup), configure, build.
# SANITIZE=1: the same, in build-asan, with AddressSanitizer and UBSan (LOCKSIM_SANITIZE); any
# report they make ends the program with an error, so `make test SANITIZE=1` fails that test.
SANITIZE ?= 0
ifeq ($(SANITIZE),1)
BUILD ?= build-asan
BUILD_TYPE ?= RelWithDebInfo
# -Og: the tests run several times faster than at -O0 and about as fast as at -O1 (155 s against
# 144 s for all of them on 2 cores), and the objects, most of what this build costs, compile in
# about a third less time than at -O1 (five of them: 82 s against 126 s; models/db/database.cpp
# 19.6 s against 29.4 s). -g1: line tables only, which is all a
# report's stack trace reads (file, line, function); full debug information made each object
# about 25% slower to compile and 2.5 times larger to link.
# NDEBUG as in Release: the runs use the same stacks (no guard page, sim/engine.hpp).
SANITIZE_CMAKE := -DLOCKSIM_SANITIZE=ON -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-Og -g1 -DNDEBUG"
# The benchmarks measure the Release build: not built here.
BUILD_TARGETS := --target locksim locksim_tests
export ASAN_OPTIONS = halt_on_error=1:detect_leaks=1:print_stacktrace=1:check_initialization_order=1:strict_init_order=1
export UBSAN_OPTIONS = halt_on_error=1:print_stacktrace=1
# The fuzz test drives the command with a 4 GiB address-space ceiling per case, which a
# sanitized binary (terabytes of shadow memory reserved) cannot start under: it runs in the
# normal build only. The conformance suite compares the model with real servers: the
# sanitizers find nothing more there than in the normal build, and it would cost its minutes twice.
CTEST_ARGS := -LE "fuzz|conformance"
else
# What the tests run; `make bench` builds the benchmarks too.
BUILD_TARGETS := --target locksim locksim_tests locksim_fuzz locksim_redis_script locksim_coord_script
endif
BUILD ?= build
BUILD_TYPE ?= Release
WERROR ?= OFF
JOBS ?= $(shell nproc)

.PHONY: setup build demo test bench clean

setup:
	@scripts/setup

build: setup
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DLOCKSIM_WERROR=$(WERROR) $(SANITIZE_CMAKE) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) $(BUILD_TARGETS)

demo: build
	@$(BUILD)/app/locksim run account-bind

test: build
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# The benchmark's peers (SimGrid, SimPy 2) are installed first, then `build` configures again,
# so a build directory configured before SimGrid was there finds it now (bench/CMakeLists.txt).
bench:
	@scripts/setup --bench
	@$(MAKE) --no-print-directory build BUILD_TARGETS=
	@$(BUILD)/bench/locksim_bench

clean:
	rm -rf $(BUILD)
