#pragma once
// Faults placed by a search. A scenario gives a budget instead of a time ("one pause of 5 or
// 45 s on an app server, anywhere"), and `explore --mode dfs` places each fault at every point
// a process can be interrupted: before and after each message a node sends (a request to an
// app server, a statement, a lock call, a reply). Each such point is one enumerable choice of
// the run, on the stream "faults.placed": option 0 places nothing, every other option one
// fault there (a pause of each length before or after the send, a crash before or after it,
// the message lost). A point offers only what the budget has left, so a run places at most the
// budget. The choices are asked only while a search walks them (ChoiceSource::exploring): a
// plain trial, random or pct search places nothing.

#include <cstdint>
#include <vector>

#include "models/net/network.hpp"
#include "sim/sim.hpp"

namespace models {

/// The stream whose choices place faults; a dfs search counts its deviations apart from the
/// reorderings it bounds.
inline constexpr const char* kPlacementStream = "faults.placed";

struct PlacementBudget {
  int pauses = 0;
  std::vector<sim::Duration> pause_lengths;  // each point offers each length
  std::vector<sim::NodeId> pause_nodes;      // the nodes that may be paused
  int crashes = 0;
  sim::Duration downtime = std::chrono::seconds(1);  // until the crashed node restarts
  std::vector<sim::NodeId> crash_nodes;
  int lost_messages = 0;
  std::vector<sim::NodeId> loss_nodes;  // the senders whose messages may be lost
};

/// What a search placed in one trial: how many faults, and the pauses' lengths summed.
struct PlacedFaults {
  std::uint64_t count = 0;
  sim::Duration paused{};
};

/// Asks, around every message sent on `network`, where to place the budget's faults; each
/// fault placed is counted in `*placed` (a FaultSurface's), if given.
void place_faults(sim::Engine& engine, Network& network, PlacementBudget budget, PlacedFaults* placed = nullptr);

}  // namespace models
