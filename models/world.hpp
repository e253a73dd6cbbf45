#pragma once
// The world of the production case, assembled: clients on their own node, a load
// balancer, app servers running one handler, all on one network. Lock services and the
// database join as further nodes (add_node). Fault injectors are started on its nodes
// and network by the caller.

#include <deque>
#include <memory>
#include <vector>

#include "models/app/clients.hpp"

namespace models {

struct WorldConfig {
  sim::EngineConfig engine;
  int app_servers = 2;
  AppServerConfig server;
  Balance balance = Balance::round_robin;
  /// Between the clients and each app server, both ways (the internet, a mobile network).
  LinkConfig client_link = {sim::uniform(std::chrono::milliseconds(5), std::chrono::milliseconds(30)), 0};
  /// Every other link (inside the datacenter).
  LinkConfig internal_link = {sim::uniform(std::chrono::microseconds(100), std::chrono::microseconds(500)), 0};
  ClientsConfig clients;
};

class World {
 public:
  World(WorldConfig config, Handler& handler);
  /// Unwinds every process first: they use the models below.
  ~World() { engine_.shutdown(); }
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  sim::Engine& engine() { return engine_; }
  Network& network() { return net_; }
  Node& client_node() { return nodes_.front(); }
  /// The app server nodes, app-1 .. app-N.
  const std::vector<AppServer*>& servers() const { return balancer_->servers(); }
  AppServer& server(std::size_t i) { return *servers_[i]; }
  LoadBalancer& balancer() { return *balancer_; }
  /// The configured clients.
  Clients& clients() { return *fleets_.front(); }
  /// Another population of clients (a batch job beside the users, say), started by start().
  Clients& add_clients(ClientsConfig config);
  const std::vector<std::unique_ptr<Clients>>& fleets() const { return fleets_; }
  /// Another machine (a Redis node, the database) on the same network.
  Node& add_node(NodeConfig config);

  /// Starts the app servers and every fleet of clients.
  void start();
  sim::RunResult run() { return engine_.run(); }

 private:
  sim::Engine engine_;
  Network net_;
  std::deque<Node> nodes_;
  std::vector<std::unique_ptr<AppServer>> servers_;
  std::unique_ptr<LoadBalancer> balancer_;
  std::vector<std::unique_ptr<Clients>> fleets_;
};

}  // namespace models
