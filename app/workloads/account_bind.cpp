// The account-bind workload: clients bind OpenIDs ("bind OpenID key to this device"), the app
// servers' handler is the strategy, and the checkers count duplicate rows of t_account.open_id.
// Its key of "workload": whether the operation binds (insert if absent) or rebinds (the latest
// binding should stand: lost_updates). A rollout (models/workloads/rollout/) is this workload
// over time: its trials are account-bind's, with the rollout's checkers besides.

#include "app/trial.hpp"
#include "app/workload_kind.hpp"
#include "app/workloads/client_trial.hpp"
#include "models/workloads/account_bind/checkers.hpp"
#include "models/workloads/rollout/rollout.hpp"

namespace locksim {
namespace {

namespace account_bind = models::workloads::account_bind;

class AccountBind : public WorkloadKind, public ClientWorkload {
 public:
  const char* name() const override { return "account-bind"; }
  bool has_clients() const override { return true; }
  const Keys<Scenario>& keys() const override {
    static const Keys<Scenario> keys = {keys::choice<Scenario>("operation", [](auto& s) -> auto& { return s.operation; }, {"bind", "rebind"})};
    return keys;
  }
  // A rollout's table, code and cleanup job: its plans are strategies of this workload.
  std::vector<std::string> top_level_keys() const override { return {"rollout"}; }
  void load(const Reader*, const Reader&, Scenario&) const override {}
  // The documents of app/schema.cpp are of this kind, the default: they reach its key.
  json exemplar() const override { return nullptr; }
  TrialOutcome run_trial(const Scenario& s, const StrategyChoice& choice, std::uint64_t seed, TraceKept kept,
                         sim::TieBreak tie_break, sim::Chooser chooser, sim::Footprints* footprints) const override {
    return run_client_trial(*this, s, choice, seed, kept, std::move(tie_break), std::move(chooser), footprints);
  }
  std::vector<MetricInfo> metrics() const override {
    std::vector<MetricInfo> out = models::checkers::metrics_of(account_bind::account_checkers());
    for (auto& m : models::checkers::metrics_of(models::rollout::rollout_checkers())) out.push_back(std::move(m));
    return out;
  }
  // A rollout's phases, as its plan sets them out: the results give each one's figures.
  void describe(const StrategyChoice& choice, reports::StrategyResult& result) const override {
    if (!choice.rollout) return;
    for (const models::rollout::Phase& phase : models::rollout::phases(*choice.rollout))
      result.phases.push_back({seconds(phase.from), seconds(phase.to), phase.steps});
  }
  std::vector<models::checkers::KeyedTable> keyed_tables(const Scenario&) const override {
    return {{account_bind::kAccounts, "open_id"}};
  }
  void check(const Scenario& s, const ClientTrialEnd& end, const models::checkers::Trial& trial,
             models::checkers::Findings& out) const override {
    models::checkers::check_each(account_bind::account_checkers(), trial, account_bind::BindTrial{.rebinds = s.operation == "rebind"},
                                 out);
    if (auto* rollout = dynamic_cast<models::rollout::Rollout*>(&end.strategy))
      models::checkers::check_each(models::rollout::rollout_checkers(), trial, rollout->finish(end.deployment.database()), out);
  }
};

}  // namespace

const WorkloadKind& account_bind_workload() {
  static const AccountBind kind;
  return kind;
}

}  // namespace locksim
