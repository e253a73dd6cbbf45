// "clock_steps": a node's wall clock jumps at a set time (ntpd stepping, an operator's
// `date -s`); only that node's clock changes.

#include <map>

#include "app/fault_kind.hpp"
#include "models/faults/clock_faults.hpp"

namespace locksim {
namespace {

struct ClockStep {
  std::string node;
  sim::Time at;
  sim::Duration step{};
};

class ClockSteps : public Fault {
 public:
  std::vector<ClockStep> steps;

  void inject(const models::FaultSurface& surface) const override {
    std::map<std::string, std::vector<models::ClockFault>> by_node;  // one injector per node, in name order
    for (const auto& c : steps)
      if (surface.find(c.node) != nullptr) by_node[c.node].push_back({.at = c.at, .step = c.step});
    for (auto& [name, list] : by_node) models::inject_clock_faults(*surface.find(name), std::move(list));
  }
  int count() const override { return static_cast<int>(steps.size()); }
  std::uint64_t injected(const models::FaultSurface& surface, sim::Time end) const override {
    return listed_injected(steps, end, [&](const auto& c) { return surface.find(c.node) != nullptr; });
  }
  json effective() const override {
    json list = json::array();
    for (const auto& c : steps)
      list.push_back({{"node", c.node}, {"at_ms", to_ms(c.at.time_since_epoch())}, {"step_ms", to_ms(c.step)}});
    return list;
  }
};

class ClockStepsKind : public FaultKind {
 public:
  const char* key() const override { return "clock_steps"; }
  const char* meaning() const override { return "a node's wall clock jumps by step_ms at a set time (negative: backward)"; }
  std::shared_ptr<const Fault> load(const Reader& list, const NodeNames& names) const override {
    auto out = std::make_shared<ClockSteps>();
    each_entry(list, [&](const Reader& c) {
      c.only({"node", "at_ms", "step_ms"});
      c.require("step_ms", "a step_ms (negative: backward)");
      out->steps.push_back({names.read(c, "node"), sim::Time{} + c.millis("at_ms", {}), c.millis("step_ms", {}, -limits::max_ms)});
    });
    return out;
  }
};

}  // namespace

const FaultKind& clock_steps_kind() {
  static const ClockStepsKind kind;
  return kind;
}

}  // namespace locksim
