#include "models/workloads/batch/deployment.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

namespace models::batch {

Deployment::Deployment(sim::EngineConfig engine, const DeploymentConfig& config, Design design, BatchConfig batch)
    : OwnNodes(std::move(engine), config.internal_link) {
  for (int i = 1; i <= config.app_servers; ++i) surface_.app_nodes.push_back(&add_node(fmt::format(FMT_COMPILE("app-{}"), i)));
  Node& db_node = add_node("db-1");
  Node& mq_node = add_node("mq-1");
  database_ = std::make_unique<db::Server>(network_, db_node, config.database.server);
  database_->create_table(tasks_table());
  pools_ = pools_on(network_, surface_.app_nodes, *database_, config.database.pool);
  std::vector<db::Pool*> pools;
  for (auto& pool : pools_) pools.push_back(pool.get());
  queue_ = std::make_unique<Queue>(network_, mq_node, surface_.app_nodes);
  workload_ = std::make_unique<Workload>(std::move(design), std::move(batch), surface_.app_nodes, std::move(pools), *queue_);
  engine_.count_memory([this] { return bytes_held(*database_); });
}

}  // namespace models::batch
