#pragma once
// Stop-the-world pauses of one node: garbage collection, a VM migration, a swap storm.
//
// docs/models.md, Figures the models take: G1 aims for 200 ms pauses, ZGC for under 10 ms,
// and pauses of minutes have been seen (an HBase RegionServer slept 79 s). A lognormal body
// with a rare Pareto tail (sim::mixture) captures both the usual pause and the one that
// outlives a lease.

#include "models/faults/schedule.hpp"
#include "models/node/node.hpp"

namespace models {

struct GcPausesConfig {
  /// From the end of one pause to the start of the next.
  sim::Distribution interval = sim::exponential(std::chrono::seconds(10));
  sim::Distribution length = sim::lognormal_median(std::chrono::milliseconds(50), 0.5);
  FaultWindow window;
  /// Set: told each pause's length as it begins (a runner counting faults).
  std::function<void(sim::Duration)> on_pause{};
};

/// Pauses `node` again and again as configured ("faults.gc.<node>").
void inject_gc_pauses(Node& node, GcPausesConfig config);

}  // namespace models
