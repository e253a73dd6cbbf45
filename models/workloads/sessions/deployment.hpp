#pragma once
// What the sessions workload deploys.

#include <memory>
#include <vector>

#include "models/deployment.hpp"
#include "models/workloads/sessions/sessions.hpp"

namespace models::sessions {

/// The sessions workload's deployment: a client node per session (named as the session),
/// each with one connection to db-1, and the script's driver on a node of its own
/// ("script"); the scenario's tables and rows on db-1.
class Deployment : public OwnNodes {
 public:
  Deployment(sim::EngineConfig engine, const DeploymentConfig& config, Script script);
  ~Deployment() { engine_.shutdown(); }

  void start() { sessions_->start(); }
  const db::Database& database() const { return database_->database(); }
  const Sessions& sessions() const { return *sessions_; }
  /// Every table's committed rows now.
  std::vector<TableContents> tables() const { return contents(database(), schemas_); }
  /// The statements db-1 ran, kept when the trial keeps its whole trace (a replay).
  const std::vector<db::LoggedStatement>& statements() const { return database_->log(); }

 private:
  std::unique_ptr<db::Server> database_;
  std::vector<db::TableSchema> schemas_;
  std::unique_ptr<Sessions> sessions_;
};

}  // namespace models::sessions
