// A computation saved at a pause and restored in place goes on as the same computation would
// when run again from the start (sim/arena.hpp, sim/restorable.hpp).

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "sim/arena.hpp"
#include "sim/distribution.hpp"
#include "sim/mailbox.hpp"
#include "sim/restorable.hpp"
#include "support.hpp"

namespace {

using Deviations = std::map<std::size_t, std::uint64_t>;

// What a run of the world below did: its trace's hash, what its processes wrote, and how many
// options each of its choices offered.
struct Ran {
  std::uint64_t hash = 0;
  std::vector<std::string> log;
  std::vector<std::uint64_t> options;
  bool operator==(const Ran&) const = default;
};

// Three processes that wake at one instant (ties on the scheduler's stack), each draws a one-of
// delay (a choice on its own stack); one of them waits out a timeout and, inside its catch
// block, draws and sleeps again before it rethrows: a choice taken while an exception is live.
// `choose` answers each choice given its index and the options.
Ran world(const std::function<std::uint64_t(std::size_t, std::uint64_t)>& choose) {
  Ran out;
  std::size_t asked = 0;
  sim::EngineConfig c = test::config(11);
  c.guard_pages = false;
  c.trace = sim::TraceMode::hash;
  c.chooser = [&](const std::string&, std::uint64_t n) {
    out.options.push_back(n);
    return choose(asked++, n);
  };
  sim::Engine engine(c);
  const sim::Distribution delay = sim::empirical({std::chrono::milliseconds(1), std::chrono::milliseconds(2), std::chrono::milliseconds(3)});
  sim::Mailbox<int> box("box"), silent("silent");
  for (int i = 0; i < 3; ++i)
    engine.spawn(sim::kWorld, fmt::format("p{}", i), [&, i] {
      auto stream = engine.stream(fmt::format("p{}", i));
      sim::sleep_for(delay.sample_duration(stream));
      out.log.push_back(fmt::format("p{} woke at {}", i, sim::now().time_since_epoch().count()));
      if (i == 0) {
        try {
          try {
            silent.get_for(std::chrono::milliseconds(1));
          } catch (const sim::Timeout& e) {
            sim::sleep_for(delay.sample_duration(stream));
            out.log.push_back(fmt::format("p0 caught '{}' at {}", e.what(), sim::now().time_since_epoch().count()));
            throw;
          }
        } catch (const sim::Timeout&) {
          out.log.push_back("p0 caught it again");
        }
      } else {
        box.put(i);
      }
    });
  const sim::RunResult result = engine.run();
  out.hash = result.trace_hash;
  out.log.push_back(fmt::format("ended at {} after {} events", result.end.time_since_epoch().count(), result.events));
  return out;
}

Ran fresh(const Deviations& d) {
  return world([&](std::size_t at, std::uint64_t) { return d.contains(at) ? d.at(at) : 0; });
}

}  // namespace

TEST_CASE("an arena's snapshot, put back, gives back its blocks and its free lists at the same addresses", "[arena]") {
  REQUIRE(sim::Arena::supported());
  sim::Arena arena;
  auto* a = static_cast<char*>(arena.allocate(100));
  auto* b = static_cast<char*>(arena.allocate(5000, 256));
  CHECK(reinterpret_cast<std::uintptr_t>(b) % 256 == 0);
  CHECK(sim::Arena::usable(b) >= 5000);  // to its block's end, before the next block
  CHECK(sim::Arena::usable(a) >= 100);
  CHECK(sim::Arena::owner(a) == &arena);
  CHECK(sim::Arena::owner(&arena) == nullptr);
  std::strcpy(a, "before");
  sim::Arena::deallocate(b);
  sim::Arena::Snapshot snapshot;
  arena.save(snapshot);
  std::strcpy(a, "after");
  void* c = arena.allocate(5000, 256);  // reuses b's block
  void* d = arena.allocate(1 << 20);
  CHECK(c == b);
  arena.restore(snapshot);
  CHECK(std::string(a) == "before");
  // The books are back too: the same blocks are handed out again, in the same order.
  CHECK(arena.allocate(5000, 256) == c);
  CHECK(arena.allocate(1 << 20) == d);
}

