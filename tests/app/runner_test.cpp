// The runner's queue: outcomes folded in trial order as they finish, in a bounded reorder
// buffer, give the results of keeping every outcome; a run stopped by its deadline reports
// the trials it did, a prefix of the trial-major order.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "app/exec/ordered_work.hpp"
#include "app/runner.hpp"
#include "app/scenario.hpp"

namespace {

using json = nlohmann::json;

// A strategy's results as results.json has them, less the timing fields.
json strategy_json(const locksim::reports::RunResults& r, const std::string& name) {
  auto doc = json::parse(locksim::reports::to_json(r));
  for (auto& s : doc["strategies"])
    if (s["name"] == name) {
      s.erase("timing");
      return s;
    }
  FAIL("no strategy " << name);
  return {};
}

std::string without_timing(const locksim::reports::RunResults& r) {
  auto doc = json::parse(locksim::reports::to_json(r));
  doc.erase("timing");
  for (auto& s : doc["strategies"]) s.erase("timing");
  return doc.dump();
}

locksim::Scenario account_bind(int trials, std::vector<locksim::StrategyChoice> strategies) {
  auto s = locksim::load_scenario(locksim::scenario_path("account-bind"));
  s.trials = trials;
  s.strategies = std::move(strategies);
  return s;
}

}  // namespace

TEST_CASE("results that finish out of order are folded in item order, and no item is handed out a window ahead") {
  std::vector<std::size_t> folded;
  locksim::OrderedWork<std::size_t> work(100, 4, [&](std::size_t item, std::size_t&& r) {
    CHECK(r == item * 10);
    folded.push_back(item);
  });
  using Take = locksim::OrderedWork<std::size_t>::Take;
  std::size_t item = 0;
  for (std::size_t expected = 0; expected < 4; ++expected) {
    REQUIRE(work.try_take(item) == Take::item);
    CHECK(item == expected);
  }
  CHECK(work.try_take(item) == Take::wait);  // item 0 is not done: item 4 would be a window ahead
  for (std::size_t late : {3, 1, 2}) work.done(late, late * 10);
  CHECK(work.buffered() == 3);
  CHECK(folded.empty());
  CHECK(work.try_take(item) == Take::wait);  // however many finish after it, item 0 holds the window
  work.done(0, 0);
  CHECK(folded == std::vector<std::size_t>{0, 1, 2, 3});
  CHECK(work.buffered() == 0);
  REQUIRE(work.try_take(item) == Take::item);
  CHECK(item == 4);
}

TEST_CASE("a fold that throws ends the work: nothing after it is folded, even a result done later, and the failure is the "
          "work's") {
  struct Interrupted {};
  std::vector<std::size_t> folded;
  locksim::OrderedWork<std::size_t> work(10, 10, [&](std::size_t item, std::size_t&&) {
    folded.push_back(item);
    if (item == 1) throw Interrupted{};
  });
  using Take = locksim::OrderedWork<std::size_t>::Take;
  std::size_t item = 0;
  for (int i = 0; i < 3; ++i) REQUIRE(work.try_take(item) == Take::item);
  work.done(0, 0);
  work.done(1, 0);  // its fold throws: kept as the failure, not thrown at the finisher
  work.done(2, 0);  // another thread's item, finished after the failure
  CHECK(folded == std::vector<std::size_t>{0, 1});
  CHECK(work.try_take(item) == Take::over);
  CHECK_THROWS_AS(work.run(1, [](std::size_t i) { return i; }), Interrupted);
  CHECK(folded == std::vector<std::size_t>{0, 1});
}

TEST_CASE("an item dropped ends the work: nothing from it on is folded, even a result done later, and nothing more is "
          "handed out") {
  std::vector<std::size_t> folded;
  locksim::OrderedWork<std::size_t> work(10, 10, [&](std::size_t item, std::size_t&&) { folded.push_back(item); });
  using Take = locksim::OrderedWork<std::size_t>::Take;
  std::size_t item = 0;
  for (int i = 0; i < 4; ++i) REQUIRE(work.try_take(item) == Take::item);
  work.done(3, 0);  // ahead of the drop: waits in the buffer, then goes with it
  work.done(0, 0);
  work.drop(2);
  work.done(1, 0);
  work.done(2, 0);  // too late: it was dropped
  CHECK(folded == std::vector<std::size_t>{0, 1});
  CHECK(work.try_take(item) == Take::over);
  CHECK(work.stopped());
  CHECK(work.buffered() == 0);
  // Through run(): an item whose work gives nothing is dropped; the run ends without failing.
  std::vector<std::size_t> ran;
  locksim::OrderedWork<std::size_t> runs(10, 10, [&](std::size_t i, std::size_t&&) { ran.push_back(i); });
  runs.run(1, [](std::size_t i) -> std::optional<std::size_t> {
    if (i == 5) return std::nullopt;
    return i;
  });
  CHECK(ran == std::vector<std::size_t>{0, 1, 2, 3, 4});
}

TEST_CASE("the --time deadline reaches the trials under way: a trial under way at it stops there, and is not counted") {
  // A million operations, seconds of work; the deadline has passed when the trial starts.
  locksim::Scenario s = locksim::load_scenario(locksim::scenario_path("account-bind"), {"clients.count=1000", "clients.operations=1000"});
  s.trials = 1;
  s.strategies = {{"check-then-insert", {}}};
  const auto r = locksim::run_scenario(s, {.jobs = 1, .interrupt_at = std::chrono::steady_clock::now()});
  CHECK(r.stopped == "time");
  REQUIRE(r.strategies.size() == 1);
  CHECK(r.strategies.front().trials == 0);
}

