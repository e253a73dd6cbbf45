#pragma once
// The common shape of a fault injector: a background process on the world node (so it
// acts while its target is paused or down, and keeps no run alive) that waits a drawn
// interval, injects a fault, and repeats within a time window.

#include <functional>
#include <string>

#include "sim/sim.hpp"

namespace models {

struct FaultWindow {
  sim::Time start{};          // no fault before
  sim::Time stop = sim::kNever;  // none starts after
};

/// Starts process `name` (its stream has the same name): from `window.start`, waits
/// `interval`, then runs `fault` (which may block, say for a downtime), until the next
/// fault would start after `window.stop`.
void inject_repeatedly(sim::Engine& engine, std::string name, sim::Distribution interval, FaultWindow window,
                       std::function<void(sim::Stream&)> fault);

/// Starts process `name` that runs `fault` once at true time `at` (a teaching scenario's
/// "pause app-1 at 50 ms for 4 s"); `fault` may block, say for a downtime.
void inject_at(sim::Engine& engine, std::string name, sim::Time at, std::function<void()> fault);

}  // namespace models
