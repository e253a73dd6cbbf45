#pragma once
// Scenario files (scenarios/*.json): what world to build, which strategies to run in it, how
// many trials, and what each strategy is expected to show. Loading validates everything:
// a mistake is one line naming the file, the JSON path and what was expected.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/input.hpp"
#include "models/app/clients.hpp"
#include "models/db/database.hpp"
#include "models/faults/gc_pauses.hpp"
#include "models/net/network.hpp"
#include "models/redis/server.hpp"
#include "models/strategies/strategy.hpp"

namespace locksim {

struct StrategyChoice {
  std::string name;
  models::strategies::Params params;  // the registry's defaults, overridden by the file
  std::string label{};                // how results and `expect` name it ("as"); the name by default
  const std::string& shown() const { return label.empty() ? name : label; }
};

/// "the strategy's metric compares with value", for example duplicate_rows > 0.
struct Expectation {
  std::string strategy;
  std::string metric;
  std::string op;  // >, >=, =, <=, <
  double value = 0;
  bool holds(double measured) const;
  std::string text() const;
};

struct Database {
  models::db::Isolation isolation = models::db::Isolation::repeatable_read;
  std::size_t pool_size = 10;
  sim::Distribution read = sim::fixed(std::chrono::microseconds(200));
  sim::Distribution write = sim::fixed(std::chrono::microseconds(500));
  sim::Distribution commit = sim::fixed(std::chrono::milliseconds(1));
  sim::Duration lock_wait_timeout = std::chrono::seconds(50);
  sim::Duration statement_timeout = std::chrono::seconds(10);
};

/// The Redis deployment, for strategies that use Redis.
struct RedisSetup {
  std::optional<int> instances;  // redis-1 .. redis-N; default: what the strategy needs
  models::redis::Persistence persistence = models::redis::Persistence::none;
  /// redis-1 gets a replica (redis-1-replica) and a sentinel that fails over to it.
  bool failover = false;
  sim::Duration down_after = std::chrono::seconds(30);
  sim::Distribution replication_lag = sim::uniform(std::chrono::microseconds(200), std::chrono::milliseconds(2));
  sim::Duration client_timeout = std::chrono::seconds(2);
};

/// The ZooKeeper and etcd services, for strategies that use them.
struct CoordinationSetup {
  sim::Duration zk_tick = std::chrono::seconds(2);
  sim::Duration zk_session_timeout = std::chrono::seconds(60);  // asked by the client; the server caps it at 20 ticks
  sim::Duration etcd_session_ttl = std::chrono::seconds(60);
};

/// Faults at fixed times, naming nodes: "app-1", "db-1", "redis-2", "redis-1-replica", "mq-1", ...
/// A fault on a node the strategy's world does not have (Redis, for a database-only
/// strategy) is skipped.
struct Faults {
  struct Pause {
    std::string node;
    sim::Time at;
    sim::Duration length{};
  };
  struct Crash {
    std::string node;
    sim::Time at;
    sim::Duration downtime{};
    bool process_only = false;  // a Redis node: kill the process, the OS page cache survives
  };
  struct Partition {
    sim::Time at;
    sim::Duration length{};
    std::vector<std::string> side_a, side_b;
    models::PartitionMode mode = models::PartitionMode::drop;
  };
  struct ClockStep {
    std::string node;
    sim::Time at;
    sim::Duration step{};
  };
  std::optional<models::GcPausesConfig> gc_pauses;  // random, on `gc_nodes`
  std::vector<std::string> gc_nodes;                // empty: every app server
  std::vector<Pause> pauses;
  std::vector<Crash> crashes;
  std::vector<Partition> partitions;
  std::vector<ClockStep> clock_steps;
};

struct Scenario {
  std::string file;
  std::string name, description, source, lesson;
  int app_servers = 2;
  models::AppServerConfig server;
  models::Balance balance = models::Balance::round_robin;
  models::LinkConfig client_link{sim::uniform(std::chrono::milliseconds(5), std::chrono::milliseconds(30)), 0};
  sim::Distribution app_work = sim::fixed(sim::Duration{});  // between a handler's read and its write
  sim::Distribution remote_service = sim::lognormal_median(std::chrono::milliseconds(20), 0.8);  // the other service
  models::LinkConfig internal_link{sim::uniform(std::chrono::microseconds(100), std::chrono::microseconds(500)), 0};
  Database database;
  models::ClientsConfig clients;
  std::string workload = "account-bind";  // or "batch-scheduler"
  models::batch::BatchConfig batch;
  RedisSetup redis;
  CoordinationSetup coordination;
  Faults faults;
  std::vector<StrategyChoice> strategies;
  int trials = 100;
  std::uint64_t seed = 1;
  sim::Duration time_budget = std::chrono::hours(1);  // of simulated time per trial
  // Events per trial. The catalogue's trials take at most about 12,000; a runaway trial reaches
  // this in a few seconds and counts in unfinished_runs.
  std::uint64_t event_budget = 10'000'000;
  std::vector<Expectation> expect;
  std::uint64_t hash = 0;  // of the resolved document: names the configuration in results
  std::string resolved;    // the document after overrides, as JSON text
};

/// Reads and validates a scenario file, after applying `path=value` overrides (for example
/// `clients.count=50`, written as if in the file). Throws InputError.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
/// Keeps only the named strategies (`--strategy`): labels or names of the scenario's, or any
/// strategy of its workload with default parameters. None named: all stay. Throws InputError.
void narrow_strategies(Scenario& scenario, const std::vector<std::string>& names);
/// Finds a scenario by file path, or by name in the scenarios directory.
std::string scenario_path(const std::string& name_or_path);
/// The scenario files of the catalogue, sorted.
std::vector<std::string> catalogue();

}  // namespace locksim
