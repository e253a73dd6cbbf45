// The account-bind workload: clients bind OpenIDs ("bind OpenID key to this device"), the app
// servers' handler is the strategy, and the checkers count duplicate rows of t_account.open_id.
// Its key of "workload": whether the operation binds (insert if absent) or rebinds (the latest
// binding should stand: lost_updates).

#include "app/workload_kind.hpp"
#include "app/workloads/client_trial.hpp"

namespace locksim {
namespace {

class AccountBind : public WorkloadKind {
 public:
  const char* name() const override { return "account-bind"; }
  void load(const Reader* w, const Reader&, Scenario& s) const override {
    if (w == nullptr) return;
    s.operation = w->choice("operation", s.operation, {"bind", "rebind"});
    if (w->raw().size() > (w->has("operation") ? 2u : 1u)) w->fail("only \"kind\" and \"operation\" for the account-bind workload");
  }
  void effective(const Scenario& s, json& doc) const override { doc["workload"] = {{"kind", name()}, {"operation", s.operation}}; }
  TrialOutcome run_trial(const Scenario& s, const StrategyChoice& choice, std::uint64_t seed, TraceKept kept,
                         sim::TieBreak tie_break, sim::Chooser chooser, sim::Footprints* footprints) const override {
    return run_client_trial(s, choice, seed, kept, std::move(tie_break), std::move(chooser), footprints);
  }
};

}  // namespace

const WorkloadKind& account_bind_workload() {
  static const AccountBind kind;
  return kind;
}

}  // namespace locksim
