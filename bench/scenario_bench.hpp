#pragma once
// The main job measured: account-bind with every strategy, with one thread and with two.

namespace bench {

struct ScenarioFigures {
  double trials_per_s_1 = 0;  // every strategy's trials, one thread
  double trials_per_s_2 = 0;  // the same, two threads
  double events_per_s_per_core = 0;  // simulated events per second of one thread
};

ScenarioFigures scenario_bench(int trials_per_strategy);

}  // namespace bench
