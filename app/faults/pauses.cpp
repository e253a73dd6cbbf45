// "pauses": one node stops at a set time for a set length (a GC pause, a VM migration):
// the teaching scenarios' "pause app-1 at 50 ms for 4 s".

#include <cmath>

#include "app/fault_kind.hpp"
#include "models/faults/schedule.hpp"

namespace locksim {
namespace {

struct Pause {
  std::string node;
  sim::Time at;
  sim::Duration length{};
};

class Pauses : public Fault {
 public:
  std::vector<Pause> pauses;

  void inject(const models::FaultSurface& surface) const override {
    for (const auto& p : pauses)
      if (models::Node* n = surface.find(p.node))
        models::inject_at(*surface.engine, "faults.pause." + p.node, p.at, [n, length = p.length] { n->pause(length); });
  }
  int count() const override { return static_cast<int>(pauses.size()); }
  std::uint64_t injected(const models::FaultSurface& surface, sim::Time end) const override {
    return listed_injected(pauses, end, [&](const Pause& p) { return surface.find(p.node) != nullptr; });
  }
  double pause_ms() const override {
    double ms = 0;
    for (const auto& p : pauses) ms += to_ms(p.length);
    return ms;
  }
  json effective() const override {
    json list = json::array();
    for (const auto& p : pauses)
      list.push_back({{"node", p.node}, {"at_ms", to_ms(p.at.time_since_epoch())}, {"length_ms", to_ms(p.length)}});
    return list;
  }
};

class PausesKind : public FaultKind {
 public:
  const char* key() const override { return "pauses"; }
  const char* meaning() const override { return "a node stops at a set time for a set length, then goes on where it was"; }
  json exemplar() const override { return {{{"node", "app-1"}, {"length_ms", 10}}}; }
  std::shared_ptr<const Fault> load(const Reader& f, const NodeNames& names) const override {
    auto out = std::make_shared<Pauses>();
    each_entry(f, [&](const Reader& p) {
      p.only({"node", "at_ms", "length_ms"});
      out->pauses.push_back({names.read(p, "node"), sim::Time{} + p.millis("at_ms", {}), length(p)});
    });
    return out;
  }
  void shrink(const json& faults, std::vector<Smaller>& removals, std::vector<Smaller>& reductions) const override {
    remove_each(faults, key(), removals);
    if (!faults.contains(key()) || !faults.at(key()).is_array()) return;
    const json& pauses = faults.at(key());
    for (std::size_t i = 0; i < pauses.size(); ++i) {
      const double length = pauses[i].value("length_ms", 0.0);
      for (double part : {0.5, 0.75, 0.875}) {
        const double shorter = std::round(length * part);
        if (shorter >= 1 && shorter < length) reductions.emplace_back(fmt::format("faults.pauses.{}.length_ms", i), shorter);
      }
    }
  }
};

}  // namespace

const FaultKind& pauses_kind() {
  static const PausesKind kind;
  return kind;
}

}  // namespace locksim
