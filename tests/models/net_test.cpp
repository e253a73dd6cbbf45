// The network: latency, loss, partitions (dropping or holding), clogging.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/faults/partitions.hpp"
#include "support.hpp"

using namespace test;

namespace {
struct Pair {
  std::vector<std::pair<std::string, sim::Time>> received;
  sim::Engine engine{config()};
  models::Network net{engine, {sim::fixed(1ms), 0}};
  sim::NodeId a = engine.add_node("a");
  sim::NodeId b = engine.add_node("b");

  // Sends `label` from -> to at `t`.
  void send_at(sim::Time t, sim::NodeId from, sim::NodeId to, std::string label) {
    engine.at(t, sim::kWorld, [this, from, to, label] {
      net.send(from, to, [this, label] { received.emplace_back(label, engine.now()); });
    });
  }
};
}  // namespace

TEST_CASE("a message arrives after the link's latency, drawn per link") {
  Pair p;
  p.net.set_link(p.a, p.b, {sim::fixed(3ms), 0});
  p.send_at(at_ms(10), p.a, p.b, "a->b");
  p.send_at(at_ms(10), p.b, p.a, "b->a");
  p.engine.run();
  CHECK(p.received == std::vector<std::pair<std::string, sim::Time>>{{"b->a", at_ms(11)}, {"a->b", at_ms(13)}});
}

TEST_CASE("a dropping partition loses traffic both ways until it is repaired") {
  Pair p;
  models::inject_partitions(p.net, {{at_ms(10), 20ms, {p.a}, {p.b}, models::PartitionMode::drop, false}});
  p.send_at(at_ms(15), p.a, p.b, "a->b during");
  p.send_at(at_ms(15), p.b, p.a, "b->a during");
  p.send_at(at_ms(40), p.a, p.b, "a->b after");
  p.send_at(at_ms(40), p.b, p.a, "b->a after");
  p.engine.run();
  CHECK(p.received.size() == 2);
  for (const auto& [label, t] : p.received) {
    CHECK(label.ends_with("after"));
    CHECK(t == at_ms(41));
  }
  CHECK(p.net.lost() == 2);
}

TEST_CASE("a holding partition delivers what it held, in order, both ways, once repaired") {
  Pair p;
  models::inject_partitions(p.net, {{at_ms(10), 20ms, {p.a}, {p.b}, models::PartitionMode::hold, false}});
  p.send_at(at_ms(12), p.a, p.b, "a->b 1");
  p.send_at(at_ms(14), p.a, p.b, "a->b 2");
  p.send_at(at_ms(16), p.b, p.a, "b->a");
  p.engine.run();
  REQUIRE(p.received.size() == 3);
  for (const auto& [label, t] : p.received) CHECK(t == at_ms(31));  // healed at 30 ms, 1 ms on the wire
  std::vector<std::string> a_to_b;
  for (const auto& [label, t] : p.received)
    if (label.starts_with("a->b")) a_to_b.push_back(label);
  CHECK(a_to_b == std::vector<std::string>{"a->b 1", "a->b 2"});
  CHECK(p.net.lost() == 0);
}

TEST_CASE("a one-way partition cuts only its direction") {
  Pair p;
  models::inject_partitions(p.net, {{at_ms(0), 100ms, {p.a}, {p.b}, models::PartitionMode::drop, true}});
  p.send_at(at_ms(5), p.a, p.b, "a->b");
  p.send_at(at_ms(5), p.b, p.a, "b->a");
  p.engine.run();
  REQUIRE(p.received.size() == 1);
  CHECK(p.received[0].first == "b->a");
}

TEST_CASE("a clogged link holds messages until the clog ends") {
  Pair p;
  p.engine.at(at_ms(10), sim::kWorld, [&] { p.net.clog(p.a, p.b, 50ms); });
  p.send_at(at_ms(20), p.a, p.b, "clogged");
  p.send_at(at_ms(20), p.b, p.a, "other way");
  p.send_at(at_ms(70), p.a, p.b, "after");
  p.engine.run();
  CHECK(p.received == std::vector<std::pair<std::string, sim::Time>>{
                          {"other way", at_ms(21)}, {"clogged", at_ms(61)}, {"after", at_ms(71)}});
}

TEST_CASE("a lossy link loses about the configured share of messages") {
  Pair p;
  p.net.set_link(p.a, p.b, {sim::fixed(1ms), 0.25});
  for (int i = 0; i < 4000; ++i) p.send_at(at_ms(i), p.a, p.b, "m");
  p.engine.run();
  CHECK(static_cast<double>(p.received.size()) / 4000 == Approx(0.75).epsilon(0.03));
  CHECK(p.net.lost() + p.received.size() == 4000);
}

TEST_CASE("a message to a paused node lands in its queue and waits there for its processes") {
  Pair p;
  sim::Mailbox<int> inbox("b.inbox");
  sim::Time handled;
  p.engine.spawn(p.b, "server", [&] {
    inbox.get();
    handled = sim::now();
  });
  p.engine.at(at_ms(1), sim::kWorld, [&] { p.engine.pause(p.b, 20ms); });
  p.engine.at(at_ms(2), sim::kWorld, [&] { p.net.send(p.a, p.b, [&] { inbox.put(1); }); });
  p.engine.run();
  CHECK(inbox.empty());
  CHECK(handled == at_ms(21));
}

TEST_CASE("a message in flight to a node that crashes is lost with the node's state") {
  Pair p;
  int delivered = 0;
  p.net.set_link(p.a, p.b, {sim::fixed(10ms), 0});
  p.engine.at(at_ms(0), sim::kWorld, [&] { p.net.send(p.a, p.b, [&] { ++delivered; }); });
  p.engine.at(at_ms(5), sim::kWorld, [&] { p.engine.crash(p.b); });
  p.engine.at(at_ms(6), sim::kWorld, [&] { p.engine.restart(p.b); });
  p.engine.run();
  CHECK(delivered == 0);
}

TEST_CASE("a latency spike multiplies the latency of messages sent on its links while it lasts, and only then") {
  Pair p;
  p.engine.at(at_ms(10), sim::kWorld, [&] { p.net.slow(p.a, p.b, 10, 50ms); });
  p.send_at(at_ms(20), p.a, p.b, "slowed");
  p.send_at(at_ms(20), p.b, p.a, "other way");
  p.send_at(at_ms(60), p.a, p.b, "after");
  p.engine.run();
  CHECK(p.received == std::vector<std::pair<std::string, sim::Time>>{
                          {"other way", at_ms(21)}, {"slowed", at_ms(30)}, {"after", at_ms(61)}});
}

TEST_CASE("a latency spike on every link to a node slows what any node sends it") {
  Pair p;
  const sim::NodeId c = p.engine.add_node("c");
  p.engine.at(at_ms(10), sim::kWorld, [&] {
    p.net.slow(models::Network::kAnyNode, p.b, 4, 50ms);
    p.net.slow(models::Network::kAnyNode, p.b, 2, 50ms);  // spikes in force together multiply
  });
  p.send_at(at_ms(20), p.a, p.b, "a->b");
  p.send_at(at_ms(20), c, p.b, "c->b");
  p.send_at(at_ms(20), p.a, c, "a->c");
  p.engine.run();
  CHECK(p.received == std::vector<std::pair<std::string, sim::Time>>{
                          {"a->c", at_ms(21)}, {"a->b", at_ms(28)}, {"c->b", at_ms(28)}});
}
