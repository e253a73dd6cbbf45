// The batch-scheduler workload: schedulers on the app nodes poll a task table and enqueue what
// they find, consumers run the tasks; the strategies are designs of the scheduler (models/workloads/batch/).
// No clients: its keys of "workload" say how many tasks, how often the schedulers poll, how
// long a task runs.

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
  models::batch::Deployment deployment(std::move(engine), s.deployment, std::any_cast<models::batch::Design>(entry.design(choice.params)),
                                       s.batch);
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
  out.operations = static_cast<std::uint64_t>(s.batch.tasks);
  out.counts["operations"] = static_cast<double>(out.operations);
  count_faults(s, deployment.fault_surface(), deployment.engine().now(), out);
  out.db_statements = deployment.database().stats().statements;
  return out;
}

class BatchScheduler : public WorkloadKind {
 public:
  const char* name() const override { return "batch-scheduler"; }
  const Keys<Scenario>& keys() const override {
    using namespace keys;
    using S = Scenario;
    static const Keys<S> keys = {
        integer<S>("tasks", [](auto& s) -> auto& { return s.batch.tasks; }, 1, 1'000'000),
        millis<S>("poll_interval_ms", [](auto& s) -> auto& { return s.batch.poll_interval; }, 0.001),
        distribution<S>("poll_jitter", [](auto& s) -> auto& { return s.batch.poll_jitter; }),
        integer<S>("batch_size", [](auto& s) -> auto& { return s.batch.batch_size; }, 1, 1'000'000),
        integer<S>("consumers_per_node", [](auto& s) -> auto& { return s.batch.consumers_per_node; }, 1, 10'000),
        distribution<S>("task_work", [](auto& s) -> auto& { return s.batch.task_work; }),
        millis<S>("reap_after_ms", [](auto& s) -> auto& { return s.batch.reap_after; }, 0.001),
        millis<S>("horizon_ms", [](auto& s) -> auto& { return s.batch.horizon; }, 0.001),
    };
    return keys;
  }
  void load(const Reader*, const Reader&, Scenario&) const override {}
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
