#include "app/runner.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <memory>
#include <optional>
#include <set>

#include "app/metrics.hpp"
#include "app/ordered_work.hpp"
#include "models/checkers/duplicates.hpp"
#include "models/db/server.hpp"
#include "models/faults/clock_faults.hpp"
#include "models/faults/gc_pauses.hpp"
#include "models/faults/partitions.hpp"
#include "models/faults/schedule.hpp"
#include "models/redis/client.hpp"
#include "models/redis/sentinel.hpp"
#include "models/world.hpp"

namespace locksim {

namespace strategies = models::strategies;

namespace {

// The world needs its handler before the strategy (which needs the world) exists.
struct Forward : models::Handler {
  models::Handler* to = nullptr;
  models::Response handle(const models::Request& r, models::Worker& w) override { return to->handle(r, w); }
};

// A node the scenario names, or none if this strategy's world lacks it.
models::Node* find_node(const std::map<std::string, models::Node*>& nodes, const std::string& name) {
  auto it = nodes.find(name);
  return it == nodes.end() ? nullptr : it->second;
}

void inject_faults(sim::Engine& engine, models::Network& network, const std::vector<models::Node*>& app_nodes,
                   const Faults& faults, const std::map<std::string, models::Node*>& nodes,
                   const std::vector<std::unique_ptr<models::redis::Server>>& redis) {
  if (faults.gc_pauses) {
    if (faults.gc_nodes.empty()) {
      for (models::Node* app : app_nodes) models::inject_gc_pauses(*app, *faults.gc_pauses);
    }
    for (const auto& name : faults.gc_nodes)
      if (models::Node* n = find_node(nodes, name)) models::inject_gc_pauses(*n, *faults.gc_pauses);
  }
  for (const auto& p : faults.pauses)
    if (models::Node* n = find_node(nodes, p.node))
      models::inject_at(engine, "faults.pause." + p.node, p.at, [n, length = p.length] { n->pause(length); });
  for (const auto& c : faults.crashes) {
    models::Node* n = find_node(nodes, c.node);
    if (n == nullptr) continue;
    models::redis::Server* server = nullptr;
    for (const auto& r : redis)
      if (&r->node() == n) server = r.get();
    models::inject_at(engine, "faults.crash." + c.node, c.at, [n, server, c] {
      if (!n->is_up()) return;
      if (c.process_only && server != nullptr) server->kill_process();
      else n->crash();
      sim::sleep_for(c.downtime);
      n->restart();
    });
  }
  std::vector<models::PartitionWindow> windows;
  for (const auto& p : faults.partitions) {
    models::PartitionWindow w{.at = p.at, .length = p.length, .mode = p.mode};
    for (const auto& name : p.side_a)
      if (models::Node* n = find_node(nodes, name)) w.side_a.push_back(n->id());
    for (const auto& name : p.side_b)
      if (models::Node* n = find_node(nodes, name)) w.side_b.push_back(n->id());
    if (!w.side_a.empty() && !w.side_b.empty()) windows.push_back(std::move(w));
  }
  if (!windows.empty()) models::inject_partitions(network, std::move(windows));
  std::map<std::string, std::vector<models::ClockFault>> clock;
  for (const auto& c : faults.clock_steps)
    if (find_node(nodes, c.node) != nullptr) clock[c.node].push_back({.at = c.at, .step = c.step});
  for (auto& [name, list] : clock) models::inject_clock_faults(*nodes.at(name), std::move(list));
}


}  // namespace

models::db::ServerConfig database_config(const Scenario& s) {
  return {.database = {.lock_wait_timeout = s.database.lock_wait_timeout},
          .isolation = s.database.isolation,
          .read_service = s.database.read,
          .write_service = s.database.write,
          .commit_service = s.database.commit};
}

// A connection pool on each app node.
struct DatabasePools {
  DatabasePools(models::Network& net, const std::vector<models::Node*>& apps, models::db::Server& server, const Scenario& s) {
    for (models::Node* app : apps) {
      owned.push_back(std::make_unique<models::db::Pool>(
          net, *app, server, models::db::PoolConfig{.size = s.database.pool_size, .statement_timeout = s.database.statement_timeout}));
      pointers.push_back(owned.back().get());
    }
  }
  std::vector<std::unique_ptr<models::db::Pool>> owned;
  std::vector<models::db::Pool*> pointers;
};

double seconds(sim::Time t) { return std::chrono::duration<double>(t.time_since_epoch()).count(); }

// The picture of one trial: holds as the holders believed them, pauses and crashes from the
// trace, and the inserts of duplicated keys.
reports::Timeline timeline(sim::Engine& engine, const models::checkers::LockMonitor& locks,
                           const std::vector<models::db::RowRecord>& rows, std::uint64_t seed) {
  reports::Timeline t;
  t.seed = seed;
  const sim::Time end = engine.now();
  t.end_s = seconds(end);
  for (const auto& r : locks.records())
    t.bars.push_back({r.lock + "  " + r.who, seconds(r.from), seconds(std::min(r.until, end)),
                      r.lease_until == sim::kNever ? -1.0 : seconds(r.lease_until)});
  std::map<std::uint32_t, sim::Time> down_since;
  for (const auto& e : engine.trace().events()) {
    const std::string node = engine.node_name(e.node);
    if (e.kind == sim::trace_kind::node_pause)
      t.bands.push_back({node, seconds(e.at), seconds(e.at + sim::Duration{e.a}), "paused"});
    else if (e.kind == sim::trace_kind::node_crash)
      down_since[e.node] = e.at;
    else if (e.kind == sim::trace_kind::node_restart && down_since.count(e.node)) {
      t.bands.push_back({node, seconds(down_since[e.node]), seconds(e.at), "down"});
      down_since.erase(e.node);
    }
  }
  for (const auto& [node, since] : down_since) t.bands.push_back({engine.node_name(node), seconds(since), t.end_s, "down"});
  std::map<std::string, int> per_key;
  for (const auto& row : rows) ++per_key[std::get<std::string>(row.row.values.at("open_id"))];
  for (const auto& row : rows)
    if (per_key[std::get<std::string>(row.row.values.at("open_id"))] > 1)
      t.inserts.push_back({fmt::format("row {} by {}", row.row.id, row.origin.who), seconds(row.origin.inserted_at)});
  return t;
}

namespace {
// A trial's engine: its seed, the scenario's budgets, an explorer's schedule if any.
sim::EngineConfig engine_config(const Scenario& s, std::uint64_t seed, TraceKept kept, sim::TieBreak tie_break,
                                sim::Chooser chooser) {
  sim::EngineConfig ec;
  ec.seed = seed;
  ec.trace = kept == TraceKept::timeline ? sim::TraceMode::full  // keeps the events, same hash
             : kept == TraceKept::none   ? sim::TraceMode::off
                                         : sim::TraceMode::hash;
  ec.time_budget = s.time_budget;
  ec.event_budget = s.event_budget;
  ec.tie_break = std::move(tie_break);
  ec.chooser = std::move(chooser);
  return ec;
}
}  // namespace

// The batch scheduler's world: schedulers and consumers on the app nodes, the task table,
// a queue broker; no clients.
TrialOutcome run_batch_trial(const Scenario& s, const strategies::Entry& entry, const StrategyChoice& choice,
                             std::uint64_t seed, TraceKept kept, sim::TieBreak tie_break, sim::Chooser chooser) {
  sim::Engine engine(engine_config(s, seed, kept, std::move(tie_break), std::move(chooser)));
  models::Network network(engine, s.internal_link);
  std::deque<models::Node> node_storage;
  std::map<std::string, models::Node*> nodes;
  auto add = [&](const std::string& name) -> models::Node& {
    models::Node& n = node_storage.emplace_back(engine, models::NodeConfig{name, {}});
    nodes[name] = &n;
    return n;
  };
  std::vector<models::Node*> apps;
  for (int i = 1; i <= s.app_servers; ++i) apps.push_back(&add(fmt::format(FMT_COMPILE("app-{}"), i)));
  models::Node& db_node = add("db-1");
  models::Node& mq_node = add("mq-1");
  models::db::Server database(network, db_node, database_config(s));
  database.create_table(models::batch::tasks_table());
  DatabasePools pools(network, apps, database, s);
  models::batch::Queue queue(network, mq_node, apps);
  models::batch::Workload workload(entry.batch(choice.params), s.batch, apps, pools.pointers, queue);
  workload.start();
  inject_faults(engine, network, apps, s.faults, nodes, {});
  const sim::RunResult run = engine.run();
  engine.shutdown();

  TrialOutcome out;
  out.events = run.events;
  out.trace_hash = run.trace_hash;
  const auto& f = workload.findings();
  out.counts["unfinished_runs"] = run.ok() ? 0 : 1;
  out.counts["duplicate_executions"] = static_cast<double>(f.duplicate_executions());
  out.counts["double_enqueues"] = static_cast<double>(f.double_enqueues());
  std::vector<std::int64_t> task_ids;
  for (const auto& row : database.database().committed_rows(models::batch::kTasks)) task_ids.push_back(row.row.id);
  out.counts["tasks_not_executed"] = static_cast<double>(f.not_executed(task_ids));
  out.counts["deadlocks"] = static_cast<double>(database.database().stats().deadlocks);
  out.operations = static_cast<std::uint64_t>(s.batch.tasks);
  out.counts["operations"] = static_cast<double>(out.operations);
  out.db_statements = database.database().stats().statements;
  return out;
}

namespace {

TrialOutcome run_one_trial(const Scenario& s, const StrategyChoice& choice, std::uint64_t seed, TraceKept kept,
                           sim::TieBreak tie_break, sim::Chooser chooser) {
  const strategies::Entry& entry = *strategies::find(choice.name);
  if (entry.batch) return run_batch_trial(s, entry, choice, seed, kept == TraceKept::none ? kept : TraceKept::hash,
                                         std::move(tie_break), std::move(chooser));  // (no timeline: no locks to draw)
  Forward forward;
  models::WorldConfig wc;
  wc.engine = engine_config(s, seed, kept, std::move(tie_break), std::move(chooser));
  const bool with_timeline = kept == TraceKept::timeline;
  wc.app_servers = s.app_servers;
  wc.server = s.server;
  wc.balance = s.balance;
  wc.client_link = s.client_link;
  wc.internal_link = s.internal_link;
  wc.clients = s.clients;
  models::World world(std::move(wc), forward);

  models::Node& db_node = world.add_node({"db-1", {}});
  models::db::Server database(world.network(), db_node, database_config(s));
  database.create_table(strategies::accounts_table(entry.info.needs.key_index));
  for (const auto& table : entry.info.needs.tables) database.create_table(table);
  std::vector<models::AppServer*> servers;
  std::vector<models::Node*> app_nodes;
  for (int i = 0; i < s.app_servers; ++i) {
    servers.push_back(&world.server(static_cast<std::size_t>(i)));
    app_nodes.push_back(&servers.back()->node());
  }
  DatabasePools pools(world.network(), app_nodes, database, s);
  std::map<std::string, models::Node*> nodes{{"clients", &world.client_node()}, {"db-1", &db_node}};
  for (auto* app : servers) nodes[app->node().name()] = &app->node();

  strategies::Services services{.servers = servers, .pools = pools.pointers, .network = &world.network()};
  std::vector<std::unique_ptr<models::redis::Server>> redis_servers;
  std::unique_ptr<models::redis::Server> replica;
  std::unique_ptr<models::redis::Sentinel> sentinel;
  std::vector<std::unique_ptr<models::redis::Client>> redis_clients;
  if (entry.info.needs.redis) {
    const models::redis::ServerConfig rc{.persistence = s.redis.persistence, .replication_lag = s.redis.replication_lag};
    const int instances = s.redis.instances.value_or(entry.info.needs.redis_instances);
    for (int i = 1; i <= instances; ++i) {
      models::Node& node = world.add_node({fmt::format(FMT_COMPILE("redis-{}"), i), {}});
      nodes[node.name()] = &node;
      redis_servers.push_back(std::make_unique<models::redis::Server>(world.network(), node, rc));
      redis_servers.back()->start();
      services.redis_nodes.push_back(redis_servers.back().get());
    }
    if (s.redis.failover) {
      models::Node& replica_node = world.add_node({"redis-1-replica", {}});
      models::Node& sentinel_node = world.add_node({"sentinel", {}});
      nodes[replica_node.name()] = &replica_node;
      nodes[sentinel_node.name()] = &sentinel_node;
      replica = std::make_unique<models::redis::Server>(world.network(), replica_node, rc);
      replica->start();
      sentinel = std::make_unique<models::redis::Sentinel>(
          world.network(), sentinel_node, std::vector<models::redis::Server*>{redis_servers.front().get(), replica.get()},
          models::redis::SentinelConfig{.down_after = s.redis.down_after});
      sentinel->start();
      services.sentinel = sentinel.get();
    }
    for (auto* app : servers) {
      redis_clients.push_back(sentinel ? std::make_unique<models::redis::Client>(world.network(), app->node(), *sentinel,
                                                                                 s.redis.client_timeout)
                                       : std::make_unique<models::redis::Client>(world.network(), app->node(),
                                                                                 *redis_servers.front(), s.redis.client_timeout));
      services.redis.push_back(redis_clients.back().get());
    }
  }
  std::unique_ptr<models::zk::Server> zookeeper;
  if (entry.info.needs.zookeeper) {
    models::Node& node = world.add_node({"zk-1", {}});
    nodes[node.name()] = &node;
    zookeeper = std::make_unique<models::zk::Server>(world.network(), node, models::zk::ServerConfig{.tick_time = s.coordination.zk_tick});
    zookeeper->start();
    services.zookeeper = zookeeper.get();
    services.zookeeper_client.session_timeout = s.coordination.zk_session_timeout;
  }
  std::unique_ptr<models::etcd::Server> etcd;
  if (entry.info.needs.etcd) {
    models::Node& node = world.add_node({"etcd-1", {}});
    nodes[node.name()] = &node;
    etcd = std::make_unique<models::etcd::Server>(world.network(), node);
    etcd->start();
    services.etcd = etcd.get();
    services.etcd_session_ttl = s.coordination.etcd_session_ttl;
  }
  std::unique_ptr<models::RemoteService> remote;
  if (entry.info.needs.remote) {
    models::Node& node = world.add_node({"remote-1", {}});
    nodes[node.name()] = &node;
    remote = std::make_unique<models::RemoteService>(world.network(), node, models::RemoteServiceConfig{.service = s.remote_service});
    services.remote = remote.get();
  }
  strategies::Env env(std::move(services), s.app_work);
  std::unique_ptr<strategies::Strategy> strategy = entry.make(env, choice.params);
  forward.to = strategy.get();
  inject_faults(world.engine(), world.network(), app_nodes, s.faults, nodes, redis_servers);

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
  out.counts["dropped_requests"] = static_cast<double>(env.observed().dropped_requests());
  const models::checkers::LockFindings locks = env.observed().locks().findings(world.engine().now());
  out.counts["overlapping_holders"] = static_cast<double>(locks.overlapping_holders);
  out.counts["overlap_ms"] = locks.overlap_ms;
  out.counts["lease_expiry_violations"] = static_cast<double>(locks.lease_expiry_violations);
  out.counts["stale_writes_accepted"] = static_cast<double>(locks.stale_writes_accepted);
  out.counts["stale_writes_rejected"] = static_cast<double>(locks.stale_writes_rejected);
  out.counts["wrong_unlocks"] = static_cast<double>(locks.wrong_unlocks);
  out.counts["stuck_locks"] = static_cast<double>(env.observed().stuck_locks());
  for (const auto& table : entry.info.needs.tables)  // lock rows nobody will delete
    if (table.name == strategies::kLocks) out.counts["stuck_locks"] += static_cast<double>(database.database().committed_rows(table.name).size());
  out.counts["lock_wakeups"] = static_cast<double>(env.observed().lock_wakeups());
  if (remote) {  // the other service's records for accounts that do not exist
    std::set<std::int64_t> ids;
    for (const auto& row : database.database().committed_rows(strategies::kAccounts)) ids.insert(row.row.id);
    double orphans = 0;
    for (std::int64_t id : remote->records()) orphans += ids.count(id) ? 0 : 1;
    out.counts["orphaned_remote_records"] = orphans;
  }
  // Lost updates: a key whose final device came from an operation that was already
  // acknowledged when another binding of the key, acknowledged too, began: that later
  // binding was dropped. (Bindings that overlapped in time may end in either order.)
  std::map<std::string, std::string> final_device;  // the latest row of each key
  for (const auto& row : database.database().committed_rows(strategies::kAccounts))
    final_device[std::get<std::string>(row.row.values.at("open_id"))] = std::get<std::string>(row.row.values.at("device"));
  std::map<std::string, const models::OperationRecord*> by_device;
  for (const auto& op : world.clients().records()) by_device[strategies::device_of(op.operation)] = &op;
  std::set<std::string> lost_keys;
  for (const auto& op : world.clients().records()) {
    if (op.outcome != models::Outcome::ok) continue;
    auto fin = final_device.find(strategies::open_id_of(op.key));
    if (fin == final_device.end()) continue;
    auto writer = by_device.find(fin->second);
    if (writer != by_device.end() && op.start > writer->second->end) lost_keys.insert(fin->first);
  }
  const auto lost = static_cast<double>(lost_keys.size());
  out.counts["lost_updates"] = lost;
  for (const auto& op : world.clients().records()) {
    ++out.operations;
    out.latency.add(std::chrono::duration<double, std::milli>(op.latency()).count());
    if (op.outcome != models::Outcome::ok) out.counts["errors." + error_name(op.last_error)] += 1;
  }
  out.counts["operations"] = static_cast<double>(out.operations);
  out.db_statements = database.database().stats().statements;
  out.redis_commands = env.observed().redis_commands();
  if (with_timeline) out.timeline = timeline(world.engine(), env.observed().locks(), database.database().committed_rows(strategies::kAccounts), seed);
  return out;
}

}  // namespace

// A trial that fails for a reason that is not the input's is a defect: the message says which
// trial, so that it can be run alone.
TrialOutcome run_trial(const Scenario& s, const StrategyChoice& choice, std::uint64_t seed, TraceKept kept,
                       sim::TieBreak tie_break, sim::Chooser chooser) {
  const bool scheduled = static_cast<bool>(tie_break) || static_cast<bool>(chooser);
  try {
    return run_one_trial(s, choice, seed, kept, std::move(tie_break), std::move(chooser));
  } catch (const InputError&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("the trial of {} with seed {}{} failed: {} (`--strategy {} --seed {} --trials 1` runs it "
                                         "alone)",
                                         choice.shown(), seed, scheduled ? " under an explorer's schedule" : "", e.what(),
                                         choice.shown(), seed));
  }
}

