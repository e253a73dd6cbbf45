#include "models/faults/partitions.hpp"

#include <algorithm>

namespace models {
namespace {
void cut(Network& net, const PartitionWindow& w) {
  for (sim::NodeId a : w.side_a)
    for (sim::NodeId b : w.side_b) {
      net.partition(a, b, w.mode);
      if (!w.one_way) net.partition(b, a, w.mode);
    }
}
void repair(Network& net, const PartitionWindow& w) {
  for (sim::NodeId a : w.side_a)
    for (sim::NodeId b : w.side_b) {
      net.heal(a, b);
      if (!w.one_way) net.heal(b, a);
    }
}
}  // namespace

void inject_partitions(Network& net, std::vector<PartitionWindow> windows) {
  if (windows.empty()) return;
  for (const auto& w : windows)
    if (w.length < sim::Duration::zero()) throw sim::UsageError("models::inject_partitions: negative partition length");
  std::stable_sort(windows.begin(), windows.end(), [](const auto& x, const auto& y) { return x.at < y.at; });
  sim::Engine& engine = net.engine();
  // One process per window, so overlapping windows heal independently.
  for (std::size_t i = 0; i < windows.size(); ++i) {
    engine.spawn(sim::kWorld, "faults.partition-" + std::to_string(i), [&net, w = windows[i]] {
      sim::sleep_until(w.at);
      cut(net, w);
      sim::sleep_for(w.length);
      repair(net, w);
    }, sim::SpawnOptions{.background = true});
  }
}

void inject_random_partitions(Network& net, RandomPartitionsConfig config) {
  if (config.nodes.size() < 2) throw sim::UsageError("models::inject_random_partitions: needs at least two nodes");
  inject_repeatedly(net.engine(), "faults.random-partitions", std::move(config.interval), config.window,
                    [&net, nodes = config.nodes, length = std::move(config.length), mode = config.mode](sim::Stream& stream) {
                      PartitionWindow w;
                      const std::size_t pick = stream.choose(nodes.size());
                      w.side_a = {nodes[pick]};
                      for (std::size_t i = 0; i < nodes.size(); ++i)
                        if (i != pick) w.side_b.push_back(nodes[i]);
                      w.mode = mode;
                      cut(net, w);
                      sim::sleep_for(length.sample_duration(stream));
                      repair(net, w);
                    });
}

}  // namespace models
