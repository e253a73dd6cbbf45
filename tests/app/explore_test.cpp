// Exploring for a violation, replay tokens, and the narrated timeline.

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "app/deadline.hpp"
#include "app/search/explore.hpp"
#include "app/scenario.hpp"
#include "sim/errors.hpp"
#include "reports/explain.hpp"

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
  const auto story = locksim::reports::narrate(r.outcome.timeline);
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

TEST_CASE("a token reads back as printed, and one cut short or altered is refused by its check") {
  const locksim::Token t{1, "gc-pause-longer-than-lease", 0x4615dece5dc9e0bfull, {"clients.count=2"}, "redis-set-nx-ex-drop",
                         18446744073709551615ull, "pct.3.10.4.7"};
  const std::string text = t.text();
  const locksim::Token back = locksim::parse_token(text);
  CHECK(back.text() == text);
  CHECK(back.seed == t.seed);
  CHECK(back.sets == t.sets);
  CHECK(back.schedule == t.schedule);
  std::string altered = text;
  altered.replace(altered.find(":18446744073709551615:"), 22, ":18446744073709551614:");
  CHECK_THROWS_WITH(locksim::parse_token(altered), Catch::Contains("its check does not match"));
  CHECK_THROWS_WITH(locksim::parse_token(text.substr(0, text.size() - 1)), Catch::Contains("its check does not match"));
  const std::string body = text.substr(0, text.rfind(':'));
  CHECK_THROWS_AS(locksim::parse_token(body), locksim::InputError);  // no check at all
}

TEST_CASE("a token whose schedule is malformed is refused as the token's, naming its schedule") {
  const locksim::Token t{1, "two-clients-pause", 0, {}, "fencing-token", 1, "dfs.3=x"};
  CHECK_THROWS_WITH(locksim::parse_token(t.text()), Catch::Contains("replay token") && Catch::Contains("its schedule") &&
                                                         Catch::Contains("dfs.<choice>=<option>"));
}

TEST_CASE("a pct schedule deeper than the explorer's limit is refused before anything is allocated") {
  locksim::Token t{1, "select-for-update-deadlock", 0, {}, "select-for-update", 1, "pct.1000000000.1.1.1"};
  CHECK_THROWS_WITH(locksim::schedule_of(t), Catch::Contains("with d from 1 to 10"));
  t.schedule = "pct.3.-1.1.1";
  CHECK_THROWS_AS(locksim::schedule_of(t), locksim::InputError);
}

TEST_CASE("a token's scenario or override that is refused is reported as the token's") {
  auto t = locksim::explore(gc_pause("redis-token-cas-unlock")).token;
  t.sets = {"clients.count=0"};
  CHECK_THROWS_WITH(locksim::replay(t), Catch::StartsWith("replay token: "));
}

namespace {
locksim::ExploreOptions two_clients(const std::string& strategy) {
  locksim::ExploreOptions o;
  o.scenario = "two-clients-pause";
  o.strategy = strategy;
  o.property = "duplicate_rows";
  o.mode = "dfs";
  o.bound = 2;
  o.budget = 100'000;
  o.time_s = 600;
  return o;
}
}  // namespace

TEST_CASE("dfs covers every order and delay within the bound without a duplicate for a fencing token and a unique index") {
  for (const char* strategy : {"fencing-token", "unique-index"}) {
    CAPTURE(strategy);
    const auto f = locksim::explore(two_clients(strategy));
    CHECK_FALSE(f.found);
    CHECK(f.exhausted);
    CHECK(f.runs > 100);  // the race's orders and both latencies of every message were tried
    CHECK(f.choice_points > 10);
  }
}

TEST_CASE("dfs finds the duplicate of SET NX EX with a pause, which the default order does not show, and its token replays") {
  const auto f = locksim::explore(two_clients("redis-set-nx-ex-drop"));
  REQUIRE(f.found);
  CHECK(f.runs > 1);
  CHECK(f.token.schedule.starts_with("dfs."));  // found by deviating from the default
  const auto again = locksim::replay(locksim::parse_token(f.token.text()));
  CHECK(again.outcome.counts.at("duplicate_rows") == 1);
  auto by_default = f.token;
  by_default.schedule = "dfs";
  CHECK(locksim::replay(by_default).outcome.counts.at("duplicate_rows") == 0);
}

