// Fault injectors: each a background process with its own stream.

#include <catch2/catch.hpp>

#include "handlers.hpp"
#include "models/faults/crashes.hpp"
#include "models/faults/gc_pauses.hpp"
#include "models/faults/partitions.hpp"

using namespace test;

namespace {
sim::EngineConfig full_trace() {
  auto c = config();
  c.trace = sim::TraceMode::full;
  return c;
}
}  // namespace

TEST_CASE("the GC injector pauses its node with drawn lengths, one pause after another, within its window") {
  sim::Engine engine(full_trace());
  models::Node app(engine, {"app-1", {}});
  models::inject_gc_pauses(app, {sim::fixed(1s), sim::uniform(100ms, 300ms), {at_ms(0), at_ms(10'000)}});
  engine.spawn(sim::kWorld, "workload", [] { sim::sleep_for(60s); });
  REQUIRE(engine.run().ok());
  std::vector<std::pair<sim::Time, sim::Duration>> pauses;
  for (const auto& e : engine.trace().events())
    if (e.kind == sim::trace_kind::node_pause && e.node == app.id()) pauses.emplace_back(e.at, sim::Duration{e.a});
  REQUIRE(pauses.size() >= 7);
  REQUIRE(pauses.size() <= 9);
  CHECK(pauses[0].first == at_ms(1000));
  for (std::size_t i = 0; i < pauses.size(); ++i) {
    CHECK(pauses[i].second >= 100ms);
    CHECK(pauses[i].second <= 300ms);
    if (i > 0) CHECK(pauses[i].first == pauses[i - 1].first + pauses[i - 1].second + 1s);
    CHECK(pauses[i].first <= at_ms(10'000));
  }
}

TEST_CASE("fault injectors keep no run alive: a run ends when the workload does") {
  sim::Engine engine(config());
  models::Node app(engine, {"app-1", {}});
  models::inject_gc_pauses(app, {});
  models::inject_crashes(app, {});
  engine.spawn(sim::kWorld, "workload", [] { sim::sleep_for(5min); });
  const auto result = engine.run();
  CHECK(result.status == sim::RunStatus::completed);
  CHECK(result.end == at_ms(5 * 60 * 1000));
}

TEST_CASE("the crash injector crashes its node and restarts it after the downtime") {
  RecordingHandler handler(10ms);
  auto c = small_world(1, 1);
  c.clients.operations_per_client = 40;
  c.clients.arrival = {models::ArrivalKind::fixed, 0ms, 0ms, 50ms};
  c.clients.retry.attempt_timeout = 100ms;
  c.clients.retry.max_attempts = 1;
  models::World world(c, handler);
  models::inject_crashes(world.server(0).node(), {sim::fixed(500ms), sim::fixed(500ms), {at_ms(0), at_ms(600)}});
  world.start();
  REQUIRE(world.run().ok());
  // Down from 500 ms to 1000 ms: the ten operations sent then time out, the others succeed.
  int timed_out = 0;
  for (const auto& r : world.clients().records()) {
    const bool during = r.start >= at_ms(500) && r.start < at_ms(1000);
    CHECK((r.outcome == models::Outcome::ok) == !during);
    timed_out += during ? 1 : 0;
  }
  CHECK(timed_out == 10);
}

TEST_CASE("a one-way partition loses the messages from one side only, for its length") {
  sim::Engine engine(config());
  models::Network net(engine, {sim::fixed(1ms), 0});
  models::Node a(engine, {"a", {}});
  models::Node b(engine, {"b", {}});
  models::inject_partitions(net, {{.at = at_ms(100), .length = 100ms, .side_a = {a.id()}, .side_b = {b.id()}, .one_way = true}});
  std::vector<std::string> arrived;
  engine.spawn(sim::kWorld, "senders", [&] {
    for (const int t : {50, 150, 250}) {
      sim::sleep_until(at_ms(t));
      net.send(a.id(), b.id(), [&arrived, t] { arrived.push_back("a->b at " + std::to_string(t)); });
      net.send(b.id(), a.id(), [&arrived, t] { arrived.push_back("b->a at " + std::to_string(t)); });
    }
    sim::sleep_for(1s);
  });
  REQUIRE(engine.run().ok());
  std::sort(arrived.begin(), arrived.end());  // two messages that land at one instant may arrive in either order
  CHECK(arrived == std::vector<std::string>{"a->b at 250", "a->b at 50", "b->a at 150", "b->a at 250", "b->a at 50"});
}

TEST_CASE("random partitions cut one node off from the others, then heal") {
  sim::Engine engine(full_trace());
  models::Network net(engine);
  std::vector<sim::NodeId> nodes;
  for (const char* n : {"a", "b", "c"}) nodes.push_back(engine.add_node(n));
  models::inject_random_partitions(net, {nodes, sim::fixed(1s), sim::fixed(2s), models::PartitionMode::drop, {at_ms(0), at_ms(20'000)}});
  std::vector<int> cut_links;
  engine.spawn(sim::kWorld, "observer", [&] {
    sim::sleep_for(250ms);  // observe between the injector's instants, never at them
    for (int i = 0; i < 20; ++i) {
      int cut = 0;
      for (auto x : nodes)
        for (auto y : nodes) cut += x != y && net.is_partitioned(x, y) ? 1 : 0;
      cut_links.push_back(cut);
      sim::sleep_for(500ms);
    }
  });
  engine.run();
  // Cut from 1-3 s, 4-6 s, 7-9 s: 4 directed links each time (one node, two peers, both ways).
  CHECK(cut_links == std::vector<int>{0, 0, 4, 4, 4, 4, 0, 0, 4, 4, 4, 4, 0, 0, 4, 4, 4, 4, 0, 0});
}
