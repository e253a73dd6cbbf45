#include "models/faults/latency_spikes.hpp"

namespace models {

void inject_latency_spikes(Network& net, std::vector<LatencySpike> spikes) {
  for (auto& spike : spikes)
    inject_at(net.engine(), "faults.latency-spike", spike.at, [&net, spike = std::move(spike)] {
      for (const auto& [from, to] : spike.links) net.slow(from, to, spike.factor, spike.length);
    });
}

}  // namespace models
