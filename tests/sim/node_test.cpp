// Nodes: stop-the-world pauses, crashes that unwind processes, restarts through a hook.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "support.hpp"

using namespace test;
using sim::Time;

TEST_CASE("a paused node runs nothing during the pause and everything queued after it, in arrival order") {
  sim::Engine engine(config());
  const auto app = engine.add_node("app-1");
  sim::Mailbox<int> inbox("app-1.inbox");
  std::vector<std::pair<int, Time>> handled;
  engine.spawn(app, "worker", [&] {
    for (int i = 0; i < 4; ++i) {
      const int message = inbox.get();
      handled.emplace_back(message, sim::now());
    }
  });
  engine.after(10ms, sim::kWorld, [&] { engine.pause(app, 100ms); });
  for (int i = 0; i < 3; ++i) engine.after(std::chrono::milliseconds(20 + 10 * i), app, [&, i] { inbox.put(i); });
  engine.after(200ms, app, [&] { inbox.put(3); });
  engine.run();
  REQUIRE(handled.size() == 4);
  // The three deliveries during the pause wait for its end at 110 ms, then run in order.
  CHECK(handled[0] == std::pair{0, at_ms(110)});
  CHECK(handled[1] == std::pair{1, at_ms(110)});
  CHECK(handled[2] == std::pair{2, at_ms(110)});
  CHECK(handled[3] == std::pair{3, at_ms(200)});
}

TEST_CASE("a sleep that ends during a pause ends when the pause ends, other nodes carry on") {
  sim::Engine engine(config());
  const auto paused = engine.add_node("paused");
  const auto busy = engine.add_node("busy");
  Time woke;
  int other_ticks = 0;
  engine.spawn(paused, "sleeper", [&] {
    sim::sleep_for(30ms);
    woke = sim::now();
  });
  engine.spawn(busy, "ticker", [&] {
    for (int i = 0; i < 100; ++i) {
      sim::sleep_for(1ms);
      ++other_ticks;
    }
  });
  engine.after(20ms, sim::kWorld, [&] { engine.pause(paused, 50ms); });
  engine.run();
  CHECK(woke == at_ms(70));
  CHECK(other_ticks == 100);
}

TEST_CASE("overlapping pauses merge into one that ends with the later") {
  sim::Engine engine(config());
  const auto app = engine.add_node("app");
  Time woke;
  engine.spawn(app, "sleeper", [&] {
    sim::sleep_for(5ms);
    woke = sim::now();
  });
  engine.after(1ms, sim::kWorld, [&] { engine.pause(app, 10ms); });   // until 11 ms
  engine.after(8ms, sim::kWorld, [&] { engine.pause(app, 20ms); });   // until 28 ms
  engine.after(9ms, sim::kWorld, [&] { engine.pause(app, 1ms); });    // inside: no change
  engine.run();
  CHECK(woke == at_ms(28));
}

TEST_CASE("a process pausing its own node stops at once") {
  sim::Engine engine(config());
  const auto app = engine.add_node("app");
  Time after_pause;
  engine.spawn(app, "self-pauser", [&] {
    sim::sleep_for(1ms);
    sim::engine().pause(app, 40ms);
    after_pause = sim::now();
  });
  engine.run();
  CHECK(after_pause == at_ms(41));
}

namespace {
// Counts live instances, to prove that unwinding ran every destructor.
struct Guard {
  static inline int live = 0;
  Guard() { ++live; }
  ~Guard() { --live; }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;
};
}  // namespace

