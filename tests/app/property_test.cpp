// Safety properties stated over families of scenarios, checked by RapidCheck (app/rapidcheck.hpp).

#include <catch2/catch.hpp>
#include <rapidcheck/catch.h>

#include <algorithm>

#include "app/rapidcheck.hpp"

namespace {
// Two-client races like two-clients-pause: more clients, workers, other pause lengths and times.
const std::vector<locksim::check::Knob> kRaces = {
    {"clients.count", 1, 4},
    {"topology.workers", 1, 3},
    {"faults.pauses.0.at_ms", 0, 40},
    {"faults.pauses.0.length_ms", 1, 20'000},
};
}  // namespace

TEST_CASE("strategies backed by the database never insert a duplicate in two-client races with a pause") {
  rc::prop("unique-index never inserts a duplicate",
           locksim::check::never_violates("two-clients-pause", "unique-index", "duplicate_rows", kRaces));
  auto with_sessions = kRaces;
  with_sessions.push_back({"zookeeper.session_timeout_ms", 2'000, 10'000});
  rc::prop("fencing-token never inserts a duplicate",
           locksim::check::never_violates("two-clients-pause", "fencing-token", "duplicate_rows", with_sessions));
  rc::prop("fencing-token never accepts a stale write",
           locksim::check::never_violates("two-clients-pause", "fencing-token", "stale_writes_accepted", with_sessions));
}

TEST_CASE("a lease lock's property fails, and RapidCheck shrinks the race to a pause just past the lease") {
  rc::detail::TestParams params;
  params.seed = 1;  // a fixed search: the counterexample is the same every run
  params.maxSuccess = 200;
  const auto result = rc::detail::checkTestable(
      locksim::check::never_violates("two-clients-pause", "redis-set-nx-ex-drop", "duplicate_rows",
                                     {{"faults.pauses.0.length_ms", 1, 20'000}}),
      rc::detail::TestMetadata{}, params);
  REQUIRE(result.is<rc::detail::FailureResult>());
  const auto& failure = result.get<rc::detail::FailureResult>();
  std::string sets;
  for (const auto& [type, value] : failure.counterExample) sets += value + "\n";
  INFO(sets);
  const auto at = sets.find("faults.pauses.0.length_ms=");
  REQUIRE(at != std::string::npos);
  const int length = std::stoi(sets.substr(at + std::string("faults.pauses.0.length_ms=").size()));
  // No pause within the 3 s lease lets a second holder in; shrunk, the pause is just long
  // enough to outlast the lease and the client's retry at 6 s, which takes the lock.
  CHECK(length > 3'000);
  CHECK(length < 8'000);
  CHECK(failure.description.find("fired: duplicate_rows") != std::string::npos);
  CHECK(failure.description.find("locksim replay locksim:") != std::string::npos);
}