TEST_CASE("dfs without the pause exhausts its bound: the pause is what lets a second holder in") {
  auto o = two_clients("redis-set-nx-ex-drop");
  o.sets = {"faults.pauses=[]"};
  const auto f = locksim::explore(o);
  CHECK_FALSE(f.found);
  CHECK(f.exhausted);
}

TEST_CASE("a search finds the same run, token and count of runs whatever --jobs") {
  locksim::ExploreOptions random;
  random.scenario = "account-bind";
  random.strategy = "check-then-insert";
  random.property = "duplicate_rows";
  random.sets = {"clients.count=4", "clients.keys=2"};
  random.budget = 200;
  random.time_s = 600;
  locksim::ExploreOptions pct = random;
  pct.mode = "pct";
  auto dfs = two_clients("redis-set-nx-ex-drop");
  auto exhaustive = two_clients("unique-index");
  for (const auto* o : {&random, &pct, &dfs, &exhaustive}) {
    CAPTURE(o->mode, o->strategy);
    auto one = *o, three = *o;
    one.jobs = 1;
    three.jobs = 3;
    const auto a = locksim::explore(one), b = locksim::explore(three);
    CHECK(a.found == (o != &exhaustive));  // each search but the exhaustive one finds something
    CHECK(a.found == b.found);
    CHECK(a.runs == b.runs);
    CHECK(a.token.text() == b.token.text());
    CHECK(a.fired == b.fired);
    CHECK(a.exhausted == b.exhausted);
    CHECK(a.events == b.events);
  }
}

TEST_CASE("dfs goes level by level: its finding has the fewest choices off their default") {
  const auto f = locksim::explore(two_clients("redis-set-nx-ex-drop"));
  REQUIRE(f.found);
  const auto d = locksim::Schedule::parse(f.token.schedule).deviations;
  REQUIRE(d.size() == 1);  // the default run did not fire, so the first level that does has one deviation
  auto with_one_fewer = f.token;
  with_one_fewer.schedule = "dfs";
  CHECK(locksim::replay(with_one_fewer).outcome.counts.at("duplicate_rows") == 0);
}

TEST_CASE("a replayed trial's timeline names its schedule, not only its seed") {
  CHECK(locksim::describe_schedule("") == "");
  CHECK(locksim::describe_schedule("dfs") == "dfs, every choice its default");
  CHECK(locksim::describe_schedule("dfs.9=1.12=2") == "dfs: choice 9 takes option 1, choice 12 takes option 2");
  CHECK(locksim::describe_schedule("pct.3.14.13.5") == "pct, depth 3");
  const auto f = locksim::explore(two_clients("redis-set-nx-ex-drop"));
  REQUIRE(f.found);
  const auto r = locksim::replay(f.token);
  CHECK_THAT(r.outcome.timeline.schedule, Catch::Matches("dfs: choice [0-9]+ \\(t=[0-9.]+ s\\) takes option [0-9]+.*"));
}

TEST_CASE("dfs with a bound of 0 runs the default schedule once") {
  auto o = two_clients("unique-index");
  o.bound = 0;
  const auto f = locksim::explore(o);
  CHECK(f.exhausted);
  CHECK(f.runs == 1);
}

