#include "sim/process.hpp"

namespace sim {

Engine& engine(const char* call) {
  Engine* e = Engine::current();
  if (e == nullptr) throw UsageError(std::string(call) + ": called outside a running simulation");
  return *e;
}

void sleep_until(Time t) {
  Engine& e = engine("sim::sleep_until");
  e.sleep_for(t < e.now() ? Duration::zero() : t - e.now(), "sim::sleep_until");
}

ProcessId spawn(std::string name, std::function<void()> body, SpawnOptions options) {
  Engine& e = engine("sim::spawn");
  return e.spawn(e.current_node(), std::move(name), std::move(body), options);
}

ProcessId this_process() {
  Engine& e = engine("sim::this_process");
  if (e.current_process() == 0) throw UsageError("sim::this_process: called outside a simulated process");
  return e.current_process();
}

const std::string& this_process_name() { return engine("sim::this_process_name").process_name(this_process()); }

NodeId this_node() { return engine("sim::this_node").current_node(); }

bool this_process_killed() {
  const Engine* e = Engine::current();
  return e != nullptr && e->current_killed();
}

}  // namespace sim
