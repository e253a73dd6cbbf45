#include "bench/scenario_bench.hpp"

#include <chrono>

#include "app/runner.hpp"
#include "app/scenario.hpp"

namespace bench {

ScenarioFigures scenario_bench(int trials_per_strategy) {
  locksim::Scenario s = locksim::load_scenario(locksim::scenario_path("account-bind"));
  s.trials = trials_per_strategy;
  const double trials = static_cast<double>(trials_per_strategy) * static_cast<double>(s.strategies.size());
  auto timed = [&](int jobs, std::uint64_t* events) {  // NOLINT: one use, kept for its name
    const auto start = std::chrono::steady_clock::now();
    const auto results = locksim::run_scenario(s, jobs);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (events != nullptr)
      for (const auto& r : results.strategies) *events += r.events;
    return wall;
  };
  std::uint64_t events = 0;
  const double one = timed(1, &events);
  return {trials / one, static_cast<double>(events) / one};
}

}  // namespace bench