TEST_CASE("a shrunk run still violates the same property and is no larger than the one found") {
  SECTION("fewer clients and operations, from a random search on a crowded scenario") {
    locksim::ExploreOptions o;
    o.scenario = "account-bind";
    o.strategy = "check-then-insert";
    o.property = "duplicate_rows";
    o.sets = {"clients.count=40", "clients.operations=3"};
    o.budget = 20;
    const auto f = locksim::explore(o);
    REQUIRE(f.found);
    const auto s = locksim::shrink(f.token, o.property);
    CHECK(s.after.no_larger_than(s.before));
    CHECK(s.after.clients * s.after.operations < s.before.clients * s.before.operations);
    CHECK(s.after.clients <= 2);
    const auto r = locksim::replay(locksim::parse_token(s.token.text()));
    CHECK(r.outcome.counts.at("duplicate_rows") > 0);
  }
  SECTION("traffic: a shorter horizon, then only the operations involved, from a design at 200 requests/s") {
    locksim::ExploreOptions o;
    o.scenario = "evaluate-redis-lock";
    o.strategy = "check-then-insert";
    o.property = "duplicate_rows";
    o.sets = {"clients.traffic.duration_s=4"};
    o.budget = 5;
    const auto f = locksim::explore(o);
    REQUIRE(f.found);
    const auto s = locksim::shrink(f.token, o.property, 300);
    CHECK(s.before.traffic);
    CHECK(s.after.no_larger_than(s.before));
    CHECK(s.after.horizon_s < s.before.horizon_s);
    CHECK(s.after.clients * 20 < s.before.clients);  // from about 800 operations to a handful
    CHECK(s.after.text().find("operation(s) sent of traffic arriving for") != std::string::npos);
    bool only = false;
    for (const auto& set : s.token.sets) only = only || set.starts_with("clients.traffic.only=");
    CHECK(only);
    const auto r = locksim::replay(locksim::parse_token(s.token.text()));
    CHECK(r.outcome.counts.at("duplicate_rows") > 0);
    CHECK(r.outcome.operations == static_cast<std::uint64_t>(s.after.clients));
  }
  SECTION("a shorter pause and no more deviating choices, from a dfs finding") {
    const auto f = locksim::explore(two_clients("redis-set-nx-ex-drop"));
    REQUIRE(f.found);
    const auto s = locksim::shrink(f.token, "any");  // shrinks towards the first checker that fired
    CHECK(s.after.no_larger_than(s.before));
    CHECK(s.after.pause_ms < s.before.pause_ms);
    CHECK(s.after.choices >= 1);  // the default order holds no duplicate: the deviation stays
    const auto r = locksim::replay(locksim::parse_token(s.token.text()));
    CHECK(r.outcome.counts.at("duplicate_rows") > 0);
  }
}

TEST_CASE("a malformed dfs schedule is refused") {
  auto t = locksim::explore(two_clients("redis-set-nx-ex-drop")).token;
  for (const char* bad : {"dfs.3", "dfs.x=1", "dfs.3=0", "dfs.3=1junk"}) {
    CAPTURE(bad);
    t.schedule = bad;
    CHECK_THROWS_AS(locksim::replay(t), locksim::InputError);
  }
}

namespace {
locksim::ExploreOptions pause_anywhere(const std::string& strategy, int bound = 0) {
  locksim::ExploreOptions o;
  o.scenario = "pause-anywhere";
  o.strategy = strategy;
  o.property = "duplicate_rows";
  o.mode = "dfs";
  o.bound = bound;
  o.count_all = true;
  o.budget = 100'000;
  o.time_s = 600;
  return o;
}
}  // namespace

TEST_CASE("dfs places one pause anywhere: no placement breaks a fencing token, a few break a compare-and-delete unlock") {
  const auto fencing = locksim::explore(pause_anywhere("fencing-token"));
  CHECK_FALSE(fencing.found);
  CHECK(fencing.exhausted);
  CHECK(fencing.placement_points > 10);  // every statement, lock call and reply of both operations
  CHECK(fencing.runs > 2 * fencing.placement_points);  // each point: both lengths, before and after
  CHECK(fencing.placed == "1 pause of 5000 ms or 45000 ms on an app server placed anywhere");

  const auto cas = locksim::explore(pause_anywhere("redis-token-cas-unlock"));
  REQUIRE(cas.found);
  CHECK(cas.exhausted);
  CHECK(cas.firing_runs >= 1);
  CHECK(cas.firing_runs < cas.runs / 4);  // only a pause that outlasts the lease where the holder has read and not yet written
  const auto again = locksim::replay(locksim::parse_token(cas.token.text()));
  CHECK(again.outcome.counts.at("duplicate_rows") == 1);
  CHECK(again.outcome.counts.at("lease_expiry_violations") == 1);
  // Its title tells the pause the search placed, as the timeline shows it, not a choice's number.
  CHECK_THAT(again.outcome.timeline.schedule, Catch::Matches("dfs: the search placed a 45\\.000 s pause of app-[12] at t=[0-9.]+ s"));
  auto unplaced = cas.token;
  unplaced.schedule = "dfs";  // the same run with no pause placed
  CHECK(locksim::replay(unplaced).outcome.counts.at("duplicate_rows") == 0);
}

TEST_CASE("a shrink counts the pause a search placed in the run's size") {
  const auto cas = locksim::explore(pause_anywhere("redis-token-cas-unlock"));
  REQUIRE(cas.found);
  const auto shrunk = locksim::shrink(cas.token, "duplicate_rows");
  CHECK(shrunk.before.pause_ms == 45000);
  CHECK(shrunk.after.pause_ms <= shrunk.before.pause_ms);
  CHECK_THAT(shrunk.before.text(), Catch::Contains("45000 ms of pauses (scheduled and placed)"));
}

