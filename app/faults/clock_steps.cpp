// "clock_steps": a node's wall clock jumps at a set time (ntpd stepping, an operator's
// `date -s`), or starts to drift at a new rate (a quartz off by some ppm, NTP slewing); only
// that node's clock changes.

#include <map>
#include <optional>

#include "app/fault_kind.hpp"
#include "models/faults/clock_faults.hpp"

namespace locksim {
namespace {

struct ClockStep {
  std::string node;
  sim::Time at;
  sim::Duration step{};
  std::optional<double> drift_ppm{};  // from `at` on, the clock's rate off true time
};

class ClockSteps : public Fault {
 public:
  std::vector<ClockStep> steps;

  void inject(const models::FaultSurface& surface) const override {
    std::map<std::string, std::vector<models::ClockFault>> by_node;  // one injector per node, in name order
    for (const auto& c : steps)
      if (surface.find(c.node) != nullptr) {
        if (c.step != sim::Duration::zero() || !c.drift_ppm) by_node[c.node].push_back({.at = c.at, .step = c.step});
        if (c.drift_ppm)
          by_node[c.node].push_back({.at = c.at, .kind = models::ClockFault::Kind::drift, .drift_ppm = *c.drift_ppm});
      }
    for (auto& [name, list] : by_node) models::inject_clock_faults(*surface.find(name), std::move(list));
  }
  int count() const override { return static_cast<int>(steps.size()); }
  std::uint64_t injected(const models::FaultSurface& surface, sim::Time end) const override {
    return listed_injected(steps, end, [&](const auto& c) { return surface.find(c.node) != nullptr; });
  }
  json effective() const override {
    json list = json::array();
    for (const auto& c : steps) {
      json one = {{"node", c.node}, {"at_ms", to_ms(c.at.time_since_epoch())}, {"step_ms", to_ms(c.step)}};
      if (c.drift_ppm) one["drift_ppm"] = *c.drift_ppm;
      list.push_back(std::move(one));
    }
    return list;
  }
};

class ClockStepsKind : public FaultKind {
 public:
  const char* key() const override { return "clock_steps"; }
  const char* meaning() const override {
    return "a node's wall clock jumps by step_ms at a set time (negative: backward), or drifts at drift_ppm from then on";
  }
  json exemplar() const override { return {{{"node", "redis-1"}, {"step_ms", 10}}}; }
  std::shared_ptr<const Fault> load(const Reader& list, const NodeNames& names) const override {
    auto out = std::make_shared<ClockSteps>();
    each_entry(list, [&](const Reader& c) {
      c.only({"node", "at_ms", "step_ms", "drift_ppm"});
      c.declare("", {{"anyOf", json::array({{{"required", {"step_ms"}}}, {{"required", {"drift_ppm"}}}})}});
      if (!c.has("step_ms") && !c.has("drift_ppm")) c.fail("a step_ms (negative: backward) or a drift_ppm");
      ClockStep step{names.read(c, "node"), sim::Time{} + c.millis("at_ms", {}), c.millis("step_ms", {}, -limits::max_ms)};
      // Within 10% either way: a clock that runs, at rates far past any quartz's or NTP's slew.
      c.declare("drift_ppm", {{"type", "number"}, {"minimum", -100'000}, {"maximum", 100'000}});
      if (c.has("drift_ppm")) step.drift_ppm = c.number("drift_ppm", -100'000, 100'000);
      out->steps.push_back(std::move(step));
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