namespace {

// What a strategy's results are made of, summed trial by trial in trial order: the same
// figures as keeping every outcome and summing afterwards, in memory that does not grow with
// the trials.
struct StrategyFold {
  reports::StrategyResult result;
  std::uint64_t statements = 0, commands = 0;

  void add(std::uint64_t trial, std::uint64_t seed, TrialOutcome&& o, double wall_s) {
    reports::StrategyResult& r = result;
    if (trial == 0) {
      r.first_trace_hash = o.trace_hash;
      r.timeline = std::move(o.timeline);
    }
    r.trace_hash = (r.trace_hash ^ o.trace_hash) * 0x100000001b3ull;
    for (const auto& [name, v] : o.counts) {  // a metric a trial lacks is 0 in it: it adds nothing
      reports::Metric& m = r.counts[name];
      m.total += v;
      m.fired += v > 0 ? 1 : 0;
    }
    r.latency.merge(o.latency);
    r.operations += o.operations;
    r.events += o.events;
    statements += o.db_statements;
    commands += o.redis_commands;
    for (const auto& e : o.examples)
      if (r.examples.size() < 3) r.examples.push_back(fmt::format("seed {}: {}", seed + trial, e));
    r.wall_s += wall_s;  // the sum of its trials' wall times: the strategies' trials interleave
    ++r.trials;
  }

