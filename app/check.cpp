#include "app/check.hpp"

namespace locksim::check {

Verdict trial(const std::string& scenario, const std::string& strategy, const std::string& property,
              const std::vector<std::string>& sets, std::uint64_t seed) {
  const Scenario s = load_scenario(scenario_path(scenario), sets, {strategy});
  const StrategyChoice& choice = strategy_named(s, strategy);
  Verdict v;
  v.token = Token{LOCKSIM_ENGINE_VERSION, scenario, s.hash, sets, choice.shown(), seed, ""};
  v.fired = fired_checkers(run_token(s, choice, v.token, TraceKept::none), property);
  return v;
}

}  // namespace locksim::check
