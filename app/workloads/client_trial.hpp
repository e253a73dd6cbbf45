#pragma once
// The trial of the workloads with clients (account-bind, and every workload written in Lua):
// clients send requests through the load balancer to app servers whose handler is the strategy,
// in a world with the services the strategy needs; then the checkers of every workload, and the
// workload's own (ClientWorkload).

#include <cstdint>
#include <vector>

#include "app/runner.hpp"
#include "models/checkers/checker.hpp"
#include "models/deployment.hpp"
#include "models/strategies/strategy.hpp"

namespace locksim {

/// A finished trial of a workload with clients, as its own checks read it.
struct ClientTrialEnd {
  std::uint64_t seed;
  const models::Deployment& deployment;
  const models::strategies::Env& env;
  models::strategies::Strategy& strategy;
};

/// What a workload with clients adds to the trial every such workload runs.
class ClientWorkload {
 public:
  virtual ~ClientWorkload() = default;
  /// Its tables whose rows stand one per business key (duplicate_rows counts the others).
  virtual std::vector<models::checkers::KeyedTable> keyed_tables(const Scenario& s) const = 0;
  /// Counts in `out` what its own checkers find in the trial.
  virtual void check(const Scenario& s, const ClientTrialEnd& end, const models::checkers::Trial& trial,
                     models::checkers::Findings& out) const = 0;
};

TrialOutcome run_client_trial(const ClientWorkload& workload, const Scenario& s, const StrategyChoice& choice, std::uint64_t seed,
                              TraceKept kept, sim::TieBreak tie_break, sim::Chooser chooser, sim::Footprints* footprints);

}  // namespace locksim
