// The engine's core: time order, tie order, sleeping, budgets, liveness reports, misuse.

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "support.hpp"

using namespace test;
using sim::Duration;
using sim::Time;

TEST_CASE("events run in time order and sleep_for advances simulated time exactly") {
  sim::Engine engine(config());
  std::vector<std::pair<std::string, Time>> log;
  for (int delay_ms : {30, 10, 20}) {
    engine.spawn(sim::kWorld, "p" + std::to_string(delay_ms), [&, delay_ms] {
      sim::sleep_for(std::chrono::milliseconds(delay_ms));
      log.emplace_back(sim::this_process_name(), sim::now());
    });
  }
  const auto result = engine.run();
  CHECK(result.status == sim::RunStatus::completed);
  REQUIRE(log.size() == 3);
  CHECK(log[0] == std::pair<std::string, Time>{"p10", at_ms(10)});
  CHECK(log[1] == std::pair<std::string, Time>{"p20", at_ms(20)});
  CHECK(log[2] == std::pair<std::string, Time>{"p30", at_ms(30)});
  CHECK(result.end == at_ms(30));
}

namespace {
// The order in which ten processes, all waking at the same instant, run.
std::vector<int> tie_order(std::uint64_t seed) {
  sim::Engine engine(config(seed));
  std::vector<int> order;
  for (int i = 0; i < 10; ++i) {
    engine.spawn(sim::kWorld, "p", [&order, i] {
      sim::sleep_for(5ms);
      order.push_back(i);
    });
  }
  engine.run();
  return order;
}
}  // namespace

TEST_CASE("simultaneous events are ordered by the choice source: the seed decides, the same seed repeats") {
  const auto a = tie_order(1);
  CHECK(a == tie_order(1));
  bool some_seed_differs = false;
  for (std::uint64_t seed = 2; seed < 10 && !some_seed_differs; ++seed) some_seed_differs = tie_order(seed) != a;
  CHECK(some_seed_differs);
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST_CASE("a tie-break policy decides among simultaneous events, seeing which process each belongs to") {
  auto c = test::config(1);
  std::vector<std::vector<std::uint64_t>> asked;
  c.tie_break = [&](const std::vector<std::uint64_t>& agents) {
    asked.push_back(agents);
    // The newest process first: they run in reverse spawn order.
    return static_cast<std::size_t>(std::max_element(agents.begin(), agents.end()) - agents.begin());
  };
  sim::Engine engine(c);
  std::vector<int> order;
  std::vector<sim::ProcessId> ids;
  for (int i = 0; i < 4; ++i)
    ids.push_back(engine.spawn(sim::kWorld, "p" + std::to_string(i), [&order, i] {
      sim::sleep_for(std::chrono::milliseconds(5));
      order.push_back(i);
    }));
  REQUIRE(engine.run().ok());
  CHECK(order == std::vector<int>{3, 2, 1, 0});
  REQUIRE_FALSE(asked.empty());
  CHECK(std::set<std::uint64_t>(asked.back().begin(), asked.back().end()).size() == asked.back().size());
  CHECK(std::count(ids.begin(), ids.end(), static_cast<sim::ProcessId>(asked.back().front())) == 1);
}

TEST_CASE("a chooser answers the ties and the one-of draws, while every other draw still comes from the seed") {
  // Each process draws a one-of delay (enumerable) and a uniform one (not); all wake at once.
  const sim::Distribution one_of = sim::empirical({std::chrono::milliseconds(1), std::chrono::milliseconds(2)});
  const sim::Distribution jitter = sim::uniform(std::chrono::microseconds(1), std::chrono::microseconds(9));
  auto run = [&](sim::Chooser chooser) {
    auto c = test::config(7);
    c.chooser = std::move(chooser);
    sim::Engine engine(c);
    std::vector<std::string> log;
    for (int i = 0; i < 3; ++i)
      engine.spawn(sim::kWorld, "p" + std::to_string(i), [&, i] {
        auto stream = engine.stream("p" + std::to_string(i));
        const auto a = one_of.sample_duration(stream);
        const auto b = jitter.sample_duration(stream);
        log.push_back(fmt::format("p{} {} {}", i, a.count(), b.count()));
      });
    REQUIRE(engine.run().ok());
    return log;
  };
  std::vector<std::pair<std::string, std::uint64_t>> asked;
  const auto last = [&](const std::string& stream, std::uint64_t n) {
    asked.emplace_back(stream, n);
    return n - 1;
  };
  const auto chosen = run(last);
  // The three processes start at one instant: ties among 3, then 2, asked of "sim.ties";
  // each one-of draw asked of the process's own stream.
  REQUIRE(asked.size() == 5);
  CHECK(asked[0] == std::pair<std::string, std::uint64_t>{"sim.ties", 3});
  CHECK(std::count_if(asked.begin(), asked.end(), [](const auto& a) { return a.first.starts_with("p") && a.second == 2; }) == 3);
  // The last option each time: the newest process first, every one-of delay the slow one.
  REQUIRE(chosen.size() == 3);
  CHECK(chosen[0].starts_with("p2 2000000 "));
  CHECK(chosen[2].starts_with("p0 2000000 "));
  // The uniform draws do not depend on the chooser: the same per process as with the seed alone.
  const auto first = [&](sim::Chooser c) {
    auto log = run(std::move(c));
    std::map<std::string, std::string> jitter_of;
    for (const auto& line : log) jitter_of[line.substr(0, 2)] = line.substr(line.rfind(' ') + 1);
    return jitter_of;
  };
  CHECK(first(last) == first([](const std::string&, std::uint64_t) { return std::uint64_t{0}; }));
  CHECK(first(last) == first({}));
}

TEST_CASE("a zero-length sleep is a choice point: the seed decides whether other ready events go first") {
  std::set<std::vector<std::string>> orders;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    sim::Engine engine(config(seed));
    std::vector<std::string> log;
    engine.spawn(sim::kWorld, "yielder", [&] {
      log.push_back("before");
      sim::sleep_for(0ns);
      log.push_back("after");
    });
    engine.spawn(sim::kWorld, "other", [&] { log.push_back("other"); });
    engine.run();
    CHECK(engine.now() == Time{});
    orders.insert(log);
  }
  using V = std::vector<std::string>;
  CHECK(orders == std::set<V>{V{"other", "before", "after"}, V{"before", "other", "after"}, V{"before", "after", "other"}});
}

