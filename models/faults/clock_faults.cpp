#include "models/faults/clock_faults.hpp"

#include <algorithm>
#include <cmath>

namespace models {

void inject_clock_faults(Node& node, std::vector<ClockFault> faults) {
  if (faults.empty()) return;
  std::stable_sort(faults.begin(), faults.end(), [](const auto& x, const auto& y) { return x.at < y.at; });
  node.engine().spawn(sim::kWorld, "faults.clock." + node.name(), [&node, faults = std::move(faults)] {
    for (const ClockFault& f : faults) {
      sim::sleep_until(f.at);
      if (f.kind == ClockFault::Kind::step) node.step_clock(f.step);
      else node.set_drift_ppm(f.drift_ppm);
    }
  }, sim::SpawnOptions{.background = true});
}

void inject_random_clock_steps(Node& node, RandomClockStepsConfig config) {
  inject_repeatedly(node.engine(), "faults.clock-steps." + node.name(), std::move(config.interval), config.window,
                    [&node, step = std::move(config.step)](sim::Stream& stream) {
                      node.step_clock(sim::Duration{std::llround(step.sample(stream))});
                    });
}

}  // namespace models
