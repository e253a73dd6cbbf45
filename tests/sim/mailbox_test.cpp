// Mailboxes and futures: blocking receive, timeouts, many receivers, late values.

#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <vector>

#include "support.hpp"

using namespace test;
using sim::Time;

TEST_CASE("get_for throws Timeout exactly at the deadline when nothing arrives") {
  sim::Engine engine(config());
  sim::Mailbox<int> inbox("inbox");
  Time timed_out_at;
  engine.spawn(sim::kWorld, "receiver", [&] {
    try {
      inbox.get_for(20ms);
    } catch (const sim::Timeout&) {
      timed_out_at = sim::now();
    }
  });
  CHECK(engine.run().status == sim::RunStatus::completed);
  CHECK(timed_out_at == at_ms(20));
}

TEST_CASE("a message arriving before the deadline is received at its arrival, and the timer is then inert") {
  sim::Engine engine(config());
  sim::Mailbox<int> inbox("inbox");
  int got = 0;
  Time got_at;
  engine.spawn(sim::kWorld, "receiver", [&] {
    got = inbox.get_for(20ms);
    got_at = sim::now();
    sim::sleep_for(100ms);  // the stale 20 ms timer must not wake this sleep early
    CHECK(sim::now() == got_at + 100ms);
  });
  engine.spawn(sim::kWorld, "sender", [&] {
    sim::sleep_for(5ms);
    inbox.put(17);
  });
  engine.run();
  CHECK(got == 17);
  CHECK(got_at == at_ms(5));
}

TEST_CASE("a put from a callback (a network delivery) wakes the receiver through an event at that instant") {
  sim::Engine engine(config());
  const auto server = engine.add_node("server");
  sim::Mailbox<std::string> inbox("server.inbox");
  std::string got;
  Time got_at;
  engine.spawn(server, "server", [&] {
    got = inbox.get();
    got_at = sim::now();
  });
  engine.after(7ms, server, [&] { inbox.put("hello"); });
  engine.run();
  CHECK(got == "hello");
  CHECK(got_at == at_ms(7));
}

TEST_CASE("with several receivers on one mailbox every message is received exactly once") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    sim::Engine engine(config(seed));
    sim::Mailbox<int> queue("accept-queue");
    std::map<int, int> received;  // message -> times received
    for (int w = 0; w < 4; ++w) {
      engine.spawn(sim::kWorld, "worker", [&] {
        try {
          for (;;) {
            int m = queue.get_for(50ms);
            ++received[m];
            sim::sleep_for(std::chrono::microseconds(100 * (m % 3)));
          }
        } catch (const sim::Timeout&) {
          // the queue stayed empty: this worker is done
        }
      });
    }
    engine.spawn(sim::kWorld, "producer", [&] {
      for (int m = 0; m < 100; ++m) {
        queue.put(m);
        if (m % 7 == 0) sim::sleep_for(1ms);
      }
    });
    CHECK(engine.run().status == sim::RunStatus::completed);
    REQUIRE(received.size() == 100);
    for (const auto& [m, times] : received) CHECK(times == 1);
  }
}

TEST_CASE("a bounded mailbox refuses a message when full and keeps the ones it has") {
  sim::Mailbox<int> queue("accept-queue", 2);
  CHECK(queue.try_put(1));
  CHECK(queue.try_put(2));
  CHECK_FALSE(queue.try_put(3));
  CHECK(queue.size() == 2);
  CHECK_THROWS_WITH(queue.put(4), Catch::Contains("'accept-queue' is full"));
  CHECK(queue.try_get() == 1);
  CHECK(queue.try_get() == 2);
  CHECK_FALSE(queue.try_get().has_value());
}

namespace {
// Two receivers wait with `receive`; a put chooses the first, which is killed before it
// runs. Returns who received.
template <class Receive>
std::vector<std::string> receivers_when_the_chosen_one_is_killed(Receive receive) {
  sim::Engine engine(config());
  sim::Mailbox<int> queue("queue");
  std::vector<std::string> receivers;
  const sim::ProcessId first = engine.spawn(sim::kWorld, "first", [&] {
    if (receive(queue)) receivers.push_back("first");
  });
  engine.spawn(sim::kWorld, "second", [&] {
    if (receive(queue)) receivers.push_back("second");
  });
  engine.spawn(sim::kWorld, "killer", [&] {
    sim::sleep_for(1ms);
    queue.put(1);               // chooses "first", the longest waiting
    sim::engine().kill(first);  // before "first" has run
  });
  engine.run();
  CHECK(queue.empty());
  return receivers;
}
}  // namespace

