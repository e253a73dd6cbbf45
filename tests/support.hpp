#pragma once
// Helpers shared by the tests.

#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "sim/sim.hpp"

namespace test {

using namespace std::chrono_literals;

/// Test engines use guard-page stacks in every build, so an overflow is a clean crash.
inline sim::EngineConfig config(std::uint64_t seed = 1) {
  sim::EngineConfig c;
  c.seed = seed;
  c.guard_pages = true;
  return c;
}

/// A path in the temporary directory that no other test uses: CTest runs tests in parallel,
/// each in its own process, so the name holds the process id as well as a counter.
inline std::filesystem::path unique_temp_path(const std::string& prefix, const std::string& suffix = "") {
  static int counter = 0;
  return std::filesystem::temp_directory_path() /
         (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter) + suffix);
}

inline sim::Time at_ms(std::int64_t ms) { return sim::Time{std::chrono::milliseconds(ms)}; }

/// Runs `body` as one process from time 0 to the end of the run; returns the end time.
/// `stack_bytes`: the process's stack (EngineConfig::stack_bytes).
template <class Body>
sim::Time run_alone(Body body, std::size_t stack_bytes = sim::EngineConfig{}.stack_bytes) {
  sim::EngineConfig c = config();
  c.stack_bytes = stack_bytes;
  sim::Engine engine(c);
  engine.spawn(sim::kWorld, "holders", body);
  REQUIRE(engine.run().ok());
  return engine.now();
}

}  // namespace test
