// Properties of generated worlds: topologies, client behaviour and fault schedules drawn
// by RapidCheck. Every logical operation ends in exactly one recorded outcome, and a run
// is a pure function of its configuration and seed.

#include <catch2/catch.hpp>
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <map>

#include "handlers.hpp"
#include "models/faults/clock_faults.hpp"
#include "models/faults/crashes.hpp"
#include "models/faults/gc_pauses.hpp"
#include "models/faults/partitions.hpp"

using namespace test;

namespace {

template <class T>
T pick(std::initializer_list<T> values) {
  return *rc::gen::elementOf(std::vector<T>(values));
}
sim::Duration ms_in(int low, int high) { return std::chrono::milliseconds(*rc::gen::inRange(low, high + 1)); }

// A generated world and fault schedule.
struct Generated {
  models::WorldConfig world;
  sim::Duration service_max;
  bool gc = false, crashes = false, partitions = false, clock_steps = false;
  models::GcPausesConfig gc_config;
  models::CrashesConfig crash_config;
  models::RandomPartitionsConfig partition_config;
};

Generated generate() {
  Generated g;
  auto& w = g.world;
  w.engine = config(*rc::gen::inRange<std::uint64_t>(1, 1'000'000));
  w.app_servers = *rc::gen::inRange(1, 5);
  w.server.workers = *rc::gen::inRange(1, 5);
  w.server.accept_queue = static_cast<std::size_t>(*rc::gen::inRange(1, 9));
  w.balance = pick({models::Balance::random, models::Balance::round_robin, models::Balance::sticky});
  const auto low = ms_in(0, 5);
  w.client_link = {sim::uniform(low, low + ms_in(0, 30)), *rc::gen::elementOf(std::vector<double>{0, 0, 0.05, 0.3})};
  auto& c = w.clients;
  c.clients = *rc::gen::inRange(1, 9);
  c.operations_per_client = *rc::gen::inRange(1, 5);
  c.keys = static_cast<std::uint64_t>(*rc::gen::inRange(0, 4));
  c.arrival = {pick({models::ArrivalKind::at_start, models::ArrivalKind::fixed, models::ArrivalKind::poisson}), ms_in(0, 50),
               ms_in(0, 200), ms_in(1, 300)};
  c.retry.max_attempts = *rc::gen::inRange(1, 5);
  c.retry.attempt_timeout = ms_in(20, 300);
  c.retry.backoff = {ms_in(0, 50), ms_in(50, 500),
                     pick({models::Jitter::none, models::Jitter::full, models::Jitter::equal, models::Jitter::decorrelated})};
  g.service_max = ms_in(0, 100);
  g.gc = *rc::gen::arbitrary<bool>();
  g.gc_config = {sim::exponential(ms_in(50, 1000)), sim::mixture({sim::lognormal_median(ms_in(1, 50), 0.5), sim::pareto(100ms, 1.5)}, {19, 1}), {}};
  g.crashes = *rc::gen::arbitrary<bool>();
  g.crash_config = {sim::exponential(ms_in(100, 2000)), sim::uniform(10ms, ms_in(10, 1000)), {}};
  g.partitions = *rc::gen::arbitrary<bool>();
  g.partition_config.interval = sim::exponential(ms_in(100, 2000));
  g.partition_config.length = sim::uniform(1ms, ms_in(1, 500));
  g.partition_config.mode = pick({models::PartitionMode::drop, models::PartitionMode::hold});
  g.clock_steps = *rc::gen::arbitrary<bool>();
  return g;
}

struct Outcome {
  sim::RunResult result;
  std::vector<models::OperationRecord> records;
  std::uint64_t issued = 0;
};

Outcome run(const Generated& g) {
  const sim::Duration service_max = g.service_max;
  RecordingHandler handler([service_max](const models::Request& r) {
    return sim::Duration{static_cast<std::int64_t>((r.operation * 7919 + r.attempt * 104729) % (service_max.count() + 1))};
  });
  models::World world(g.world, handler);
  std::vector<sim::NodeId> partitionable = {world.client_node().id()};
  for (std::size_t i = 0; i < world.servers().size(); ++i) {
    models::Node& node = world.server(i).node();
    partitionable.push_back(node.id());
    if (g.gc) models::inject_gc_pauses(node, g.gc_config);
    if (g.crashes) models::inject_crashes(node, g.crash_config);
    if (g.clock_steps) models::inject_random_clock_steps(node, {sim::exponential(500ms), sim::normal(0ms, 200ms), {}});
  }
  if (g.partitions) {
    auto p = g.partition_config;
    p.nodes = partitionable;
    models::inject_random_partitions(world.network(), p);
  }
  world.start();
  Outcome out;
  out.result = world.run();
  out.records = world.clients().records();
  out.issued = world.clients().issued();
  return out;
}

}  // namespace

TEST_CASE("properties of generated worlds and fault schedules") {
  rc::prop("every logical operation ends in exactly one recorded outcome", [] {
    const Generated g = generate();
    const Outcome out = run(g);
    RC_ASSERT(out.result.status == sim::RunStatus::completed);
    const auto expected = static_cast<std::size_t>(g.world.clients.clients * g.world.clients.operations_per_client);
    RC_ASSERT(out.issued == expected);
    RC_ASSERT(out.records.size() == expected);
    std::map<std::uint64_t, int> seen;
    for (const auto& r : out.records) {
      ++seen[r.operation];
      RC_ASSERT(r.attempts >= 1);
      RC_ASSERT(r.attempts <= g.world.clients.retry.max_attempts);
      RC_ASSERT(r.end >= r.start);
      if (r.outcome == models::Outcome::ok && r.attempts == 1) RC_ASSERT(r.last_error == models::ErrorKind::none);
      if (r.outcome != models::Outcome::ok) RC_ASSERT(r.last_error != models::ErrorKind::none);
      if (r.outcome == models::Outcome::gave_up) RC_ASSERT(r.attempts == g.world.clients.retry.max_attempts);
    }
    RC_ASSERT(seen.size() == expected);
  });

  rc::prop("the same configuration and seed give the same run", [] {
    const Generated g = generate();
    const Outcome first = run(g);
    const Outcome second = run(g);
    RC_ASSERT(first.result.trace_hash == second.result.trace_hash);
    RC_ASSERT(first.result.events == second.result.events);
    RC_ASSERT(first.records.size() == second.records.size());
    for (std::size_t i = 0; i < first.records.size(); ++i) {
      RC_ASSERT(first.records[i].operation == second.records[i].operation);
      RC_ASSERT(first.records[i].end == second.records[i].end);
      RC_ASSERT(first.records[i].outcome == second.records[i].outcome);
    }
  });
}
