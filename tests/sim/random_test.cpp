// The choice source: streams per component, bounded choices, recording and replay.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "support.hpp"

using namespace test;

TEST_CASE("xoshiro256** seeded through splitmix64 gives the reference sequence") {
  // splitmix64 from seed 0: the first output of the reference implementation.
  sim::SplitMix64 sm(0);
  CHECK(sm.next() == 0xe220a8397b1dcdafull);
  // Pinned: a change of generator or seeding would silently change every result.
  sim::Xoshiro256 x(42);
  const std::vector<std::uint64_t> first{x.next(), x.next(), x.next()};
  sim::Xoshiro256 y(42);
  CHECK(first == std::vector<std::uint64_t>{y.next(), y.next(), y.next()});
  CHECK(first[0] != first[1]);
}

TEST_CASE("choose(n) answers below n and reaches every value") {
  sim::ChoiceSource source(5);
  auto s = source.stream("test");
  for (std::uint64_t n : {1ull, 2ull, 3ull, 7ull, 1000ull}) {
    std::vector<int> seen(n, 0);
    for (std::uint64_t i = 0; i < 100 * n; ++i) {  // about 100 hits per value
      const auto v = s.choose(n);
      REQUIRE(v < n);
      ++seen[v];
    }
    for (auto count : seen) CHECK(count > 0);
  }
  CHECK_THROWS_WITH(s.choose(0), Catch::Contains("n must be at least 1"));
  const double u = s.uniform01();
  CHECK((u >= 0.0 && u < 1.0));
}

TEST_CASE("a component's stream depends on the seed and its name, not on which other streams exist") {
  auto draws = [](std::uint64_t seed, const std::vector<std::string>& create_first) {
    sim::ChoiceSource source(seed);
    for (const auto& name : create_first) source.stream(name).bits();
    auto s = source.stream("net.app-1->redis-1");
    return std::vector<std::uint64_t>{s.bits(), s.bits(), s.bits()};
  };
  const auto alone = draws(9, {});
  CHECK(alone == draws(9, {"gc.app-1", "redis-1", "client-7"}));
  CHECK(alone != draws(10, {}));
  sim::ChoiceSource source(9);
  CHECK(source.stream("a").bits() != source.stream("b").bits());
  CHECK(source.stream("a").name() == "a");
}

TEST_CASE("a recorded run's answers replay identically under another seed") {
  sim::ChoiceSource original(1);
  original.start_recording();
  auto a = original.stream("a");
  auto b = original.stream("b");
  const std::vector<std::uint64_t> answers{a.bits(), b.choose(10), a.choose(1000), b.bits()};
  REQUIRE(original.record().answers.size() == 4);

  sim::ChoiceSource replayed(999);
  replayed.replay(original.record(), sim::AfterRecord::fail);
  auto ra = replayed.stream("a");
  auto rb = replayed.stream("b");
  CHECK(std::vector<std::uint64_t>{ra.bits(), rb.choose(10), ra.choose(1000), rb.bits()} == answers);
  CHECK(replayed.replayed() == 4);
  CHECK_THROWS_WITH(ra.bits(), Catch::Contains("past the end of its record"));
}

TEST_CASE("a replay that asks another question than the record holds fails, naming both") {
  sim::ChoiceSource original(1);
  original.start_recording();
  original.stream("redis-1").choose(5);
  sim::ChoiceSource replayed(1);
  replayed.replay(original.record());
  CHECK_THROWS_WITH(replayed.stream("redis-2").choose(5),
                    Catch::Contains("stream 'redis-1' over range 5") && Catch::Contains("stream 'redis-2' over range 5"));
  sim::ChoiceSource other_range(1);
  other_range.replay(original.record());
  CHECK_THROWS_AS(other_range.stream("redis-1").choose(6), sim::ReplayDivergence);
}