TEST_CASE("work whose stop says true hands out nothing more, and the items handed out are a prefix") {
  int asked = 0;
  locksim::OrderedWork<int> work(10, 100, [](std::size_t, int&&) {}, [&] { return ++asked > 3; });
  using Take = locksim::OrderedWork<int>::Take;
  std::size_t item = 0;
  for (int i = 0; i < 3; ++i) REQUIRE(work.try_take(item) == Take::item);
  CHECK(work.try_take(item) == Take::over);
  CHECK(work.try_take(item) == Take::over);
  CHECK(asked == 4);  // asked before each item, not again once stopped
  CHECK(work.stopped());
  CHECK(work.handed_out() == 3);
}

TEST_CASE("folding outcomes in trial order gives the same results as keeping them all") {
  const auto s = account_bind(8, {{"check-then-insert", {}}});
  // Every outcome kept, then summed in trial order, as the runner once did.
  std::uint64_t trace_hash = 0, operations = 0, events = 0;
  double duplicate_rows = 0;
  std::uint64_t fired = 0;
  std::vector<std::string> examples;
  locksim::reports::Histogram latency;
  std::vector<locksim::TrialOutcome> outcomes;
  for (int t = 0; t < s.trials; ++t)
    outcomes.push_back(locksim::run_trial(s, s.strategies[0], s.seed + static_cast<std::uint64_t>(t)));
  for (std::size_t t = 0; t < outcomes.size(); ++t) {
    const auto& o = outcomes[t];
    trace_hash = (trace_hash ^ o.trace_hash) * 0x100000001b3ull;
    operations += o.operations;
    events += o.events;
    duplicate_rows += o.counts.at("duplicate_rows");
    fired += o.counts.at("duplicate_rows") > 0 ? 1 : 0;
    latency.merge(o.latency);
    for (const auto& e : o.examples)
      if (examples.size() < 3) examples.push_back("seed " + std::to_string(s.seed + t) + ": " + e);
  }
  REQUIRE(examples.size() == 3);  // enough to show that the first three are kept, in trial order

  const auto serial = locksim::run_scenario(s, locksim::RunControl{.jobs = 1});
  const auto lockstep = locksim::run_scenario(s, locksim::RunControl{.jobs = 3, .window = 1});
  const auto loose = locksim::run_scenario(s, locksim::RunControl{.jobs = 3, .window = 1000});
  for (const auto* r : {&serial, &lockstep, &loose}) {
    const auto& st = r->strategies.front();
    CHECK(st.trials == 8);
    CHECK(st.trace_hash == trace_hash);
    CHECK(st.first_trace_hash == outcomes.front().trace_hash);
    CHECK(st.operations == operations);
    CHECK(st.events == events);
    CHECK(st.counts.at("duplicate_rows").total == duplicate_rows);
    CHECK(st.counts.at("duplicate_rows").fired == fired);
    CHECK(st.latency == latency);
    CHECK(st.examples == examples);
  }
  CHECK(without_timing(lockstep) == without_timing(serial));
  CHECK(without_timing(loose) == without_timing(serial));
}

TEST_CASE("a run stopped by its deadline reports the trials it did per strategy, a prefix in trial-major order") {
  const locksim::StrategyChoice a{"check-then-insert", {}}, b{"unique-index", {}};
  const auto s = account_bind(6, {a, b});
  for (int jobs : {1, 3}) {
    INFO("jobs " << jobs);
    // Five trials handed out: trial 0 of a and b, trial 1 of a and b, trial 2 of a.
    const auto r = locksim::run_scenario(s, {.jobs = jobs, .stop = locksim::stop_after_trials(5)});
    CHECK(r.stopped == "time");
    REQUIRE(r.strategies.size() == 2);
    CHECK(r.strategies[0].trials == 3);
    CHECK(r.strategies[1].trials == 2);
    CHECK(r.trials == 6);  // as asked
    // The trials done are each strategy's first ones: the results of runs asked for no more.
    CHECK(strategy_json(r, a.shown()) == strategy_json(locksim::run_scenario(account_bind(3, {a})), a.shown()));
    CHECK(strategy_json(r, b.shown()) == strategy_json(locksim::run_scenario(account_bind(2, {b})), b.shown()));
    const auto doc = json::parse(locksim::reports::to_json(r));
    CHECK(doc["stopped"] == "time");
    CHECK(doc["strategies"][0]["trials"] == 3);
    CHECK(locksim::reports::table(r).find("by --time: trials done per strategy (of 6 asked): check-then-insert 3, "
                                          "unique-index 2") != std::string::npos);
    // Asked again for the same trials, the run repeats them.
    CHECK(without_timing(locksim::run_scenario(s, {.jobs = jobs, .stop = locksim::same_trials_as(r)})) == without_timing(r));
  }
}

TEST_CASE("a run whose deadline passed before it began runs no trial and says so") {
  const auto s = account_bind(4, {{"check-then-insert", {}}});
  const auto r = locksim::run_scenario(s, {.stop = [] { return true; }});
  CHECK(r.stopped == "time");
  REQUIRE(r.strategies.size() == 1);
  CHECK(r.strategies[0].trials == 0);
  CHECK(r.strategies[0].counts.empty());
  CHECK_NOTHROW(json::parse(locksim::reports::to_json(r)));
}

TEST_CASE("a run that ends before its stop says true is not reported as stopped") {
  const auto s = account_bind(3, {{"unique-index", {}}});
  const auto r = locksim::run_scenario(s, {.jobs = 2, .stop = locksim::stop_after_trials(3)});
  CHECK(r.stopped.empty());
  CHECK(r.strategies[0].trials == 3);
  CHECK_FALSE(json::parse(locksim::reports::to_json(r)).contains("stopped"));
}
