// The built-in demonstration: the production case's race is reachable, and its result
// is a function of the seed alone.

#include <catch2/catch.hpp>

#include "app/demo.hpp"

TEST_CASE("the demonstration's retries into a saturated server produce duplicate rows") {
  locksim::DemoOptions options;
  options.trials = 50;
  const auto r = locksim::run_demo(options);
  CHECK(r.logical_operations == 50 * options.clients);
  CHECK(r.requests_handled > r.logical_operations);  // some requests were retried
  CHECK(r.duplicate_rows > 0);
  CHECK(r.trials_with_duplicates > 0);
}

TEST_CASE("the demonstration gives the same result for the same seed and another for another seed") {
  locksim::DemoOptions options;
  options.trials = 10;
  const auto a = locksim::run_demo(options);
  const auto b = locksim::run_demo(options);
  CHECK(a.first_trace_hash == b.first_trace_hash);
  CHECK(a.events == b.events);
  CHECK(a.duplicate_rows == b.duplicate_rows);
  options.seed = 1000;
  CHECK(locksim::run_demo(options).first_trace_hash != a.first_trace_hash);
}

TEST_CASE("queueing drives the duplicates: enough workers for the load leaves far fewer retries and duplicates") {
  locksim::DemoOptions saturated;
  saturated.trials = 50;
  locksim::DemoOptions ample = saturated;
  ample.workers = ample.clients;
  const auto busy = locksim::run_demo(saturated);
  const auto idle = locksim::run_demo(ample);
  CHECK(idle.requests_handled - idle.logical_operations < (busy.requests_handled - busy.logical_operations) / 10);
  CHECK(idle.duplicate_rows * 5 < busy.duplicate_rows);
}
