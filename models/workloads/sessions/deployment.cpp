#include "models/workloads/sessions/deployment.hpp"

namespace models::sessions {

Deployment::Deployment(sim::EngineConfig engine, const DeploymentConfig& config, Script script)
    : OwnNodes(std::move(engine), config.internal_link), schemas_(config.database.tables) {
  std::vector<Node*> session_nodes;
  for (const std::string& name : script.sessions()) session_nodes.push_back(&add_node(name));
  Node& driver = add_node("script");
  db::ServerConfig server = config.database.server;
  server.database.record_history = true;  // its steps' transactions are the user's own: the anomaly checker reads them
  database_ = std::make_unique<db::Server>(network_, add_node("db-1"), std::move(server));
  if (engine_.config().trace == sim::TraceMode::full) database_->keep_log();
  load_tables(*database_, config.database);
  sessions_ = std::make_unique<Sessions>(network_, std::move(session_nodes), driver, *database_, std::move(script));
  engine_.count_memory([this] { return bytes_held(*database_); });
}

}  // namespace models::sessions
