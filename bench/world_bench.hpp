#pragma once
// The part-1 world under load: 100 clients x 100 operations through 4 app nodes.

namespace bench {

struct WorldFigures {
  double events_per_s = 0;      // simulated events per second of wall time, one core
  double operations_per_s = 0;  // logical operations simulated per second of wall time
  double events_per_run = 0;
};

WorldFigures world_bench(int repeats);

}  // namespace bench
