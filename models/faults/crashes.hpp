#pragma once
// Crashes and restarts of one node: a process killed by the OOM killer, a kernel panic,
// a deploy. Everything volatile on the node is lost; its restart hooks bring it back.

#include "models/faults/schedule.hpp"
#include "models/node/node.hpp"

namespace models {

struct CrashesConfig {
  /// From the restart (or the window's start) to the next crash.
  sim::Distribution interval = sim::exponential(std::chrono::minutes(1));
  sim::Distribution downtime = sim::fixed(std::chrono::seconds(5));
  FaultWindow window;
};

/// Crashes `node` and restarts it after the downtime, again and again ("faults.crash.<node>").
void inject_crashes(Node& node, CrashesConfig config);

}  // namespace models
