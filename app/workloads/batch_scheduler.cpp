// The batch-scheduler workload: schedulers on the app nodes poll a task table and enqueue what
// they find, consumers run the tasks; the strategies are designs of the scheduler (models/workloads/batch/).
// No clients: its keys of "workload" say how many tasks, how often the schedulers poll, how
// long a task runs; they are read into its models::batch::BatchConfig, kept in the scenario.

#include <fmt/format.h>

#include <any>

#include "app/fault_kind.hpp"
#include "app/trial.hpp"
#include "app/workload_kind.hpp"
#include "models/checkers/checker.hpp"
#include "models/workloads/batch/deployment.hpp"
#include "models/workloads/batch/checker.hpp"

namespace locksim {
namespace {

namespace strategies = models::strategies;

// The batch scheduler's trial: no clients, no locks to draw.
TrialOutcome run_batch_trial(const Scenario& s, const strategies::Entry& entry, const StrategyChoice& choice,
                             sim::EngineConfig engine) {
  const models::batch::BatchConfig& config = own_config<models::batch::BatchConfig>(s);
  models::batch::Deployment deployment(std::move(engine), s.deployment, std::any_cast<models::batch::Design>(entry.design(choice.params)),
                                       config);
  deployment.start();
  inject_faults(s, deployment.fault_surface());
  const sim::RunResult run = deployment.run();
  deployment.engine().shutdown();

  const models::checkers::Trial trial{.end = deployment.engine().now(), .finished = run.ok(),
                                       .out_of_memory = run.status == sim::RunStatus::memory_budget, .database = &deployment.database()};
  models::batch::BatchTrial batch{.tasks = deployment.tasks()};
  for (const auto& row : deployment.database().committed_rows(models::batch::kTasks)) batch.stored.push_back(row.row.id);
  models::checkers::Findings findings = models::checkers::check_all(trial);
  models::checkers::check_each(models::batch::batch_checkers(), trial, batch, findings);
  TrialOutcome out;
  take_findings(std::move(findings), out);
  out.events = run.events;
  out.trace_hash = run.trace_hash;
  out.operations = static_cast<std::uint64_t>(config.tasks);
  out.counts["operations"] = static_cast<double>(out.operations);
  count_faults(s, deployment.fault_surface(), deployment.engine().now(), out);
  out.db_statements = deployment.database().stats().statements;
  outcome_ready(out);
  return out;
}

// The scenario's batch configuration: its keys read into it, its trials read it.
template <class S>
auto& batch(S& s) {
  return own_config<models::batch::BatchConfig>(s);
}

class BatchScheduler : public WorkloadKind {
 public:
  const char* name() const override { return "batch-scheduler"; }
  const Keys<Scenario>& keys() const override {
    using namespace keys;
    using S = Scenario;
    static const Keys<S> keys = {
        integer<S>("tasks", [](auto& s) -> auto& { return batch(s).tasks; }, 1, 1'000'000),
        millis<S>("poll_interval_ms", [](auto& s) -> auto& { return batch(s).poll_interval; }, 0.001),
        distribution<S>("poll_jitter", [](auto& s) -> auto& { return batch(s).poll_jitter; }),
        integer<S>("batch_size", [](auto& s) -> auto& { return batch(s).batch_size; }, 1, 1'000'000),
        integer<S>("consumers_per_node", [](auto& s) -> auto& { return batch(s).consumers_per_node; }, 1, 10'000),
        distribution<S>("task_work", [](auto& s) -> auto& { return batch(s).task_work; }),
        millis<S>("reap_after_ms", [](auto& s) -> auto& { return batch(s).reap_after; }, 0.001),
        millis<S>("horizon_ms", [](auto& s) -> auto& { return batch(s).horizon; }, 0.001),
    };
    return keys;
  }
  void load(const Reader*, const Reader&, Scenario&) const override {}
  // Every app server runs its consumers.
  void check_population(const Reader& top, const Scenario& s) const override {
    const int app_servers = s.deployment.app_servers;
    const int consumers = batch(s).consumers_per_node;
    if (static_cast<std::int64_t>(app_servers) * consumers > limits::max_clients)
      top.fail(fmt::format("at most {} consumers in all (topology.app_servers x workload.consumers_per_node), got {} x {}",
                           limits::max_clients, app_servers, consumers),
               "workload");
  }
  std::vector<std::string> tables() const override { return {models::batch::kTasks}; }
  TrialOutcome run_trial(const Scenario& s, const StrategyChoice& choice, std::uint64_t seed, TraceKept kept,
                         sim::TieBreak tie_break, sim::Chooser chooser, sim::Footprints* footprints) const override {
    return run_batch_trial(s, choice.entry(), choice,
                           engine_config(s, seed, kept == TraceKept::none ? kept : TraceKept::hash, std::move(tie_break),
                                         std::move(chooser), footprints));
  }
  std::vector<MetricInfo> metrics() const override { return models::checkers::metrics_of(models::batch::batch_checkers()); }
};

}  // namespace

const WorkloadKind& batch_scheduler_workload() {
  static const BatchScheduler kind;
  return kind;
}

}  // namespace locksim
