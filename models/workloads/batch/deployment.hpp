#pragma once
// What the batch-scheduler workload deploys.

#include <memory>
#include <vector>

#include "models/deployment.hpp"
#include "models/workloads/batch/batch.hpp"

namespace models::batch {

/// The batch scheduler's deployment: schedulers and consumers on the app nodes, the task
/// table on db-1, a queue broker on mq-1; no clients.
class Deployment : public OwnNodes {
 public:
  Deployment(sim::EngineConfig engine, const DeploymentConfig& config, Design design, BatchConfig batch);
  ~Deployment() { engine_.shutdown(); }

  void start() { workload_->start(); }
  const db::Database& database() const { return database_->database(); }
  const TaskLog& tasks() const { return workload_->tasks(); }

 private:
  std::unique_ptr<db::Server> database_;
  std::vector<std::unique_ptr<db::Pool>> pools_;
  std::unique_ptr<Queue> queue_;
  std::unique_ptr<Workload> workload_;
};

}  // namespace models::batch
