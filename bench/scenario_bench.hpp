#pragma once
// The main job measured in the process: account-bind with every strategy on one thread (the
// commands' scaling over threads is scaling_bench's).

namespace bench {

struct ScenarioFigures {
  double trials_per_s_1 = 0;  // every strategy's trials, one thread
  double events_per_s_per_core = 0;  // simulated events per second of one thread
};

ScenarioFigures scenario_bench(int trials_per_strategy);

/// account-bind's database strategies (check-then-insert, unique-index, insert-ignore-reselect,
/// upsert, select-for-update) under READ COMMITTED on each engine, one thread, measured side by
/// side (alternating, the median of `repeats`).
struct EngineFigures {
  double mariadb_trials_per_s = 0;
  double postgresql_trials_per_s = 0;
};

EngineFigures engine_bench(int trials_per_strategy, int repeats);

}  // namespace bench
