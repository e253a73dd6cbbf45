#pragma once
// Network partitions: a switch failure, a misconfigured firewall, a long clog. Scheduled
// windows (the teaching scenarios: "cut app-1 off from redis-1 at 2 s for 3 s") and
// random ones (one node cut off from the others for a drawn length).

#include <vector>

#include "models/faults/schedule.hpp"
#include "models/net/network.hpp"

namespace models {

/// Cuts every link between `side_a` and `side_b` from `at` for `length`.
struct PartitionWindow {
  sim::Time at;
  sim::Duration length{};
  std::vector<sim::NodeId> side_a{};
  std::vector<sim::NodeId> side_b{};
  PartitionMode mode = PartitionMode::drop;
  bool one_way = false;  // only from side_a to side_b
};

struct RandomPartitionsConfig {
  /// One of these, drawn each time, is cut off from all the others.
  std::vector<sim::NodeId> nodes;
  /// From the heal of one partition to the start of the next.
  sim::Distribution interval = sim::exponential(std::chrono::seconds(30));
  sim::Distribution length = sim::uniform(std::chrono::seconds(1), std::chrono::seconds(10));
  PartitionMode mode = PartitionMode::drop;
  FaultWindow window;
};

/// Applies each window at its time ("faults.partitions").
void inject_partitions(Network& net, std::vector<PartitionWindow> windows);
/// Cuts a random node off again and again ("faults.random-partitions").
void inject_random_partitions(Network& net, RandomPartitionsConfig config);

}  // namespace models
