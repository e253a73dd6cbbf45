#include "models/deployment.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <atomic>

#include "sim/errors.hpp"

namespace models {

Node* FaultSurface::find(const std::string& name) const {
  auto it = nodes.find(name);
  return it == nodes.end() ? nullptr : it->second;
}

namespace {
// A request waiting in a server's queue holds its message, as one in flight does: a paused
// server's backlog counts.
std::uint64_t queued_bytes(std::size_t queued) { return queued * sim::Engine::kPendingEventBytes; }
}  // namespace

std::vector<std::unique_ptr<db::Pool>> pools_on(Network& net, const std::vector<Node*>& apps, db::Server& server,
                                                const db::PoolConfig& config) {
  std::vector<std::unique_ptr<db::Pool>> pools;
  for (Node* app : apps) pools.push_back(std::make_unique<db::Pool>(net, *app, server, config));
  return pools;
}

std::uint64_t bytes_held(const db::Server& database) {
  return database.database().bytes_held() + queued_bytes(database.queued());
}

void load_tables(db::Server& server, const DatabaseSetup& setup) {
  for (const db::TableSchema& table : setup.tables) server.create_table(table);
  // Millions of legacy rows take seconds: a run's --time deadline stops the trial here too.
  const std::atomic<bool>* interrupt = server.node().engine().config().interrupt;
  std::uint64_t loaded = 0;
  for_each_seed_row(setup.rows, setup.legacy, [&](const SeedRow& row) {
    if (++loaded % 4096 == 0 && interrupt != nullptr && interrupt->load(std::memory_order_relaxed)) throw sim::Interrupted();
    server.database().load_row(row.table, row.values, row.origin);
  });
}

Deployment::Deployment(sim::EngineConfig engine, const DeploymentConfig& config, const strategies::Needs& needs)
    : keep_log_(engine.trace == sim::TraceMode::full),
      world_([&] {
        WorldConfig wc = config;
        wc.engine = std::move(engine);
        return wc;
      }(), handler_) {
  Network& net = world_.network();
  if (keep_log_) net.keep_calls();
  surface_.engine = &world_.engine();
  surface_.network = &net;
  surface_.drawn_faults = &drawn_faults_;
  surface_.placed_faults = &placed_faults_;
  surface_.nodes["clients"] = &world_.client_node();
  for (AppServer* app : world_.servers()) {
    surface_.nodes[app->node().name()] = &app->node();
    surface_.app_nodes.push_back(&app->node());
    services_.servers.push_back(app);
  }
  services_.network = &net;
  services_.balancer = &world_.balancer();

  database_ = std::make_unique<db::Server>(net, add_node("db-1"), config.database.server);
  if (keep_log_) database_->keep_log();
  if (needs.account_table) database_->create_table(needs.accounts ? *needs.accounts : strategies::accounts_table(needs.key_index));
  for (const auto& table : needs.tables) database_->create_table(table);
  load_tables(*database_, config.database);
  pools_ = pools_on(net, surface_.app_nodes, *database_, config.database.pool);
  for (auto& pool : pools_) services_.pools.push_back(pool.get());
  services_.database = database_.get();

  if (needs.redis) {
    const int instances = config.redis.instances.value_or(needs.redis_instances);
    for (int i = 1; i <= instances; ++i) {
      redis_.push_back(std::make_unique<redis::Server>(net, add_node(fmt::format(FMT_COMPILE("redis-{}"), i)), config.redis.server));
      redis_.back()->start();
      services_.redis_nodes.push_back(redis_.back().get());
      surface_.redis.push_back(redis_.back().get());
    }
    if (config.redis.failover) {
      Node& replica_node = add_node("redis-1-replica");
      Node& sentinel_node = add_node("sentinel");
      replica_ = std::make_unique<redis::Server>(net, replica_node, config.redis.server);
      replica_->start();
      sentinel_ = std::make_unique<redis::Sentinel>(net, sentinel_node, std::vector<redis::Server*>{redis_.front().get(), replica_.get()},
                                                    config.redis.sentinel);
      sentinel_->start();
      services_.sentinel = sentinel_.get();
    }
    for (const auto& [key, value] : config.redis.keys) {  // on redis-1, and its replica as replicated before the run
      redis_.front()->load(key, value);
      if (replica_) replica_->load(key, value);
    }
    for (AppServer* app : world_.servers()) {
      redis_clients_.push_back(sentinel_ ? std::make_unique<redis::Client>(net, app->node(), *sentinel_, config.redis.client_timeout)
                                         : std::make_unique<redis::Client>(net, app->node(), *redis_.front(),
                                                                           config.redis.client_timeout));
      services_.redis.push_back(redis_clients_.back().get());
    }
  }
  if (needs.zookeeper) {
    zookeeper_ = std::make_unique<zk::Server>(net, add_node("zk-1"), config.coordination.zookeeper);
    zookeeper_->start();
    services_.zookeeper = zookeeper_.get();
    services_.zookeeper_client = config.coordination.zookeeper_client;
  }
  if (needs.etcd) {
    etcd_ = std::make_unique<etcd::Server>(net, add_node("etcd-1"));
    etcd_->start();
    services_.etcd = etcd_.get();
    services_.etcd_session_ttl = config.coordination.etcd_session_ttl;
  }
  if (needs.consul) {
    consul_ = std::make_unique<consul::Server>(net, add_node("consul-1"));
    consul_->start();
    services_.consul = consul_.get();
  }
  if (needs.remote) {
    remote_ = std::make_unique<RemoteService>(net, add_node("remote-1"), config.remote);
    services_.remote = remote_.get();
  }
  world_.engine().count_memory([this] { return memory_held(); });
}

std::uint64_t Deployment::memory_held() const {
  std::uint64_t held = bytes_held(*database_);
  for (const auto& r : redis_) held += r->keyspace().bytes_held() + queued_bytes(r->queued());
  if (replica_) held += replica_->keyspace().bytes_held() + queued_bytes(replica_->queued());
  if (zookeeper_) held += queued_bytes(zookeeper_->queued());
  if (etcd_) held += queued_bytes(etcd_->queued());
  if (consul_) held += queued_bytes(consul_->queued());
  return held;
}

Node& Deployment::add_node(const std::string& name) {
  Node& node = world_.add_node({name, {}});
  surface_.nodes[name] = &node;
  return node;
}

std::vector<const redis::Server*> Deployment::redis_instances() const {
  std::vector<const redis::Server*> out;
  for (const auto& r : redis_) out.push_back(r.get());
  return out;
}

OwnNodes::OwnNodes(sim::EngineConfig engine, const LinkConfig& link) : engine_(std::move(engine)), network_(engine_, link) {
  surface_.engine = &engine_;
  surface_.network = &network_;
  surface_.drawn_faults = &drawn_faults_;
  surface_.placed_faults = &placed_faults_;
}

Node& OwnNodes::add_node(const std::string& name) {
  Node& node = nodes_.emplace_back(engine_, NodeConfig{name, {}});
  surface_.nodes[name] = &node;
  return node;
}

}  // namespace models
