# The README's commands. Each does its own set-up: dependencies (scripts/setup), configure, build.
BUILD ?= build
BUILD_TYPE ?= Release
WERROR ?= OFF
JOBS ?= $(shell nproc)

.PHONY: setup build demo test bench clean

setup:
	@scripts/setup

build: setup
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DLOCKSIM_WERROR=$(WERROR) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@$(BUILD)/app/locksim run account-bind

test: build
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The benchmark's peers (SimGrid, SimPy 2) are installed first, then `build` configures again,
# so a build directory configured before SimGrid was there finds it now (bench/CMakeLists.txt).
bench:
	@scripts/setup --bench
	@$(MAKE) --no-print-directory build
	@$(BUILD)/bench/locksim_bench

clean:
	rm -rf $(BUILD)
