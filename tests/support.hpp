#pragma once
// Helpers shared by the tests.

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

inline sim::Time at_ms(std::int64_t ms) { return sim::Time{std::chrono::milliseconds(ms)}; }

}  // namespace test
