#include "models/world.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

namespace models {

World::World(WorldConfig config, Handler& handler)
    : engine_(std::move(config.engine)), net_(engine_, std::move(config.internal_link)) {
  if (config.app_servers < 1)
    throw sim::UsageError(fmt::format("models::World: needs at least one app server, got {}", config.app_servers));
  Node& clients = nodes_.emplace_back(engine_, NodeConfig{"clients", {}});
  std::vector<AppServer*> servers;
  for (int i = 1; i <= config.app_servers; ++i) {
    Node& node = nodes_.emplace_back(engine_, NodeConfig{fmt::format(FMT_COMPILE("app-{}"), i), {}});
    net_.set_links(clients.id(), node.id(), config.client_link);
    servers_.push_back(std::make_unique<AppServer>(net_, node, config.server, handler));
    servers.push_back(servers_.back().get());
  }
  balancer_ = std::make_unique<LoadBalancer>(engine_, std::move(servers), config.balance);
  fleets_.push_back(std::make_unique<Clients>(net_, clients, *balancer_, std::move(config.clients)));
}

Clients& World::add_clients(ClientsConfig config) {
  return *fleets_.emplace_back(std::make_unique<Clients>(net_, client_node(), *balancer_, std::move(config)));
}

Node& World::add_node(NodeConfig config) { return nodes_.emplace_back(engine_, std::move(config)); }

void World::start() {
  for (auto& s : servers_) s->start();
  for (auto& fleet : fleets_) fleet->start();
}

}  // namespace models
