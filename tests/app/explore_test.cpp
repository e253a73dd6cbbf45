// Exploring for a violation, replay tokens, and the narrated timeline.

#include <catch2/catch.hpp>

#include "app/explore.hpp"

namespace {
locksim::ExploreOptions gc_pause(const std::string& strategy, const std::string& property = "any") {
  locksim::ExploreOptions o;
  o.scenario = "gc-pause-longer-than-lease";
  o.strategy = strategy;
  o.property = property;
  o.budget = 20;
  return o;
}
}  // namespace

TEST_CASE("explore finds the GC-pause violation and its token replays to the same checkers") {
  const auto f = locksim::explore(gc_pause("redis-set-nx-ex-drop"));
  REQUIRE(f.found);
  CHECK(f.runs <= 20);
  const auto token = locksim::parse_token(f.token.text());
  CHECK(token.text() == f.token.text());
  const auto r = locksim::replay(token);
  CHECK(r.fired == f.fired);
  CHECK(r.outcome.counts.at("duplicate_rows") == 1);
  // Told in order: the pause before the second holder's acquire, both inserts.
  const auto story = locksim::narrate(r.outcome.timeline);
  std::string joined;
  for (const auto& line : story) joined += line + "\n";
  const auto paused = joined.find("app-1 paused");
  const auto second = joined.find("app-2 worker");
  REQUIRE(paused != std::string::npos);
  REQUIRE(second != std::string::npos);
  CHECK(paused < second);
  CHECK(joined.find("its lease ran out at the lock service") != std::string::npos);
}

TEST_CASE("pct finds the SELECT FOR UPDATE deadlock, states its bound, and its token replays the same schedule") {
  locksim::ExploreOptions o;
  o.scenario = "select-for-update-deadlock";
  o.strategy = "select-for-update";
  o.property = "deadlocks";
  o.mode = "pct";
  o.budget = 50;
  const auto f = locksim::explore(o);
  REQUIRE(f.found);
  CHECK(f.pct_bound > 0);
  CHECK(f.pct_bound <= 1);
  CHECK(f.token.schedule.starts_with("pct.3."));
  const auto token = locksim::parse_token(f.token.text());
  CHECK(token.schedule == f.token.schedule);
  const auto a = locksim::replay(token);
  const auto b = locksim::replay(token);
  CHECK(a.outcome.trace_hash == b.outcome.trace_hash);
  CHECK(a.outcome.counts.at("deadlocks") > 0);
  // Without its schedule the same seed is another run.
  auto plain = token;
  plain.schedule.clear();
  CHECK(locksim::replay(plain).outcome.trace_hash != a.outcome.trace_hash);
}

TEST_CASE("explore reports nothing when the property never fires within the budget") {
  const auto f = locksim::explore(gc_pause("lock-plus-unique-index", "duplicate_rows"));
  CHECK_FALSE(f.found);
  CHECK(f.runs == 20);
}

TEST_CASE("a token is refused when its scenario changed, its engine differs, or it is not a token") {
  auto t = locksim::explore(gc_pause("redis-token-cas-unlock")).token;
  auto changed = t;
  changed.scenario_hash ^= 1;
  CHECK_THROWS_WITH(locksim::replay(changed), Catch::Contains("the scenario has changed"));
  auto newer = t;
  newer.engine += 1;
  CHECK_THROWS_WITH(locksim::replay(newer), Catch::Contains("engine version"));
  auto overridden = t;
  overridden.sets = {"clients.timeout_ms=5"};  // the same file, run differently: another hash
  CHECK_THROWS_AS(locksim::replay(overridden), locksim::InputError);
  CHECK_THROWS_AS(locksim::parse_token("locksim:1:x"), locksim::InputError);
  CHECK_THROWS_AS(locksim::parse_token("hello"), locksim::InputError);
}
