#include "bench/scenario_bench.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

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

EngineFigures engine_bench(int trials_per_strategy, int repeats) {
  const std::vector<std::string> only = {"check-then-insert", "unique-index", "insert-ignore-reselect", "upsert", "select-for-update"};
  const auto load = [&](const char* engine) {
    locksim::Scenario s = locksim::load_scenario(locksim::scenario_path("account-bind"),
                                                 {std::string("database.engine=") + engine, "database.isolation=read_committed"}, only);
    s.trials = trials_per_strategy;
    return s;
  };
  const locksim::Scenario mariadb = load("mariadb"), postgresql = load("postgresql");
  const auto trials_per_s = [&](const locksim::Scenario& s) {
    const auto start = std::chrono::steady_clock::now();
    locksim::run_scenario(s, 1);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return static_cast<double>(trials_per_strategy) * static_cast<double>(s.strategies.size()) / wall;
  };
  std::vector<double> m, p;
  for (int i = 0; i < repeats; ++i) {
    m.push_back(trials_per_s(mariadb));
    p.push_back(trials_per_s(postgresql));
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  return {median(m), median(p)};
}

}  // namespace bench
