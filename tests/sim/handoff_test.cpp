// Deliveries handled by a suspending process (Engine::run_here): a message passes from one
// process to the next without the scheduler, and the run is the same as if the scheduler
// had handled every event: same checks, same counts, same errors.

#include <catch2/catch.hpp>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "support.hpp"

using namespace test;

namespace {

// Two processes bouncing a ball through callbacks, like a request and its reply over a
// network: each waits on its own mailbox, and each throw is a delivery 1 ms later.
struct PingPong {
  explicit PingPong(sim::Engine& e) : engine(e) {}
  // "b" is a daemon, still waiting on b.inbox when the run ends: it unwinds while the
  // mailboxes are here, not in the engine's destructor after them.
  ~PingPong() { engine.shutdown(); }

  sim::Engine& engine;
  sim::Mailbox<int> a{"a.inbox"};
  sim::Mailbox<int> b{"b.inbox"};
  int deliveries = 0;
  std::vector<sim::ProcessId> delivered_from;  // the current process seen by each delivery

  void throw_to(sim::Mailbox<int>& box, int ball) {
    engine.after(1ms, sim::kWorld, [this, &box, ball] {
      ++deliveries;
      delivered_from.push_back(engine.current_process());
      box.put(ball);
    });
  }
  void start(int rounds) {
    engine.spawn(sim::kWorld, "a", [this, rounds] {
      for (int i = 0; i < rounds; ++i) {
        throw_to(b, i);
        a.get();
      }
    });
    engine.spawn(sim::kWorld, "b", [this] {
      while (auto ball = b.get_unless_killed()) throw_to(a, *ball);
    }, sim::SpawnOptions{.daemon = true});
  }
};

// Recurses with frames the optimizer cannot drop, then waits on `box` at the bottom.
int wait_deep(sim::Mailbox<int>& box, int levels) {
  volatile char frame[1024];
  std::memset(const_cast<char*>(frame), levels, sizeof frame);
  if (levels == 0) return box.get();
  return frame[levels % sizeof frame] + wait_deep(box, levels - 1);
}

}  // namespace

TEST_CASE("a delivery handled between two waiting processes runs outside any process") {
  sim::Engine engine(config());
  PingPong game(engine);
  game.start(50);
  CHECK(engine.run().status == sim::RunStatus::completed);
  CHECK(game.deliveries == 100);
  CHECK(game.delivered_from == std::vector<sim::ProcessId>(100, 0));
}

TEST_CASE("stop() from a delivery between waiting processes ends the run after that delivery") {
  sim::Engine engine(config());
  PingPong game(engine);
  game.start(50);
  engine.after(3500us, sim::kWorld, [&] { engine.stop(); });  // stops after the deliveries at 1, 2 and 3 ms
  const auto result = engine.run();
  CHECK(result.status == sim::RunStatus::stopped);
  CHECK(game.deliveries == 3);
  CHECK(result.end == at_ms(3) + 500us);
}

TEST_CASE("the event budget counts deliveries handled between waiting processes, and stops exactly at it") {
  for (std::uint64_t budget : {5u, 6u, 7u, 40u}) {
    auto c = config();
    c.event_budget = budget;
    sim::Engine engine(c);
    PingPong game(engine);
    game.start(50);
    const auto result = engine.run();
    CHECK(result.status == sim::RunStatus::event_budget);
    CHECK(result.events == budget);
    // Two starts, then a delivery and the wake-up it brings, in turn.
    CHECK(game.deliveries == static_cast<int>((budget - 2 + 1) / 2));
  }
}

TEST_CASE("an exception thrown by a delivery while processes wait leaves run(), which can then go on") {
  sim::Engine engine(config());
  sim::Mailbox<int> inbox("inbox");
  int got = 0;
  engine.spawn(sim::kWorld, "receiver", [&] {
    inbox.get();  // suspends with the failing delivery next
    got = inbox.get();
  });
  engine.after(1ms, sim::kWorld, [&] { inbox.put(1); });
  engine.after(2ms, sim::kWorld, [] { throw std::runtime_error("delivery failed"); });
  CHECK_THROWS_WITH(engine.run(), "delivery failed");
  engine.after(1ms, sim::kWorld, [&] { inbox.put(2); });
  CHECK(engine.run().status == sim::RunStatus::completed);
  CHECK(got == 2);
}

TEST_CASE("a delivery still runs when the waiting process has little stack left: on the scheduler's") {
  // About 12 KiB of the 16 KiB stack in use at the wait; the delivery needs 6 KiB more. Run
  // on the process's stack, it would run into the guard page.
  sim::Engine engine(config());
  sim::Mailbox<int> inbox("inbox");
  int got = -1;
  engine.spawn(sim::kWorld, "deep", [&] { got = wait_deep(inbox, 11); });
  engine.after(1ms, sim::kWorld, [&] {
    volatile char big[6 * 1024];
    std::memset(const_cast<char*>(big), 1, sizeof big);
    inbox.put(big[100] - 1);
  });
  CHECK(engine.run().status == sim::RunStatus::completed);
  CHECK(got > 0);
}

TEST_CASE("shutdown() from a delivery is refused: the delivery may run while a process is suspending") {
  sim::Mailbox<int> inbox("inbox");  // first: the receiver still waits on it when the engine goes
  sim::Engine engine(config());
  engine.spawn(sim::kWorld, "receiver", [&] { inbox.get(); });
  engine.after(1ms, sim::kWorld, [&] { engine.shutdown(); });
  CHECK_THROWS_WITH(engine.run(), "sim::Engine::shutdown: called while the engine runs");
}