TEST_CASE("processes spawned by processes start at the spawning instant on the spawner's node") {
  sim::Engine engine(config());
  const auto node = engine.add_node("app-1");
  Time child_start;
  sim::NodeId child_node = sim::kWorld;
  engine.spawn(node, "parent", [&] {
    sim::sleep_for(3ms);
    sim::spawn("child", [&] {
      child_start = sim::now();
      child_node = sim::this_node();
    });
  });
  engine.run();
  CHECK(child_start == at_ms(3));
  CHECK(child_node == node);
}

TEST_CASE("work inside one event counts against the event budget, and past it the working process stops where it is") {
  auto c = config();
  c.event_budget = 50;
  sim::Engine engine(c);
  int rows_done = 0;
  bool unwound = false;
  engine.spawn(sim::kWorld, "scan", [&] {
    struct Unwinds {
      bool& flag;
      ~Unwinds() { flag = true; }
    } unwinds{unwound};
    for (int row = 0; row < 1'000'000; ++row) {  // one event's loop, far past the budget in work
      sim::work(1);
      ++rows_done;
    }
  });
  const auto result = engine.run();
  CHECK(result.status == sim::RunStatus::event_budget);
  // 50 events' worth, less the events run before it: the scan stopped inside its loop.
  CHECK(rows_done < static_cast<int>(50 * sim::Engine::kWorkPerEvent));
  CHECK(rows_done > static_cast<int>(40 * sim::Engine::kWorkPerEvent));
  CHECK(unwound);

  sim::Engine within(c);  // work below the budget changes nothing
  within.spawn(sim::kWorld, "scan", [&] { sim::work(10 * sim::Engine::kWorkPerEvent); });
  CHECK(within.run().status == sim::RunStatus::completed);
  sim::work(1'000'000'000);  // outside a simulation: nothing
}

TEST_CASE("an interrupt from outside ends the run unfinished, between events and inside work, unraised it changes nothing") {
  std::atomic<bool> interrupt{true};
  auto c = config();
  c.interrupt = &interrupt;
  // Between events: a process that would sleep for ever stops within kInterruptCheckEvents.
  sim::Engine ticking(c);
  std::uint64_t ticks = 0;
  ticking.spawn(sim::kWorld, "ticker", [&] {
    for (;;) {
      sim::sleep_for(std::chrono::milliseconds(1));
      ++ticks;
    }
  });
  CHECK_THROWS_AS(ticking.run(), sim::Interrupted);
  CHECK(ticks <= sim::Engine::kInterruptCheckEvents);
  // Inside one event's work: a scan that would run for ever stops at its first row.
  sim::Engine scanning(c);
  std::uint64_t rows = 0;
  scanning.spawn(sim::kWorld, "scan", [&] {
    for (;;) {
      sim::work(1);
      ++rows;
    }
  });
  CHECK_THROWS_AS(scanning.run(), sim::Interrupted);
  CHECK(rows == 0);
  // Not raised: the same run as with no interrupt at all.
  interrupt = false;
  const auto run = [](sim::EngineConfig config) {
    sim::Engine engine(config);
    for (int i = 0; i < 3; ++i)
      engine.spawn(sim::kWorld, "p" + std::to_string(i), [i] {
        for (int k = 0; k < 2000; ++k) sim::sleep_for(std::chrono::microseconds(1 + i));
      });
    return engine.run();
  };
  auto plain = config();
  const auto a = run(c), b = run(plain);
  CHECK(a.status == sim::RunStatus::completed);
  CHECK(a.trace_hash == b.trace_hash);
  CHECK(a.events == b.events);
}

TEST_CASE("the event budget ends the run with a report naming every waiting process and what it waits for") {
  auto c = config();
  c.event_budget = 50;
  sim::Mailbox<int> inbox("server.inbox");  // declared first: it must outlive the processes
  sim::Engine engine(c);
  engine.spawn(sim::kWorld, "ticker", [] {
    for (;;) sim::sleep_for(1ms);
  });
  engine.spawn(sim::kWorld, "server", [&] { inbox.get(); });
  const auto result = engine.run();
  CHECK(result.status == sim::RunStatus::event_budget);
  CHECK(result.events == 50);
  REQUIRE(result.alive.size() == 2);
  const std::string report = result.liveness_report();
  CHECK(report.find("event budget reached") != std::string::npos);
  CHECK(report.find("ticker") != std::string::npos);
  CHECK(report.find("sleep until t=") != std::string::npos);
  CHECK(report.find("server") != std::string::npos);
  CHECK(report.find("Mailbox::get on 'server.inbox' (no deadline)") != std::string::npos);
}

TEST_CASE("the time budget ends the run before any event beyond it") {
  auto c = config();
  c.time_budget = 10s;
  sim::Engine engine(c);
  int ticks = 0;
  engine.spawn(sim::kWorld, "ticker", [&] {
    for (;;) {
      sim::sleep_for(1s);
      ++ticks;
    }
  });
  const auto result = engine.run();
  CHECK(result.status == sim::RunStatus::time_budget);
  CHECK(ticks == 10);
  CHECK(result.end == Time{10s});
  CHECK(result.liveness_report().find("ticker") != std::string::npos);
}

TEST_CASE("a process waiting forever with no event left is reported as a deadlock, a daemon is not") {
  SECTION("non-daemon") {
    sim::Mailbox<int> never("never-filled");
    sim::Engine engine(config());
    engine.spawn(sim::kWorld, "stuck-client", [&] { never.get(); });
    const auto result = engine.run();
    CHECK(result.status == sim::RunStatus::deadlock);
    CHECK_FALSE(result.ok());
    CHECK(result.liveness_report().find("stuck-client") != std::string::npos);
    CHECK(result.liveness_report().find("never-filled") != std::string::npos);
  }
  SECTION("daemon") {
    sim::Mailbox<int> requests("requests");
    sim::Engine engine(config());
    engine.spawn(sim::kWorld, "server", [&] {
      for (;;) requests.get();
    }, sim::SpawnOptions{.daemon = true});
    const auto result = engine.run();
    CHECK(result.status == sim::RunStatus::completed);
    CHECK(result.ok());
    REQUIRE(result.alive.size() == 1);
    CHECK(result.alive[0].daemon);
  }
}

TEST_CASE("stop() ends the run after the current event") {
  sim::Engine engine(config());
  int ticks = 0;
  engine.spawn(sim::kWorld, "ticker", [&] {
    for (;;) {
      sim::sleep_for(1ms);
      if (++ticks == 5) sim::engine().stop();
    }
  });
  const auto result = engine.run();
  CHECK(result.status == sim::RunStatus::stopped);
  CHECK(ticks == 5);
}

TEST_CASE("an exception escaping a process ends the run and is rethrown naming the process") {
  sim::Engine engine(config());
  engine.spawn(sim::kWorld, "faulty", [] {
    sim::sleep_for(2ms);
    throw std::runtime_error("boom");
  });
  REQUIRE_THROWS_AS(engine.run(), sim::ProcessError);
  sim::Engine again(config());
  again.spawn(sim::kWorld, "faulty", [] { throw std::runtime_error("boom"); });
  REQUIRE_THROWS_WITH(again.run(), Catch::Contains("process 'faulty'") && Catch::Contains("boom"));
}

TEST_CASE("engine misuse fails with a message naming the call") {
  using Catch::Contains;
  CHECK_THROWS_WITH(sim::sleep_for(1ms), Contains("sim::sleep_for") && Contains("outside"));
  CHECK_THROWS_WITH(sim::now(), Contains("sim::now"));
  {
    auto c = config();
    c.event_budget = 0;
    CHECK_THROWS_WITH(sim::Engine(c), Contains("event_budget"));
  }
  {
    auto c = config();
    c.time_budget = 0s;
    CHECK_THROWS_WITH(sim::Engine(c), Contains("time_budget"));
  }
  sim::Engine engine(config());
  engine.spawn(sim::kWorld, "negative", [] { sim::sleep_for(-1ms); });
  CHECK_THROWS_WITH(engine.run(), Contains("sim::sleep_for: negative duration -0.001 s"));

  sim::Engine e2(config());
  CHECK_THROWS_WITH(e2.prepare_wait("sim::Mailbox::get"), Contains("sim::Mailbox::get: called outside a simulated process"));
  const auto node = e2.add_node("db");
  e2.crash(node);
  CHECK_THROWS_WITH(e2.spawn(node, "late", [] {}), Contains("node 'db' is crashed"));
  CHECK_THROWS_WITH(e2.pause(sim::kWorld, 1ms), Contains("world node"));
  CHECK_THROWS_WITH(e2.after(-1ms, node, [] {}), Contains("negative delay"));
  CHECK_THROWS_WITH(e2.spawn(99, "nowhere", [] {}), Contains("no node #99"));
}

TEST_CASE("run() cannot be called from inside a process") {
  sim::Engine engine(config());
  engine.spawn(sim::kWorld, "recursive", [&] { engine.run(); });
  CHECK_THROWS_WITH(engine.run(), Catch::Contains("already running"));
}

TEST_CASE("the trace keeps typed events in full mode, and its hash matches hash mode") {
  auto run = [](sim::TraceMode mode) {
    auto c = config(3);
    c.trace = mode;
    sim::Engine engine(c);
    const auto acquired = engine.trace().kind("test.acquired");
    engine.spawn(sim::kWorld, "p", [&] {
      sim::sleep_for(1ms);
      engine.record(acquired, 42, 7, -1);
    });
    engine.run();
    return std::make_pair(engine.trace().hash(), engine.trace().events());
  };
  const auto [full_hash, events] = run(sim::TraceMode::full);
  const auto [hash_only, no_events] = run(sim::TraceMode::hash);
  CHECK(full_hash == hash_only);
  CHECK(no_events.empty());
  const auto it = std::find_if(events.begin(), events.end(), [](const sim::TraceEvent& e) { return e.key == 42; });
  REQUIRE(it != events.end());
  CHECK(it->at == at_ms(1));
  CHECK(it->process == 1);
  CHECK(it->a == 7);
  CHECK(it->b == -1);
  sim::Trace names(sim::TraceMode::off);
  CHECK(names.kind_name(names.kind("test.acquired")) == "test.acquired");
  CHECK(names.kind_name(sim::trace_kind::node_crash) == "node_crash");
}

TEST_CASE("time is formatted as seconds with trailing zeros trimmed") {
  CHECK(sim::format_duration(1500ms) == "1.5 s");
  CHECK(sim::format_duration(0ns) == "0 s");
  CHECK(sim::format_duration(1ns) == "0.000000001 s");
  CHECK(sim::format_duration(-2s) == "-2 s");
  CHECK(sim::format_time(at_ms(3400)) == "t=3.4 s");
}

TEST_CASE("an exception thrown by a callback leaves run() and the engine can run again") {
  sim::Engine engine(config());
  int ticks = 0;
  engine.after(1ms, sim::kWorld, [] { throw std::runtime_error("callback failed"); });
  engine.after(2ms, sim::kWorld, [&] { ++ticks; });
  CHECK_THROWS_WITH(engine.run(), "callback failed");
  CHECK(engine.run().status == sim::RunStatus::completed);
  CHECK(ticks == 1);
}

TEST_CASE("a background process keeps no run alive: the run completes when only its wake-ups are left") {
  sim::Engine engine(config());
  int ticks = 0;
  Time worker_done;
  engine.spawn(sim::kWorld, "injector", [&] {
    for (;;) {
      sim::sleep_for(10ms);
      ++ticks;
    }
  }, sim::SpawnOptions{.background = true});
  engine.spawn(sim::kWorld, "worker", [&] {
    sim::sleep_for(35ms);
    worker_done = sim::now();
  });
  const auto result = engine.run();
  CHECK(result.status == sim::RunStatus::completed);
  CHECK(worker_done == at_ms(35));
  CHECK(ticks == 3);  // at 10, 20 and 30 ms; the tick due at 40 ms never runs
  CHECK(result.end == at_ms(35));
  REQUIRE(result.alive.size() == 1);
  CHECK(result.alive[0].daemon);
}

TEST_CASE("a background process's wake-ups still run while foreground work is pending, in time order") {
  sim::Engine engine(config());
  std::vector<std::string> log;
  engine.spawn(sim::kWorld, "injector", [&] {
    sim::sleep_for(5ms);
    log.emplace_back("fault");
  }, sim::SpawnOptions{.background = true});
  engine.spawn(sim::kWorld, "worker", [&] {
    sim::sleep_for(10ms);
    log.emplace_back("work");
  });
  engine.run();
  CHECK(log == std::vector<std::string>{"fault", "work"});
}

TEST_CASE("shutdown unwinds every waiting process at once, running its destructors") {
  sim::Mailbox<int> never("never");
  int unwound = 0;
  struct Guard {
    int& count;
    ~Guard() { ++count; }
  };
  sim::Engine engine(config());
  for (int i = 0; i < 3; ++i) {
    engine.spawn(sim::kWorld, "waiter", [&] {
      Guard g{unwound};
      never.get();
    }, sim::SpawnOptions{.daemon = true});
  }
  engine.run();
  CHECK(unwound == 0);
  engine.shutdown();
  CHECK(unwound == 3);
  CHECK(engine.live_processes() == 0);
}

TEST_CASE("an open hold keeps background wake-ups running until it is released") {
  sim::Engine engine(config());
  Time released;
  engine.hold_open();  // say, a message held by a partition the process below will heal
  engine.spawn(sim::kWorld, "healer", [&] {
    sim::sleep_for(30ms);
    engine.release_hold();
    released = sim::now();
    sim::sleep_for(30ms);
  }, sim::SpawnOptions{.background = true});
  const auto result = engine.run();
  CHECK(result.status == sim::RunStatus::completed);
  CHECK(released == at_ms(30));
  CHECK(result.end == at_ms(30));
  CHECK_THROWS_WITH(engine.release_hold(), Catch::Contains("sim::Engine::release_hold: no hold is open"));
}

TEST_CASE("the memory budget ends the run at the same event every time the models count more than it") {
  const auto run_once = [] {
    auto c = config();
    c.memory_budget = 10'000;
    sim::Engine engine(c);
    std::uint64_t held = 0;
    engine.count_memory([&] { return held; });
    engine.spawn(sim::kWorld, "filler", [&] {
      for (;;) {
        held += 7;  // a server taking a little more at each step
        sim::sleep_for(1ms);
      }
    });
    const auto result = engine.run();
    CHECK(result.status == sim::RunStatus::memory_budget);
    CHECK(held + 2 * sim::Engine::kPendingEventBytes > 10'000);  // with the filler's wake-up pending
    CHECK(held < 10'000 + 7 * (sim::Engine::kMemoryCheckEvents + 1));  // found within one check's events
    CHECK(result.liveness_report().find("memory budget reached") != std::string::npos);
    return std::pair{result.events, result.trace_hash};
  };
  CHECK(run_once() == run_once());
}

TEST_CASE("the memory budget counts the events pending (messages in flight, timers), not only what the models hold") {
  const auto run = [](int timers) {
    auto c = config();
    c.memory_budget = 1'000'000;
    sim::Engine engine(c);
    engine.count_memory([] { return std::uint64_t{0}; });  // the models hold nothing
    engine.spawn(sim::kWorld, "sender", [&engine, timers] {
      for (int i = 0; i < timers; ++i) engine.after(1h, sim::kWorld, [] {});  // each a message held in flight
      for (int i = 0; i < 3000; ++i) sim::sleep_for(1ms);
    });
    return engine.run().status;
  };
  CHECK(run(20'000) == sim::RunStatus::memory_budget);  // 20,000 x 128 bytes: past 1 MB
  CHECK(run(1'000) != sim::RunStatus::memory_budget);
}

TEST_CASE("without a memory budget the models' count is never asked for") {
  sim::Engine engine(config());
  bool asked = false;
  engine.count_memory([&] {
    asked = true;
    return std::uint64_t{1} << 60;
  });
  engine.spawn(sim::kWorld, "worker", [] {
    for (int i = 0; i < 5000; ++i) sim::sleep_for(1ms);
  });
  CHECK(engine.run().status == sim::RunStatus::completed);
  CHECK_FALSE(asked);
}

TEST_CASE("a process suspended in a catch block keeps its own exception while another process catches and rethrows one") {
  sim::Engine engine(config());
  std::map<std::string, std::string> rethrown;  // process -> what `throw;` rethrew in its handler
  const auto catcher = [&](const std::string& name, Duration before, Duration inside) {
    engine.spawn(sim::kWorld, name, [&, name, before, inside] {
      sim::sleep_for(before);
      try {
        throw std::runtime_error(name);
      } catch (const std::runtime_error& e) {
        sim::sleep_for(inside);  // the other process throws and catches meanwhile
        try {
          throw;
        } catch (const std::runtime_error& again) {
          rethrown[name] = std::string(again.what()) + " / " + e.what();
        }
      }
      CHECK(std::uncaught_exceptions() == 0);
    });
  };
  catcher("a", Duration{0}, std::chrono::milliseconds(10));
  catcher("b", std::chrono::milliseconds(5), std::chrono::milliseconds(10));
  engine.run();
  CHECK(rethrown == std::map<std::string, std::string>{{"a", "a / a"}, {"b", "b / b"}});
}
