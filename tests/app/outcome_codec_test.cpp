// A trial's outcome sent from another MPI rank (app/exec/outcome_codec.hpp): what the leader
// decodes is what the trial produced, every figure exact, so its fold is a local run's.

#include <catch2/catch.hpp>

#include <stdexcept>

#include "app/exec/outcome_codec.hpp"
#include "app/runner.hpp"
#include "app/scenario.hpp"

namespace {

locksim::TrialOutcome first_trial(const std::string& scenario) {
  const locksim::Scenario s = locksim::load_scenario(locksim::scenario_path(scenario));
  return locksim::run_trial(s, s.strategies.front(), s.seed, locksim::TraceKept::timeline);
}

void check_same(const locksim::TrialOutcome& a, const locksim::TrialOutcome& b) {
  CHECK(a.counts == b.counts);
  CHECK(a.latency == b.latency);
  CHECK(a.failed_latency == b.failed_latency);
  CHECK(a.time_ok == b.time_ok);
  CHECK(a.operations == b.operations);
  CHECK(a.db_statements == b.db_statements);
  CHECK(a.redis_commands == b.redis_commands);
  CHECK(a.events == b.events);
  CHECK(a.trace_hash == b.trace_hash);
  CHECK(a.examples == b.examples);
  CHECK(a.step_outcomes == b.step_outcomes);
  CHECK(a.timeline.bars.size() == b.timeline.bars.size());
  CHECK(a.timeline.statements.size() == b.timeline.statements.size());
  CHECK(a.timeline.messages.size() == b.timeline.messages.size());
  CHECK(a.steps.size() == b.steps.size());
  CHECK(a.tables.size() == b.tables.size());
  CHECK(locksim::encode(b) == locksim::encode(a));  // and everything else: the same bytes again
}

}  // namespace

TEST_CASE("a client trial's outcome, timeline and latencies included, decodes to what it was") {
  const locksim::TrialOutcome o = first_trial("del-removes-another-lock");
  REQUIRE(o.latency.count() > 0);
  REQUIRE(!o.timeline.bars.empty());
  REQUIRE(!o.timeline.messages.empty());
  const locksim::TrialOutcome back = locksim::decode_outcome(locksim::encode(o));
  check_same(o, back);
  for (std::size_t i = 0; i < o.timeline.messages.size(); ++i) {
    CHECK(back.timeline.messages[i].request == o.timeline.messages[i].request);
    CHECK(back.timeline.messages[i].gave_up_s == o.timeline.messages[i].gave_up_s);
  }
  for (std::size_t i = 0; i < o.timeline.bars.size(); ++i) {
    CHECK(back.timeline.bars[i].lock == o.timeline.bars[i].lock);
    CHECK(back.timeline.bars[i].holder == o.timeline.bars[i].holder);
    CHECK(back.timeline.bars[i].end == o.timeline.bars[i].end);
    CHECK(back.timeline.bars[i].from_s == o.timeline.bars[i].from_s);  // exact, not close
    CHECK(back.timeline.bars[i].lease_to_s == o.timeline.bars[i].lease_to_s);
  }
  CHECK(back.latency.percentile(99) == o.latency.percentile(99));
}

TEST_CASE("a sessions trial's steps, rows and tables decode to what they were") {
  const locksim::TrialOutcome o = first_trial("three-inserts-one-rollback");
  REQUIRE(!o.steps.empty());
  REQUIRE(!o.tables.empty());
  const locksim::TrialOutcome back = locksim::decode_outcome(locksim::encode(o));
  check_same(o, back);
  for (std::size_t i = 0; i < o.steps.size(); ++i) {
    CHECK(back.steps[i].sql == o.steps[i].sql);
    CHECK(back.steps[i].error == o.steps[i].error);
    CHECK(back.steps[i].deadlock_cycle == o.steps[i].deadlock_cycle);
    CHECK(back.steps[i].rows == o.steps[i].rows);
  }
  CHECK(back.tables.front().rows == o.tables.front().rows);
}

TEST_CASE("bytes that are not an encoded outcome are refused, not read as one") {
  CHECK_THROWS_AS(locksim::decode_outcome("not cbor"), std::runtime_error);
  CHECK_THROWS_AS(locksim::decode_outcome(""), std::runtime_error);
  std::string cut = locksim::encode(first_trial("three-inserts-one-rollback"));
  cut.resize(cut.size() / 2);
  CHECK_THROWS_AS(locksim::decode_outcome(cut), std::runtime_error);
}