  // The figures over the trials done.
  reports::StrategyResult finish() && {
    reports::StrategyResult& r = result;
    for (auto& [name, m] : r.counts) {
      m.mean = m.total / static_cast<double>(r.trials);
      m.share = reports::wilson(m.fired, r.trials);
    }
    if (r.latency.count() > 0) {  // the batch workload has no client operations to time
      for (auto [name, p] : {std::pair{"latency_ms.p50", 50.0}, {"latency_ms.p90", 90.0}, {"latency_ms.p99", 99.0},
                             {"latency_ms.p99.9", 99.9}})
        r.figures[name] = r.latency.percentile(p);
      r.figures["latency_ms.max"] = r.latency.max_ms();
    }
    const double ops = std::max<double>(1, static_cast<double>(r.operations));
    r.figures["db_ops_per_op"] = static_cast<double>(statements) / ops;
    r.figures["redis_ops_per_op"] = static_cast<double>(commands) / ops;
    return std::move(r);
  }
};

struct Finished {
  TrialOutcome outcome;
  double wall_s = 0;  // for the timing field only
};

}  // namespace

std::function<bool()> deadline_after(double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                              std::chrono::duration<double>(seconds));
  return [deadline] { return std::chrono::steady_clock::now() >= deadline; };
}

std::function<bool()> stop_after_trials(std::uint64_t trials) {
  // The queue asks once per trial it hands out, under its lock. Copies share the count, so a
  // sweep's points draw on one allowance.
  return [left = std::make_shared<std::uint64_t>(trials)] {
    if (*left == 0) return true;
    --*left;
    return false;
  };
}

