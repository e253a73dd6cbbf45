// Faults placed by a search (models/faults/placement.hpp): each message a node sends is a point
// where the chooser may pause or crash the sender, or lose the message; without a chooser, none.

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "models/faults/placement.hpp"
#include "support.hpp"

using namespace test;

namespace {
// Node a sends three messages to b, 10 ms apart, from a process on a; the chooser answers the
// placement points in turn from `answers` (0 past their end).
struct Sender {
  std::vector<std::pair<std::string, sim::Time>> received;
  std::vector<std::uint64_t> offered;  // how many options each placement point offered
  std::vector<std::uint64_t> answers;
  sim::Engine engine;
  models::Network net{engine, {sim::fixed(1ms), 0}};
  sim::NodeId a = engine.add_node("a");
  sim::NodeId b = engine.add_node("b");
  models::PlacedFaults faults{};
  std::uint64_t& placed = faults.count;
  bool finished = false;

  explicit Sender(std::vector<std::uint64_t> chosen, bool exploring = true)
      : answers(std::move(chosen)), engine([&] {
          sim::EngineConfig c = config();
          if (exploring)
            c.chooser = [this](const std::string& stream, std::uint64_t n) -> std::uint64_t {
              if (stream != models::kPlacementStream) return 0;
              const std::size_t i = offered.size();
              offered.push_back(n);
              return i < answers.size() ? answers[i] : 0;
            };
          return c;
        }()) {}

  void run(const models::PlacementBudget& budget) {
    models::place_faults(engine, net, budget, &faults);
    engine.spawn(a, "sender", [this] {
      for (int i = 1; i <= 3; ++i) {
        net.send(a, b, [this, i] { received.emplace_back("m" + std::to_string(i), engine.now()); });
        sim::sleep_for(10ms);
      }
      finished = true;
    });
    REQUIRE(engine.run().ok());
  }
};

models::PlacementBudget one_pause(const Sender& s) {
  models::PlacementBudget b;
  b.pauses = 1;
  b.pause_lengths = {100ms, 500ms};
  b.pause_nodes = {s.a};
  return b;
}
}  // namespace

TEST_CASE("each message sent is a point offering nothing, or a pause of each length before or after it") {
  Sender s({});
  s.run(one_pause(s));
  // Three sends, each offering 1 + 2 lengths x (before, after); nothing chosen, nothing placed.
  CHECK(s.offered == std::vector<std::uint64_t>{5, 5, 5});
  CHECK(s.placed == 0);
  CHECK(s.received == std::vector<std::pair<std::string, sim::Time>>{{"m1", at_ms(1)}, {"m2", at_ms(11)}, {"m3", at_ms(21)}});
}

TEST_CASE("a pause placed before a send holds the message, one placed after it lets the message go first") {
  SECTION("before the second message, the 500 ms length") {
    Sender s({0, 3});  // options: 1 = 100 ms before, 2 = 100 ms after, 3 = 500 ms before, 4 = 500 ms after
    s.run(one_pause(s));
    CHECK(s.placed == 1);
    CHECK(s.faults.paused == 500ms);  // the pause's length, summed for the shrinker
    CHECK(s.received == std::vector<std::pair<std::string, sim::Time>>{{"m1", at_ms(1)}, {"m2", at_ms(511)}, {"m3", at_ms(521)}});
    // The budget is spent: the third send offers nothing, so it is no choice at all.
    CHECK(s.offered == std::vector<std::uint64_t>{5, 5});
  }
  SECTION("after the second message, the 100 ms length") {
    Sender s({0, 2});
    s.run(one_pause(s));
    CHECK(s.received == std::vector<std::pair<std::string, sim::Time>>{{"m1", at_ms(1)}, {"m2", at_ms(11)}, {"m3", at_ms(121)}});
  }
}

TEST_CASE("a lost message placed by the search never arrives, and is counted as lost") {
  Sender s({0, 1});
  models::PlacementBudget b;
  b.lost_messages = 1;
  b.loss_nodes = {s.a};
  s.run(b);
  CHECK(s.received == std::vector<std::pair<std::string, sim::Time>>{{"m1", at_ms(1)}, {"m3", at_ms(21)}});
  CHECK(s.net.lost() == 1);
  CHECK(s.placed == 1);
}

TEST_CASE("a crash placed after a send lets that message go, kills the sender, and restarts its node after the downtime") {
  Sender s({2});  // options: 1 = crash before, 2 = crash after
  models::PlacementBudget b;
  b.crashes = 1;
  b.downtime = 50ms;
  b.crash_nodes = {s.a};
  bool restarted = false;
  s.engine.on_restart(s.a, [&] { restarted = s.engine.now() == at_ms(50); });
  s.engine.spawn(s.b, "bystander", [] { sim::sleep_for(100ms); });  // keeps the run going past the restart
  s.run(b);
  // Crashed at t=0, right after the first message left: it arrives; the process never sends again.
  CHECK(s.received == std::vector<std::pair<std::string, sim::Time>>{{"m1", at_ms(1)}});
  CHECK_FALSE(s.finished);
  CHECK(restarted);
  CHECK(s.engine.is_up(s.a));
}

TEST_CASE("a node outside the budget's nodes, or a run no search walks, is offered no placement") {
  SECTION("the sender is not among the nodes that may pause") {
    Sender s({1, 1, 1});
    auto b = one_pause(s);
    b.pause_nodes = {s.b};
    s.run(b);
    CHECK(s.offered.empty());
    CHECK(s.placed == 0);
  }
  SECTION("no chooser: a plain trial places nothing and asks nothing") {
    Sender s({}, false);
    s.run(one_pause(s));
    CHECK(s.placed == 0);
    CHECK(s.received.size() == 3);
    CHECK(s.engine.choices().record().answers.empty());
  }
}