TEST_CASE("placed faults do not count towards the bound of reorderings, and a search without --all stops at its first") {
  auto unreduced = [](int bound) {  // every reordering: the reduction finds them all equivalent here
    auto o = pause_anywhere("unique-index", bound);
    o.reduction = false;
    return o;
  };
  const auto none = locksim::explore(unreduced(0));
  CHECK(none.runs > 1);  // bound 0, yet every placement ran
  CHECK(none.exhausted);
  const auto wider = locksim::explore(unreduced(1));
  CHECK(wider.runs > none.runs);
  auto first = pause_anywhere("redis-token-cas-unlock");
  first.count_all = false;
  const auto stopped = locksim::explore(first);
  const auto counted = locksim::explore(pause_anywhere("redis-token-cas-unlock"));
  REQUIRE(stopped.found);
  CHECK_FALSE(stopped.exhausted);
  CHECK(stopped.runs < counted.runs);
  CHECK(stopped.token.text() == counted.token.text());  // the same first finding
}

TEST_CASE("a run and a random search place no fault: only dfs places them") {
  auto random = pause_anywhere("redis-token-cas-unlock");
  random.mode = "random";
  random.budget = 20;
  CHECK_FALSE(locksim::explore(random).found);
  auto s = locksim::load_scenario(locksim::scenario_path("pause-anywhere"), {}, {"redis-token-cas-unlock"});
  s.trials = 3;
  const auto ran = locksim::run_scenario(s);
  const auto& counts = ran.strategies.at(0).counts;
  CHECK((counts.count("duplicate_rows") == 0 || counts.at("duplicate_rows").total == 0));
}

TEST_CASE("a search that places faults counts the same schedules and findings whatever --jobs") {
  auto one = pause_anywhere("redis-token-cas-unlock", 1), three = one;
  one.jobs = 1;
  three.jobs = 3;
  const auto a = locksim::explore(one), b = locksim::explore(three);
  CHECK(a.runs == b.runs);
  CHECK(a.firing_runs == b.firing_runs);
  CHECK(a.token.text() == b.token.text());
  CHECK(a.events == b.events);
}

TEST_CASE("swarm runs turn the scenario's faults on and off by seed, and a finding's token replays with its faults") {
  locksim::ExploreOptions o;
  o.scenario = "redlock-restart-without-fsync";
  o.strategy = "redlock";
  o.property = "duplicate_rows";
  o.mode = "swarm";
  o.budget = 50;
  o.shrink = false;
  const auto f = locksim::explore(o);
  REQUIRE(f.found);
  // The finding's faults are an override in its token, so the replay runs the same faults.
  REQUIRE_FALSE(f.token.sets.empty());
  CHECK(f.token.sets.back().starts_with("faults="));
  CHECK_FALSE(f.faults_on.empty());
  const auto again = locksim::replay(locksim::parse_token(f.token.text()));
  CHECK(again.outcome.counts.at("duplicate_rows") >= 1);
  // Seeds pick different faults, each the same every time it is asked.
  std::set<std::vector<std::string>> picked;
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    const auto on = locksim::swarm_faults(o, seed);
    CHECK(on == locksim::swarm_faults(o, seed));
    picked.insert(on);
  }
  CHECK(picked.count({"crashes.0", "partitions.0"}) == 1);  // both on
  CHECK(picked.size() >= 3);  // and some with one or none of them
  auto three = o;
  three.jobs = 3;
  CHECK(locksim::explore(three).token.text() == f.token.text());
}

TEST_CASE("a dfs search says about how many schedules its bound holds, from the default run's choices") {
  // Three choices of 2, 3 and 1 options: 1 run with none off its default, 1 + 2 with one, 2 with two.
  CHECK(locksim::schedules_within({2, 3, 1}, 0) == 1);
  CHECK(locksim::schedules_within({2, 3, 1}, 1) == 4);
  CHECK(locksim::schedules_within({2, 3, 1}, 2) == 6);
  CHECK(locksim::schedules_within({2, 3, 1}, 5) == 6);
  // A search that exhausts its bound ran no more than the estimate holds; one cut short by its
  // budget is told how much wider the bound is.
  auto o = two_clients("unique-index");
  o.reduction = false;
  o.bound = 1;
  const auto small = locksim::explore(o);
  REQUIRE(small.exhausted);
  CHECK(small.estimated_schedules >= 1);
  CHECK(static_cast<double>(small.runs) <= 2 * small.estimated_schedules);
  o.bound = 3;
  o.budget = 50;
  const auto cut = locksim::explore(o);
  CHECK_FALSE(cut.exhausted);
  CHECK(cut.estimated_schedules > 50);
}

