#pragma once
// A trial's deployment: the world (clients, load balancer, app servers) and every service a
// strategy declares it needs (the database with its tables and pools, Redis with its replica
// and sentinel, ZooKeeper, etcd, the remote service), built from one configuration whose
// defaults are the models' own. The runner composes a deployment, a strategy, fault kinds
// and checkers; only this file knows how services are wired (the workloads without clients,
// the batch scheduler and the sessions, deploy their own from OwnNodes below).
//
// Nodes are added in a fixed order (clients, app-1..N, db-1, redis-1..M, redis-1-replica,
// sentinel, zk-1, etcd-1, remote-1): node ids, and so every trace, depend on it.

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/app/remote.hpp"
#include "models/coord/consul.hpp"
#include "models/coord/etcd.hpp"
#include "models/coord/zookeeper.hpp"
#include "models/db/server.hpp"
#include "models/faults/placement.hpp"
#include "models/redis/client.hpp"
#include "models/redis/sentinel.hpp"
#include "models/redis/server.hpp"
#include "models/seed_rows.hpp"
#include "models/strategies/strategy.hpp"
#include "models/world.hpp"

namespace models {

struct DatabaseSetup {
  db::ServerConfig server;
  db::PoolConfig pool;  // one pool on each app node
  std::vector<db::TableSchema> tables{};  // created besides the strategy's own
  std::vector<SeedRow> rows{};            // loaded before the run, in order
  std::optional<LegacyRows> legacy{};     // then its rows, made as each trial loads them
};

/// Creates `setup`'s tables on `server` and loads its rows; throws sim::UsageError with
/// MySQL's message for a row the tables refuse.
void load_tables(db::Server& server, const DatabaseSetup& setup);

/// Redis, for strategies that use it.
struct RedisSetup {
  std::optional<int> instances;  // redis-1 .. redis-N; default: what the strategy needs
  redis::ServerConfig server;
  /// redis-1 gets a replica (redis-1-replica) and a sentinel that fails over to it.
  bool failover = false;
  redis::SentinelConfig sentinel;
  sim::Duration client_timeout = std::chrono::seconds(2);
  /// String keys redis-1 (and its replica) hold before the run: a workload's first keys.
  std::vector<std::pair<std::string, std::string>> keys{};
};

/// ZooKeeper, etcd and Consul, for strategies that use them.
struct CoordinationSetup {
  zk::ServerConfig zookeeper;
  zk::ClientConfig zookeeper_client;
  sim::Duration etcd_session_ttl = std::chrono::seconds(60);  // concurrency.NewSession's default
};

/// Everything a deployment is made of; the engine's configuration comes with each trial.
struct DeploymentConfig : WorldConfig {
  DatabaseSetup database;
  RedisSetup redis;
  CoordinationSetup coordination;
  RemoteServiceConfig remote;
};

/// What fault injectors act on: the trial's engine and network, and its nodes by name.
struct FaultSurface {
  sim::Engine* engine = nullptr;
  Network* network = nullptr;
  std::map<std::string, Node*> nodes;
  std::vector<Node*> app_nodes;
  std::vector<redis::Server*> redis;  // the Redis instances, whose process a crash may kill alone
  /// Faults drawn during the trial (GC pauses), counted as they begin, for rates per fault;
  /// the deployment owns it.
  std::uint64_t* drawn_faults = nullptr;
  /// Faults a search placed (models/faults/placement.hpp), counted likewise, with their pauses' length.
  PlacedFaults* placed_faults = nullptr;
  /// The node called `name`, or null if this trial's world lacks it.
  Node* find(const std::string& name) const;
};

/// The request workload's deployment: clients send requests that app servers hand to a
/// strategy, which reaches the services through `services()`.
class Deployment {
 public:
  Deployment(sim::EngineConfig engine, const DeploymentConfig& config, const strategies::Needs& needs);
  ~Deployment() { world_.engine().shutdown(); }  // every process unwinds before the models it uses go
  Deployment(const Deployment&) = delete;
  Deployment& operator=(const Deployment&) = delete;

  /// What a strategy is built on.
  const strategies::Services& services() const { return services_; }
  /// The app servers' handler from now on (the world exists before the strategy that needs it).
  void serve(Handler& handler) { handler_.to = &handler; }
  void start() { world_.start(); }
  sim::RunResult run() { return world_.run(); }

  World& world() { return world_; }
  sim::Engine& engine() { return world_.engine(); }
  const db::Database& database() const { return database_->database(); }
  /// What the servers hold, for the trial's memory budget: the tables and every Redis keyspace
  /// (the engine asks for it from the start; a strategy's own state is added by whoever serves one).
  std::uint64_t memory_held() const;
  /// The statements db-1 ran, kept when the trial keeps its whole trace (a replay).
  const std::vector<db::LoggedStatement>& statements() const { return database_->log(); }
  /// The calls between clients, app workers and lock services, kept likewise; null otherwise.
  const CallLog* calls() { return world_.network().calls(); }
  const RemoteService* remote() const { return remote_.get(); }
  std::vector<const redis::Server*> redis_instances() const;
  const FaultSurface& fault_surface() const { return surface_; }

 private:
  // Hands each request to the handler serve() named.
  struct Forward : Handler {
    Handler* to = nullptr;
    Response handle(const Request& r, Worker& w) override { return to->handle(r, w); }
  };
  Node& add_node(const std::string& name);

  bool keep_log_ = false;  // the database's statement log, for a trial kept whole
  Forward handler_;
  World world_;
  std::uint64_t drawn_faults_ = 0;
  PlacedFaults placed_faults_{};
  FaultSurface surface_;
  std::unique_ptr<db::Server> database_;
  std::vector<std::unique_ptr<db::Pool>> pools_;
  std::vector<std::unique_ptr<redis::Server>> redis_;
  std::unique_ptr<redis::Server> replica_;
  std::unique_ptr<redis::Sentinel> sentinel_;
  std::vector<std::unique_ptr<redis::Client>> redis_clients_;
  std::unique_ptr<zk::Server> zookeeper_;
  std::unique_ptr<etcd::Server> etcd_;
  std::unique_ptr<consul::Server> consul_;
  std::unique_ptr<RemoteService> remote_;
  strategies::Services services_;
};

/// A pool of connections to `server` on each of `apps`, as `config` sizes them.
std::vector<std::unique_ptr<db::Pool>> pools_on(Network& net, const std::vector<Node*>& apps, db::Server& server,
                                                const db::PoolConfig& config);
/// What a database server holds, for the memory budget: its rows and the statements waiting on
/// its sessions.
std::uint64_t bytes_held(const db::Server& database);

/// What the deployments without clients share (each workload's own, in its folder under
/// models/workloads/): an engine and a network of their own, and
/// nodes added by name. Each one's destructor shuts the engine down before its models go.
class OwnNodes {
 public:
  OwnNodes(const OwnNodes&) = delete;
  OwnNodes& operator=(const OwnNodes&) = delete;
  sim::RunResult run() { return engine_.run(); }
  sim::Engine& engine() { return engine_; }
  const FaultSurface& fault_surface() const { return surface_; }

 protected:
  OwnNodes(sim::EngineConfig engine, const LinkConfig& link);
  ~OwnNodes() = default;
  Node& add_node(const std::string& name);

  sim::Engine engine_;
  Network network_;
  std::deque<Node> nodes_;
  std::uint64_t drawn_faults_ = 0;
  PlacedFaults placed_faults_{};
  FaultSurface surface_;
};

}  // namespace models
