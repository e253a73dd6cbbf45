// Node clocks: offset, drift, steps; each node's view is its own.

#include <catch2/catch.hpp>

#include "models/faults/clock_faults.hpp"
#include "support.hpp"

using namespace test;

TEST_CASE("a clock step on one node changes that node's view of time only") {
  sim::Engine engine(config());
  models::Node x(engine, {"x", {}});
  models::Node y(engine, {"y", {}});
  models::inject_clock_faults(x, {{at_ms(1000), models::ClockFault::Kind::step, 2s, 0},
                                  {at_ms(3000), models::ClockFault::Kind::step, -500ms, 0}});
  std::vector<std::tuple<sim::Time, sim::Time, sim::Time>> seen;  // true, x, y
  engine.spawn(sim::kWorld, "observer", [&] {
    sim::sleep_for(500ms);  // between the steps' instants, never at them
    for (int i = 0; i < 4; ++i) {
      seen.emplace_back(sim::now(), x.clock().now(), y.clock().now());
      sim::sleep_for(1s);
    }
  });
  engine.run();
  REQUIRE(seen.size() == 4);
  CHECK(seen[0] == std::tuple{at_ms(500), at_ms(500), at_ms(500)});
  CHECK(seen[1] == std::tuple{at_ms(1500), at_ms(3500), at_ms(1500)});
  CHECK(seen[2] == std::tuple{at_ms(2500), at_ms(4500), at_ms(2500)});
  CHECK(seen[3] == std::tuple{at_ms(3500), at_ms(5000), at_ms(3500)});  // stepped back half a second at 3 s
}

TEST_CASE("a drifting clock gains its rate in ppm, an offset shifts it from the start") {
  sim::Engine engine(config());
  models::Node fast(engine, {"fast", {5ms, 200}});
  models::Node slow(engine, {"slow", {0ms, -500}});
  engine.at(at_ms(10'000), sim::kWorld, [] {});
  engine.run();
  CHECK(fast.clock().now() == at_ms(10'000 + 5 + 2));  // +200 ppm over 10 s is 2 ms
  CHECK(slow.clock().now() == at_ms(10'000 - 5));
  CHECK(fast.clock().offset() == 7ms);
}

TEST_CASE("timers run on the monotonic clock: they drift but ignore steps") {
  sim::Engine engine(config());
  models::Node n(engine, {"n", {0ms, 1000}});  // 0.1% fast
  models::inject_clock_faults(n, {{at_ms(100), models::ClockFault::Kind::step, 10s, 0}});
  sim::Time woke;
  n.spawn("sleeper", [&] {
    n.clock().sleep_for(1001ms);  // 1001 local ms at +1000 ppm is 1000 true ms
    woke = sim::now();
  });
  engine.run();
  CHECK(woke == at_ms(1000));
}

TEST_CASE("a drift change applies from its instant on") {
  sim::Engine engine(config());
  models::Node n(engine, {"n", {}});
  models::inject_clock_faults(n, {{at_ms(1000), models::ClockFault::Kind::drift, 0ms, 500}});
  engine.at(at_ms(3000), sim::kWorld, [] {});
  engine.run();
  CHECK(n.clock().now() == at_ms(3001));  // 2 s at +500 ppm
  CHECK(n.clock().drift_ppm() == 500);
}

TEST_CASE("a node's monotonic clock drifts with its wall clock but ignores steps") {
  sim::Engine engine(config());
  models::Node x(engine, {"x", {1h, 0}});
  std::vector<sim::Time> mono;
  engine.spawn(sim::kWorld, "observer", [&] {
    sim::sleep_for(1s);
    x.step_clock(-10s);
    mono.push_back(x.clock().monotonic());
    x.set_drift_ppm(100'000);  // a clock 10 % fast, to see it plainly
    sim::sleep_for(1s);
    mono.push_back(x.clock().monotonic());
  });
  REQUIRE(engine.run().ok());
  CHECK(mono == std::vector<sim::Time>{at_ms(1000), at_ms(2100)});
}