TEST_CASE("a shrink given no time left starts no trial after the one that confirms the finding, and says it stopped") {
  const auto f = locksim::explore(gc_pause("redis-set-nx-ex-drop"));
  REQUIRE(f.found);
  const locksim::Shrunk unbounded = locksim::shrink(f.token, "any");
  REQUIRE(unbounded.runs > 1);
  CHECK(!unbounded.timed_out);
  const locksim::Shrunk bounded = locksim::shrink(f.token, "any", 2000, 1e-9);
  CHECK(bounded.timed_out);
  CHECK(bounded.runs == 0);
  CHECK(bounded.token.text() == f.token.text());
}

TEST_CASE("a trial under way when its deadline passes ends unfinished, where its engine stops it") {
  // A GC pause every microsecond: the trial runs to its event budget, ten million events, far
  // past the deadline's 50 ms on any machine.
  locksim::Token t;
  t.engine = LOCKSIM_ENGINE_VERSION;
  t.scenario = "gc-pause-longer-than-lease";
  t.sets = {R"(faults.gc_pauses.interval={"fixed_ms":0.001})", R"(faults.gc_pauses.length={"fixed_ms":0.001})"};
  t.strategy = "redis-set-nx-ex-drop";
  t.seed = 1;
  t.scenario_hash = locksim::load_scenario(locksim::scenario_path(t.scenario), t.sets, {t.strategy}).hash;
  const locksim::TrialsDeadline deadline(0.05);
  CHECK_THROWS_AS(locksim::replay(t), sim::Interrupted);
  CHECK(deadline.passed());
}

namespace {
// A dfs search for deadlocks over one deviation of a sessions scenario of the catalogue.
locksim::ExploreOptions sessions_deadlocks(const std::string& scenario) {
  locksim::ExploreOptions o;
  o.scenario = scenario;
  o.strategy = "sessions";
  o.property = "deadlocks";
  o.mode = "dfs";
  o.bound = 1;
  o.budget = 1000;
  o.time_s = 600;
  o.shrink = false;
  return o;
}
}  // namespace

TEST_CASE("a dfs search reaches the deadlock of InnoDB's purge race, and the replay's title names the purge") {
  const auto f = locksim::explore(sessions_deadlocks("delete-commit-unique-key"));
  REQUIRE(f.found);
  const auto r = locksim::replay(f.token);
  CHECK(r.outcome.counts.at("deadlocks") == 1);
  CHECK_THAT(r.outcome.timeline.schedule, Catch::Contains("InnoDB's purge runs before the waiters a commit woke"));
}

TEST_CASE("a dfs search reaches either waiter as the deadlock's victim when one rollback grants both, and the replay names the order") {
  locksim::ExploreOptions o = sessions_deadlocks("three-inserts-one-rollback");
  o.count_all = true;
  std::set<double> victims;  // steps.4.error: 1213 where S2, the first waiter, was the victim
  o.each_run = [&](const models::checkers::Counts& counts) { victims.insert(counts.at("steps.4.error")); };
  const auto f = locksim::explore(o);
  CHECK(f.exhausted);
  CHECK(victims == std::set<double>{0.0, 1213.0});

  // The default run takes the latest granted first; the replay of the other order says so.
  const auto default_run = locksim::replay(f.token);
  CHECK(default_run.outcome.counts.at("steps.4.error") == 1213);
  const auto wake = std::find_if(default_run.asked.begin(), default_run.asked.end(),
                                 [](const locksim::Asked& a) { return a.stream == "innodb.wake"; });
  REQUIRE(wake != default_run.asked.end());
  CHECK(wake->labels == std::vector<std::string>{"the latest granted waiter runs next", "the queue's waiter #1 runs next"});
  auto other_order = f.token;
  other_order.schedule = fmt::format("dfs.{}=1", wake - default_run.asked.begin());
  const auto r = locksim::replay(other_order);
  CHECK(r.outcome.counts.at("steps.4.error") == 0);  // S3 was the victim
  CHECK_THAT(r.outcome.timeline.schedule, Catch::Contains("InnoDB runs the queue's #1 next rather than the latest"));
}