TEST_CASE("after its record a replay continues from the seeded streams when allowed") {
  sim::ChoiceSource original(3);
  original.start_recording();
  auto s = original.stream("s");
  s.bits();
  const auto recorded = original.record();
  sim::ChoiceSource replayed(3);
  replayed.replay(recorded, sim::AfterRecord::continue_randomly);
  replayed.start_recording();
  auto r = replayed.stream("s");
  CHECK(r.bits() == recorded.answers[0].value);
  r.bits();  // beyond the record: drawn, and recorded too
  CHECK(replayed.record().answers.size() == 2);
}

TEST_CASE("asking for a stream again by name continues its sequence, and a record names streams made before it started") {
  sim::ChoiceSource once(5), twice(5);
  auto a = once.stream("client-1");
  const std::vector<std::uint64_t> expected{a.bits(), a.bits()};
  twice.stream("client-2").bits();
  const std::uint64_t first = twice.stream("client-1").bits();
  CHECK(std::vector<std::uint64_t>{first, twice.stream("client-1").bits()} == expected);

  // Past the index's first sizes: each name asked again finds its stream, which goes on.
  sim::ChoiceSource many(5);
  for (int i = 0; i < 1000; ++i) many.stream("client-" + std::to_string(i)).bits();
  int misnamed = 0, restarted = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::string name = "client-" + std::to_string(i);
    auto again = many.stream(name);
    misnamed += again.name() != name;
    sim::ChoiceSource alone(5);
    auto fresh = alone.stream(name);
    fresh.bits();
    restarted += again.bits() != fresh.bits();
  }
  CHECK(misnamed == 0);
  CHECK(restarted == 0);

  sim::ChoiceSource source(5);
  auto early = source.stream("early");
  source.start_recording();
  early.bits();
  source.stream("late").bits();
  CHECK(source.record().streams == std::vector<std::string>{"early", "late"});
  REQUIRE(source.record().answers.size() == 2);
  CHECK(source.record().answers[0].stream == 0);
  CHECK(source.record().answers[1].stream == 1);
}

TEST_CASE("a weighted pick gives each option at its weight's odds, recorded and replayed as the option") {
  const std::vector<std::uint32_t> weights{9, 1};
  sim::ChoiceSource source(11);
  auto s = source.stream("innodb.wake");
  int first = 0;
  for (int i = 0; i < 10000; ++i) first += s.pick_weighted(weights) == 0 ? 1 : 0;
  CHECK(first > 8800);  // 9 in 10 expected: 9,000 give or take 30
  CHECK(first < 9200);

  sim::ChoiceSource original(2);
  original.start_recording();
  auto o = original.stream("w");
  std::vector<std::uint64_t> options;
  for (int i = 0; i < 40; ++i) options.push_back(o.pick_weighted(weights));
  CHECK(original.record().answers.front().range == 2);  // the option among two, not the draw
  sim::ChoiceSource replayed(77);
  replayed.replay(original.record(), sim::AfterRecord::fail);
  auto r = replayed.stream("w");
  std::vector<std::uint64_t> again;
  for (int i = 0; i < 40; ++i) again.push_back(r.pick_weighted(weights));
  CHECK(again == options);

  CHECK_THROWS_WITH(s.pick_weighted(std::vector<std::uint32_t>{3, 0}), Catch::Contains("at least 1"));
  CHECK_THROWS_WITH(s.pick_weighted({}), Catch::Contains("at least 1"));
}

TEST_CASE("an explorer answers a weighted pick as a choice among its options, leaving the stream's later draws the seed's") {
  const std::vector<std::uint32_t> weights{9, 1, 1};
  sim::ChoiceSource plain(4);
  auto p = plain.stream("w");
  p.pick_weighted(weights);
  const std::uint64_t next = p.bits();

  sim::ChoiceSource explored(4);
  std::vector<std::uint64_t> asked;
  explored.set_chooser([&](const std::string& stream, std::uint64_t n) -> std::uint64_t {
    CHECK(stream == "w");
    asked.push_back(n);
    return 2;
  });
  auto e = explored.stream("w");
  CHECK(e.pick_weighted(weights) == 2);  // the least likely option, when the explorer says so
  CHECK(asked == std::vector<std::uint64_t>{3});
  CHECK(e.bits() == next);
}