TEST_CASE("a crash unwinds every process of the node with Killed from where it waits, and nothing else") {
  sim::Engine engine(config());
  const auto app = engine.add_node("app");
  const auto other = engine.add_node("other");
  sim::Mailbox<int> inbox("app.inbox");
  std::vector<std::string> unwound;
  bool crash_hook_ran = false;
  engine.on_crash(app, [&] { crash_hook_ran = true; });
  auto victim = [&](std::string name, std::function<void()> wait) {
    engine.spawn(app, name, [&, name, wait] {
      Guard guard;
      try {
        wait();
      } catch (const sim::Killed&) {
        unwound.push_back(name);
        throw;
      }
    });
  };
  victim("sleeper", [] { sim::sleep_for(1h); });
  victim("receiver", [&] { inbox.get(); });
  victim("timed-receiver", [&] { inbox.get_for(1h); });
  victim("future-reader", [] {
    sim::Promise<int> p;
    auto f = p.get_future();
    f.get();
  });
  bool survivor_done = false;
  engine.spawn(other, "survivor", [&] {
    sim::sleep_for(50ms);
    survivor_done = true;
  });
  bool late_delivery_ran = false;
  engine.after(30ms, app, [&] { late_delivery_ran = true; });  // scheduled before the crash
  engine.after(10ms, sim::kWorld, [&] { engine.crash(app); });
  const auto result = engine.run();
  CHECK(result.status == sim::RunStatus::completed);
  CHECK(unwound.size() == 4);
  CHECK(Guard::live == 0);
  CHECK(engine.live_processes() == 0);
  CHECK(crash_hook_ran);
  CHECK(survivor_done);
  CHECK_FALSE(late_delivery_ran);
  CHECK_FALSE(engine.is_up(app));
}

TEST_CASE("a restarted node runs its restart hook, which re-creates its processes") {
  sim::Engine engine(config());
  const auto redis = engine.add_node("redis-1");
  std::vector<Time> starts;
  auto start_server = [&] {
    engine.spawn(redis, "server", [&] {
      starts.push_back(sim::now());
      sim::sleep_for(1h);
    });
  };
  start_server();
  engine.on_restart(redis, start_server);
  engine.after(5ms, sim::kWorld, [&] { engine.crash(redis); });
  engine.after(15ms, sim::kWorld, [&] { engine.restart(redis); });
  engine.after(20ms, sim::kWorld, [&] { engine.crash(redis); });
  engine.run();
  CHECK(starts == std::vector<Time>{at_ms(0), at_ms(15)});
  CHECK_THROWS_WITH(engine.restart(sim::kWorld), Catch::Contains("is not crashed"));
}

TEST_CASE("a process crashing its own node is killed at once") {
  sim::Engine engine(config());
  const auto app = engine.add_node("app");
  bool reached_after_crash = false;
  engine.spawn(app, "suicidal", [&] {
    sim::sleep_for(1ms);
    sim::engine().crash(app);
    reached_after_crash = true;
  });
  engine.run();
  CHECK_FALSE(reached_after_crash);
  CHECK(engine.live_processes() == 0);
}

TEST_CASE("killing one process unwinds it alone, a process not yet started never runs its body") {
  sim::Engine engine(config());
  std::vector<std::string> log;
  const auto victim = engine.spawn(sim::kWorld, "victim", [&] {
    try {
      sim::sleep_for(1h);
    } catch (const sim::Killed&) {
      log.push_back("victim killed");
      throw;
    }
  });
  engine.spawn(sim::kWorld, "bystander", [&] {
    sim::sleep_for(2ms);
    log.push_back("bystander done");
  });
  engine.spawn(sim::kWorld, "killer", [&] {
    sim::sleep_for(1ms);
    sim::engine().kill(victim);
    const auto unborn = sim::spawn("unborn", [&] { log.push_back("unborn ran"); });
    sim::engine().kill(unborn);
  });
  engine.run();
  CHECK(log == std::vector<std::string>{"victim killed", "bystander done"});
}

TEST_CASE("destroying an engine mid-run unwinds every suspended process") {
  {
    auto c = config();
    c.event_budget = 10;
    sim::Mailbox<int> inbox("inbox");  // outlives the engine, whose destruction unwinds the receivers
    sim::Engine engine(c);
    for (int i = 0; i < 20; ++i) {
      engine.spawn(sim::kWorld, "p", [&] {
        Guard g;
        inbox.get_for(1s);
      });
    }
    engine.run();
    CHECK(Guard::live > 0);
  }
  CHECK(Guard::live == 0);
}
