#include "models/faults/schedule.hpp"

namespace models {

void inject_repeatedly(sim::Engine& engine, std::string name, sim::Distribution interval, FaultWindow window,
                       std::function<void(sim::Stream&)> fault) {
  engine.spawn(sim::kWorld, name, [&engine, name, interval = std::move(interval), window, fault = std::move(fault)] {
    sim::Stream stream = engine.stream(name);
    sim::sleep_until(window.start);
    for (;;) {
      const sim::Duration gap = interval.sample_duration(stream);
      if (window.stop != sim::kNever && sim::now() + gap > window.stop) return;
      sim::sleep_for(gap);
      fault(stream);
    }
  }, sim::SpawnOptions{.background = true});
}

void inject_at(sim::Engine& engine, std::string name, sim::Time at, std::function<void()> fault) {
  engine.spawn(sim::kWorld, std::move(name), [at, fault = std::move(fault)] {
    sim::sleep_until(at);
    fault();
  }, sim::SpawnOptions{.background = true});
}

}  // namespace models
