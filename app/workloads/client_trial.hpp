#pragma once
// The trial of the workloads with clients (account-bind, and every workload written in Lua):
// clients send requests through the load balancer to app servers whose handler is the strategy,
// in a world with the services the strategy needs; then the checkers, and a Lua workload's
// check over its tables and the history of its operations.

#include "app/runner.hpp"

namespace locksim {

TrialOutcome run_client_trial(const Scenario& s, const StrategyChoice& choice, std::uint64_t seed, TraceKept kept,
                              sim::TieBreak tie_break, sim::Chooser chooser, sim::Footprints* footprints);

}  // namespace locksim