TEST_CASE("a killed receiver that a put had chosen hands the message on to another receiver") {
  const auto with_get = receivers_when_the_chosen_one_is_killed([](sim::Mailbox<int>& q) {
    q.get();
    return true;
  });
  CHECK(with_get == std::vector<std::string>{"second"});
  const auto with_get_unless_killed =
      receivers_when_the_chosen_one_is_killed([](sim::Mailbox<int>& q) { return q.get_unless_killed().has_value(); });
  CHECK(with_get_unless_killed == std::vector<std::string>{"second"});
}

TEST_CASE("get_unless_killed serves messages, then returns nothing when its process is killed, without throwing") {
  sim::Engine engine(config());
  const auto server = engine.add_node("server");
  sim::Mailbox<int> inbox("server.inbox");
  std::vector<int> served;
  bool left_the_loop = false;
  bool threw = false;
  engine.spawn(server, "server", [&] {
    try {
      while (auto m = inbox.get_unless_killed()) served.push_back(*m);
      left_the_loop = true;
    } catch (const sim::Killed&) {
      threw = true;
    }
  }, sim::SpawnOptions{.daemon = true});
  engine.after(1ms, server, [&] { inbox.put(1); inbox.put(2); });
  engine.after(5ms, sim::kWorld, [&] { engine.crash(server); });
  engine.run();
  CHECK(served == std::vector<int>{1, 2});
  CHECK(left_the_loop);
  CHECK_FALSE(threw);
}

TEST_CASE("a server loop idle in get_unless_killed at the end of a run returns, and a wait after that throws Killed") {
  sim::Mailbox<int> inbox("inbox");
  bool left_the_loop = false;
  bool waited_again_threw = false;
  {
    sim::Engine engine(config());
    engine.spawn(sim::kWorld, "server", [&] {
      while (inbox.get_unless_killed()) {
      }
      left_the_loop = true;
      try {
        sim::sleep_for(1ms);
      } catch (const sim::Killed&) {
        waited_again_threw = true;
        throw;
      }
    }, sim::SpawnOptions{.daemon = true});
    CHECK(engine.run().status == sim::RunStatus::completed);
    CHECK_FALSE(left_the_loop);  // still waiting: the run is over, the engine not yet gone
  }
  CHECK(left_the_loop);
  CHECK(waited_again_threw);
}

TEST_CASE("try_get_for returns nothing at the deadline instead of throwing, and the future can then be read again") {
  sim::Engine engine(config());
  sim::Promise<int> slow("slow");
  std::optional<int> first, second;
  Time first_at, second_at;
  engine.spawn(sim::kWorld, "caller", [&, f = slow.get_future()]() mutable {
    first = f.try_get_for(10ms);  // no throw
    first_at = sim::now();
    second = f.try_get_for(100ms);
    second_at = sim::now();
  });
  engine.after(50ms, sim::kWorld, [&] { slow.set_value(6); });
  CHECK(engine.run().status == sim::RunStatus::completed);
  CHECK_FALSE(first.has_value());
  CHECK(first_at == at_ms(10));
  CHECK(second == 6);
  CHECK(second_at == at_ms(50));
}

TEST_CASE("a future rethrows the exception set instead of a value") {
  sim::Engine engine(config());
  sim::Promise<int> p("reply");
  bool caught = false;
  engine.spawn(sim::kWorld, "caller", [&, f = p.get_future()]() mutable {
    try {
      f.get();
    } catch (const std::runtime_error& e) {
      caught = std::string(e.what()) == "refused";
    }
  });
  engine.after(1ms, sim::kWorld, [&] { p.set_exception(std::make_exception_ptr(std::runtime_error("refused"))); });
  engine.run();
  CHECK(caught);
}