std::function<bool()> same_trials_as(const reports::RunResults& earlier) {
  if (earlier.stopped.empty()) return {};
  std::uint64_t trials = 0;  // a prefix of the trial-major order: its length
  for (const auto& st : earlier.strategies) trials += st.trials;
  return stop_after_trials(trials);
}

reports::RunResults run_scenario(const Scenario& s, int jobs, const std::function<void(std::size_t, std::size_t)>& progress) {
  return run_scenario(s, RunControl{.jobs = jobs, .progress = progress});
}

reports::RunResults run_scenario(const Scenario& s, const RunControl& control) {
  const auto started = std::chrono::steady_clock::now();
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

  // Item i of the queue is trial i / strategies of strategy i % strategies.
  const std::size_t strategies = s.strategies.size(), items = strategies * static_cast<std::size_t>(s.trials);
  std::vector<StrategyFold> folds(strategies);
  for (std::size_t k = 0; k < strategies; ++k) {
    const StrategyChoice& choice = s.strategies[k];
    folds[k].result.name = choice.shown();
    folds[k].result.description = strategies::find(choice.name)->info.description;
    folds[k].result.params = choice.params;
  }
  std::optional<std::chrono::steady_clock::time_point> stopped_at;
  auto stop = [&]() {
    if (!control.stop()) return false;
    stopped_at = std::chrono::steady_clock::now();
    return true;
  };
  const int jobs = std::max(1, control.jobs);
  OrderedWork<Finished> work(
      items, control.window > 0 ? control.window : 4 * static_cast<std::size_t>(jobs) + 64,
      [&](std::size_t item, Finished&& f) {
        folds[item % strategies].add(item / strategies, s.seed, std::move(f.outcome), f.wall_s);
        if (control.progress) control.progress(item + 1, items);
      },
      control.stop ? std::function<bool()>(stop) : std::function<bool()>());
  work.run(jobs, [&](std::size_t item) {
    const auto trial = item / strategies;
    const auto trial_started = std::chrono::steady_clock::now();
    Finished f{run_trial(s, s.strategies[item % strategies], s.seed + trial, trial == 0 ? TraceKept::timeline : TraceKept::hash)};
    f.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - trial_started).count();
    return f;
  });
  if (work.stopped()) {
    results.stopped = "time";
    results.stopped_after_s = std::chrono::duration<double>(*stopped_at - started).count();
  }
  for (StrategyFold& f : folds) results.strategies.push_back(std::move(f).finish());

  for (const Expectation& e : s.expect) {
    const bool ran = std::any_of(s.strategies.begin(), s.strategies.end(), [&](const auto& c) { return c.shown() == e.strategy; });
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