TEST_CASE("operator new allocates from the arena in use, and a static built meanwhile lives outside it", "[arena]") {
  REQUIRE(sim::Arena::supported());
  sim::Arena arena;
  const std::string* in = nullptr;
  const std::string* outside = nullptr;
  {
    sim::UseArena use(&arena);
    in = new std::string(100, 'x');
    static const std::string kStatic(100, 'y');
    outside = &kStatic;
    {
      sim::OutsideArena out;
      const std::string here(100, 'z');
      CHECK(sim::Arena::owner(here.data()) == nullptr);
    }
    try {
      throw std::runtime_error(std::string(100, 'e'));
    } catch (const std::runtime_error& e) {
      CHECK(sim::Arena::owner(&e) == &arena);  // the exception itself
    }
  }
  CHECK(sim::Arena::owner(in->data()) == &arena);
  CHECK(sim::Arena::owner(outside->data()) == nullptr);
  delete in;  // back to its arena, from outside it
}

TEST_CASE("a trial restored at each of its choices goes on as the same trial run again from the start", "[arena]") {
  REQUIRE(sim::Arena::supported());
  const Ran plain = fresh({});
  REQUIRE(plain.options.size() >= 6);
  REQUIRE(plain.log.size() == 6);

  sim::Arena arena;
  sim::Restorable trial(arena);
  std::size_t paused_at = 0;
  std::uint64_t paused_options = 0;
  Ran got;
  // The parent pauses at every choice; a child (answered other than 0 at a pause) runs on.
  const auto body = [&] {
    bool child = false;
    Ran ran = world([&](std::size_t at, std::uint64_t n) -> std::uint64_t {
      if (child) return 0;
      paused_at = at;
      paused_options = n;
      const std::uint64_t v = sim::Restorable::pause();
      child = v != 0;
      return v;
    });
    sim::OutsideArena outside;
    got = ran;
  };
  sim::Restorable::Point point;
  std::size_t children = 0;
  bool paused = trial.start(body);
  while (paused) {
    const std::size_t at = paused_at;
    const std::uint64_t n = paused_options;
    trial.save(point);
    CHECK(point.memory.copied() <= point.memory.size());
    for (std::uint64_t option = 1; option < n; ++option) {
      if (option > 1) trial.restore(point);
      REQUIRE_FALSE(trial.resume(option));
      INFO("choice " << at << ", option " << option);
      CHECK(got == fresh({{at, option}}));
      ++children;
    }
    trial.restore(point);
    paused = trial.resume(0);
  }
  CHECK(got == plain);
  CHECK(children >= plain.options.size());
}

TEST_CASE("an exception out of a restorable computation reaches its caller with its message", "[arena]") {
  REQUIRE(sim::Arena::supported());
  sim::Arena arena;
  sim::Restorable trial(arena);
  CHECK_THROWS_WITH(trial.start([] { throw std::logic_error("the trial failed"); }), "the trial failed");
  CHECK_THROWS_AS(sim::Restorable::pause(), sim::UsageError);
}

TEST_CASE("a computation that finishes ends there without unwinding, and a restored point goes on as before", "[arena]") {
  REQUIRE(sim::Arena::supported());
  sim::Arena arena;
  sim::Restorable trial(arena);
  int unwound = 0;
  std::vector<std::uint64_t> handed;
  struct Counts {
    int& n;
    ~Counts() { ++n; }
  };
  const auto body = [&] {
    const Counts frame{unwound};
    const std::uint64_t v = sim::Restorable::pause();
    {
      sim::OutsideArena outside;
      handed.push_back(v);
    }
    if (v != 0) sim::Restorable::finish();  // a child: its frame is left to the arena
  };
  REQUIRE(trial.start(body));
  sim::Restorable::Point point;
  trial.save(point);
  // Of its stack, a save copies the frames in use, not the rest of the block it was carved from.
  CHECK(point.memory.copied() < 16 * 1024);
  CHECK(point.memory.size() > sim::Restorable::kStackBytes);
  CHECK_FALSE(trial.resume(7));
  CHECK(unwound == 0);
  CHECK_FALSE(trial.paused());
  CHECK_THROWS_AS(trial.resume(1), sim::UsageError);
  trial.restore(point);
  CHECK_FALSE(trial.resume(0));  // the same point, as the run itself: it returns and unwinds
  CHECK(unwound == 1);
  CHECK(handed == std::vector<std::uint64_t>{7, 0});
  CHECK_THROWS_AS(sim::Restorable::finish(), sim::UsageError);
}
