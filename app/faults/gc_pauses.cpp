// "gc_pauses": stop-the-world pauses again and again at drawn intervals, on every app
// server or on the nodes listed.

#include "app/fault_kind.hpp"
#include "models/faults/gc_pauses.hpp"

namespace locksim {
namespace {

class GcPauses : public Fault {
 public:
  models::GcPausesConfig config;
  std::vector<std::string> nodes;  // empty: every app server
  sim::Duration count_over{};      // the pauses that count as faults: this long at least

  void inject(const models::FaultSurface& surface) const override {
    models::GcPausesConfig counted = config;
    if (surface.drawn_faults != nullptr)
      counted.on_pause = [drawn = surface.drawn_faults, over = count_over](sim::Duration d) {
        if (d >= over) ++*drawn;
      };
    if (nodes.empty())
      for (models::Node* app : surface.app_nodes) models::inject_gc_pauses(*app, counted);
    for (const auto& name : nodes)
      if (models::Node* n = surface.find(name)) models::inject_gc_pauses(*n, counted);
  }
  int count() const override { return 1; }
  std::uint64_t injected(const models::FaultSurface& surface, sim::Time) const override {
    return surface.drawn_faults != nullptr ? *surface.drawn_faults : 0;
  }
  json effective() const override {
    return {{"interval", distribution_json(config.interval)},
            {"length", distribution_json(config.length)},
            {"nodes", nodes},
            {"count_over_ms", to_ms(count_over)}};
  }
};

class GcPausesKind : public FaultKind {
 public:
  const char* key() const override { return "gc_pauses"; }
  const char* meaning() const override {
    return "stop-the-world pauses at drawn intervals and of drawn lengths, on every app server or the listed nodes";
  }
  json exemplar() const override { return {{"nodes", {"app-1"}}}; }
  std::shared_ptr<const Fault> load(const Reader& g, const NodeNames& names) const override {
    g.only({"interval", "length", "nodes", "count_over_ms"});
    auto f = std::make_shared<GcPauses>();
    f->config.interval = g.distribution("interval", f->config.interval);
    f->config.length = g.distribution("length", f->config.length);
    f->count_over = g.millis("count_over_ms", f->count_over);
    g.declare("nodes", {{"type", "array"}, {"items", {{"type", "string"}}}, {"default", json::array()}});
    if (g.has("nodes")) {
      const json& nodes = g.raw().at("nodes");
      if (!nodes.is_array()) g.fail("a list of nodes", "nodes");
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        const json one = {{"node", nodes[i]}};
        f->nodes.push_back(names.read(Reader(one, g.file(), g.where("nodes/" + std::to_string(i))), "node"));
      }
    }
    return f;
  }
  void shrink(const json& faults, std::vector<Smaller>& removals, std::vector<Smaller>&) const override {
    if (!faults.contains(key())) return;
    json without = faults;
    without.erase(key());
    removals.emplace_back("faults", std::move(without));
  }
};

}  // namespace

const FaultKind& gc_pauses_kind() {
  static const GcPausesKind kind;
  return kind;
}

}  // namespace locksim
