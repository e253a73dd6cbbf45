#include "app/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "app/metrics.hpp"
#include "models/checkers/duplicates.hpp"
#include "models/db/server.hpp"
#include "models/faults/gc_pauses.hpp"
#include "models/redis/client.hpp"
#include "models/world.hpp"

namespace locksim {

namespace strategies = models::strategies;

namespace {

// The world needs its handler before the strategy (which needs the world) exists.
struct Forward : models::Handler {
  models::Handler* to = nullptr;
  models::Response handle(const models::Request& r, models::Worker& w) override { return to->handle(r, w); }
};

double percentile(std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

}  // namespace

TrialOutcome run_trial(const Scenario& s, const StrategyChoice& choice, std::uint64_t seed) {
  const strategies::Entry& entry = *strategies::find(choice.name);
  Forward forward;
  models::WorldConfig wc;
  wc.engine.seed = seed;
  wc.engine.time_budget = s.time_budget;
  wc.app_servers = s.app_servers;
  wc.server = s.server;
  wc.balance = s.balance;
  wc.client_link = s.client_link;
  wc.internal_link = s.internal_link;
  wc.clients = s.clients;
  models::World world(wc, forward);

  models::Node& db_node = world.add_node({"db-1", {}});
  models::db::Server database(world.network(), db_node,
                              {.database = {.lock_wait_timeout = s.database.lock_wait_timeout},
                               .isolation = s.database.isolation,
                               .read_service = s.database.read,
                               .write_service = s.database.write,
                               .commit_service = s.database.commit});
  database.create_table(strategies::accounts_table(entry.info.needs.key_index));
  std::vector<std::unique_ptr<models::db::Pool>> pools;
  std::vector<models::db::Pool*> pool_ptrs;
  std::vector<models::AppServer*> servers;
  for (int i = 0; i < s.app_servers; ++i) {
    models::AppServer& app = world.server(static_cast<std::size_t>(i));
    servers.push_back(&app);
    pools.push_back(std::make_unique<models::db::Pool>(
        world.network(), app.node(), database,
        models::db::PoolConfig{.size = s.database.pool_size, .statement_timeout = s.database.statement_timeout}));
    pool_ptrs.push_back(pools.back().get());
  }
  std::unique_ptr<models::redis::Server> redis;
  std::vector<std::unique_ptr<models::redis::Client>> redis_clients;
  std::vector<models::redis::Client*> redis_ptrs;
  if (entry.info.needs.redis) {
    models::Node& redis_node = world.add_node({"redis-1", {}});
    redis = std::make_unique<models::redis::Server>(world.network(), redis_node);
    redis->start();
    for (auto* app : servers) {
      redis_clients.push_back(std::make_unique<models::redis::Client>(world.network(), app->node(), *redis));
      redis_ptrs.push_back(redis_clients.back().get());
    }
  }
  strategies::Env env(servers, pool_ptrs, redis_ptrs, s.app_work);
  std::unique_ptr<strategies::Strategy> strategy = entry.make(env, choice.params);
  forward.to = strategy.get();
  if (s.gc_pauses)
    for (auto* app : servers) models::inject_gc_pauses(app->node(), *s.gc_pauses);

  world.start();
  const sim::RunResult run = world.run();
  world.engine().shutdown();  // before the models the processes use go

  TrialOutcome out;
  out.events = run.events;
  out.trace_hash = run.trace_hash;
  out.counts["unfinished_runs"] = run.ok() ? 0 : 1;
  const auto duplicates = models::checkers::find_duplicates(database.database().committed_rows(strategies::kAccounts), "open_id");
  out.counts["duplicate_rows"] = static_cast<double>(duplicates.duplicate_rows);
  out.counts["duplicated_keys"] = static_cast<double>(duplicates.duplicated_keys);
  out.examples = duplicates.examples;
  out.counts["deadlocks"] = static_cast<double>(database.database().stats().deadlocks);
  out.counts["dropped_requests"] = static_cast<double>(env.dropped());
  for (const auto& op : world.clients().records()) {
    ++out.operations;
    out.latency_ms.push_back(std::chrono::duration<double, std::milli>(op.latency()).count());
    if (op.outcome != models::Outcome::ok) out.counts["errors." + error_name(op.last_error)] += 1;
  }
  out.counts["operations"] = static_cast<double>(out.operations);
  out.db_statements = database.database().stats().statements;
  out.redis_commands = env.redis_commands();
  return out;
}

reports::RunResults run_scenario(const Scenario& s) {
  reports::RunResults results;
  results.scenario = s.name;
  results.file = s.file;
  results.description = s.description;
  results.source = s.source;
  results.lesson = s.lesson;
  results.scenario_hash = s.hash;
  results.seed = s.seed;
  results.trials = static_cast<std::uint64_t>(s.trials);
  results.configuration = s.resolved;
  for (const StrategyChoice& choice : s.strategies) {
    const auto started = std::chrono::steady_clock::now();  // for the timing field only
    reports::StrategyResult r;
    r.name = choice.name;
    r.description = strategies::find(choice.name)->info.description;
    r.params = choice.params;
    std::map<std::string, std::vector<double>> per_trial;
    std::vector<double> latencies;
    std::uint64_t statements = 0, commands = 0;
    for (int t = 0; t < s.trials; ++t) {
      TrialOutcome o = run_trial(s, choice, s.seed + static_cast<std::uint64_t>(t));
      if (t == 0) r.first_trace_hash = o.trace_hash;
      for (const auto& [name, v] : o.counts) {
        auto& values = per_trial[name];
        values.resize(static_cast<std::size_t>(s.trials), 0.0);
        values[static_cast<std::size_t>(t)] = v;
      }
      latencies.insert(latencies.end(), o.latency_ms.begin(), o.latency_ms.end());
      r.operations += o.operations;
      statements += o.db_statements;
      commands += o.redis_commands;
      for (auto& e : o.examples)
        if (r.examples.size() < 3) r.examples.push_back(fmt::format("seed {}: {}", s.seed + static_cast<std::uint64_t>(t), e));
    }
    r.trials = static_cast<std::uint64_t>(s.trials);
    for (auto& [name, values] : per_trial) {
      reports::Metric m;
      for (double v : values) {
        m.total += v;
        m.fired += v > 0 ? 1 : 0;
      }
      m.mean = m.total / static_cast<double>(s.trials);
      m.share = reports::wilson(m.fired, r.trials);
      r.counts[name] = m;
    }
    std::sort(latencies.begin(), latencies.end());
    for (auto [name, p] : {std::pair{"latency_ms.p50", 50.0}, {"latency_ms.p90", 90.0}, {"latency_ms.p99", 99.0},
                           {"latency_ms.p99.9", 99.9}, {"latency_ms.max", 100.0}})
      r.figures[name] = percentile(latencies, p);
    const double ops = std::max<double>(1, static_cast<double>(r.operations));
    r.figures["db_ops_per_op"] = static_cast<double>(statements) / ops;
    r.figures["redis_ops_per_op"] = static_cast<double>(commands) / ops;
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    results.strategies.push_back(std::move(r));
  }
  for (const Expectation& e : s.expect) {
    const bool ran = std::any_of(s.strategies.begin(), s.strategies.end(), [&](const auto& c) { return c.name == e.strategy; });
    if (!ran) continue;  // narrowed with --strategy: nothing to judge
    reports::ExpectationResult er{e.text()};
    if (results.value(e.strategy, e.metric, er.measured)) {
      er.holds = e.holds(er.measured);
    } else {
      er.measured_at_all = false;  // the metric is not measured in this scenario
    }
    results.expectations.push_back(er);
  }
  return results;
}

}  // namespace locksim
