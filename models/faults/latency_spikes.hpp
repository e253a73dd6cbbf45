#pragma once
// Latency spikes: for an interval, messages on some links take several times as long (a
// congested switch, a saturated uplink, a noisy neighbour). Clients time out and retry
// while the first copy of their request is still being served.

#include <vector>

#include "models/faults/schedule.hpp"
#include "models/net/network.hpp"

namespace models {

struct LatencySpike {
  sim::Time at;
  sim::Duration length{};
  double factor = 10;  // latency multiplied by this
  /// The links slowed, each one way; Network::kAnyNode at either end stands for every node.
  std::vector<std::pair<sim::NodeId, sim::NodeId>> links{};
};

/// Applies each spike at its time ("faults.latency-spike").
void inject_latency_spikes(Network& net, std::vector<LatencySpike> spikes);

}  // namespace models
