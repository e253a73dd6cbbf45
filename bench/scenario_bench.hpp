#pragma once
// The main job measured in the process: account-bind with every strategy on one thread (the
// commands' scaling over threads is scaling_bench's).

namespace bench {

struct ScenarioFigures {
  double trials_per_s_1 = 0;  // every strategy's trials, one thread
  double events_per_s_per_core = 0;  // simulated events per second of one thread
};

ScenarioFigures scenario_bench(int trials_per_strategy);

}  // namespace bench
