#include "models/node/node.hpp"

#include <cmath>

namespace models {

Node::Node(sim::Engine& engine, NodeConfig config)
    : engine_(engine), id_(engine.add_node(std::move(config.name))), clock_(engine, config.clock) {
  engine_.on_crash(id_, [this] {
    for (auto& hook : crash_hooks_) hook();
  });
  engine_.on_restart(id_, [this] {
    for (auto& hook : restart_hooks_) hook();
  });
}

void Node::step_clock(sim::Duration by) {
  clock_.step(by);
  engine_.trace().record(sim::TraceEvent{engine_.now(), id_, engine_.current_process(), engine_.trace().kind("clock.step"), 0,
                                         by.count(), 0});
}

void Node::set_drift_ppm(double ppm) {
  clock_.set_drift_ppm(ppm);
  engine_.trace().record(sim::TraceEvent{engine_.now(), id_, engine_.current_process(), engine_.trace().kind("clock.drift"), 0,
                                         std::llround(ppm * 1000), 0});
}

}  // namespace models
