#pragma once
// A machine: a named engine node with its own clock, which can be paused (a
// stop-the-world GC pause, a VM freeze), crashed and restarted. Components living on the
// node register crash and restart hooks here; they run in registration order.

#include <functional>
#include <string>
#include <vector>

#include "models/node/clock.hpp"
#include "sim/sim.hpp"

namespace models {

struct NodeConfig {
  std::string name;
  ClockConfig clock;
};

class Node {
 public:
  Node(sim::Engine& engine, NodeConfig config);
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  sim::NodeId id() const { return id_; }
  const std::string& name() const { return engine_.node_name(id_); }
  sim::Engine& engine() const { return engine_; }
  /// The node's own clock; true time is for checkers only.
  Clock& clock() { return clock_; }
  const Clock& clock() const { return clock_; }

  /// Freezes every process of the node for `length` (overlapping pauses merge).
  void pause(sim::Duration length) { engine_.pause(id_, length); }
  /// Kills every process of the node and runs the crash hooks (volatile state is lost).
  void crash() { engine_.crash(id_); }
  /// Brings the node back and runs the restart hooks (they start its processes again).
  void restart() { engine_.restart(id_); }
  bool is_up() const { return engine_.is_up(id_); }
  bool is_paused() const { return engine_.is_paused(id_); }

  void on_crash(std::function<void()> hook) { crash_hooks_.push_back(std::move(hook)); }
  void on_restart(std::function<void()> hook) { restart_hooks_.push_back(std::move(hook)); }

  /// Starts a process on this node.
  sim::ProcessId spawn(std::string name, std::function<void()> body, sim::SpawnOptions options = {}) {
    return engine_.spawn(id_, std::move(name), std::move(body), options);
  }

  /// Steps the wall clock now, leaving a trace event ("clock.step", a = the step in ns).
  void step_clock(sim::Duration by);
  /// Changes the clock's drift now ("clock.drift", a = ppm x 1000).
  void set_drift_ppm(double ppm);

 private:
  sim::Engine& engine_;
  sim::NodeId id_;
  Clock clock_;
  std::vector<std::function<void()>> crash_hooks_;
  std::vector<std::function<void()>> restart_hooks_;
};

}  // namespace models
