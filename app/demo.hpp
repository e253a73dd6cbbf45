#pragma once
// The built-in demonstration: the production case in miniature, on the bare engine.

#include <cstdint>
#include <string>

namespace locksim {

struct DemoOptions {
  std::uint64_t seed = 1;
  int trials = 200;
  int clients = 20;
  int workers = 4;
};

struct DemoResult {
  int trials = 0;
  int trials_with_duplicates = 0;
  long duplicate_rows = 0;
  long requests_handled = 0;
  long logical_operations = 0;
  std::uint64_t events = 0;
  std::uint64_t first_trace_hash = 0;
};

/// Runs `trials` independent trials (seeds seed, seed+1, ...) and sums their outcomes.
DemoResult run_demo(const DemoOptions& options);

}  // namespace locksim
