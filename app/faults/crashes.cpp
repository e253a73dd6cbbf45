// "crashes": a node goes down at a set time and restarts after its downtime, losing what
// it kept in memory; a Redis node may lose only its process (the OS page cache survives).

#include "app/fault_kind.hpp"
#include "models/faults/schedule.hpp"

namespace locksim {
namespace {

struct Crash {
  std::string node;
  sim::Time at;
  sim::Duration downtime = std::chrono::seconds(1);
  bool process_only = false;
};

class Crashes : public Fault {
 public:
  std::vector<Crash> crashes;

  void inject(const models::FaultSurface& surface) const override {
    for (const auto& c : crashes) {
      models::Node* n = surface.find(c.node);
      if (n == nullptr) continue;
      models::redis::Server* server = nullptr;
      for (models::redis::Server* r : surface.redis)
        if (&r->node() == n) server = r;
      models::inject_at(*surface.engine, "faults.crash." + c.node, c.at, [n, server, c] {
        if (!n->is_up()) return;
        if (c.process_only && server != nullptr) server->kill_process();
        else n->crash();
        sim::sleep_for(c.downtime);
        n->restart();
      });
    }
  }
  int count() const override { return static_cast<int>(crashes.size()); }
  std::uint64_t injected(const models::FaultSurface& surface, sim::Time end) const override {
    return listed_injected(crashes, end, [&](const auto& c) { return surface.find(c.node) != nullptr; });
  }
  json effective() const override {
    json list = json::array();
    for (const auto& c : crashes)
      list.push_back({{"node", c.node},
                      {"at_ms", to_ms(c.at.time_since_epoch())},
                      {"downtime_ms", to_ms(c.downtime)},
                      {"process_only", c.process_only}});
    return list;
  }
};

class CrashesKind : public FaultKind {
 public:
  const char* key() const override { return "crashes"; }
  const char* meaning() const override {
    return "a node goes down at a set time and restarts after its downtime, its memory lost (process_only: a Redis process "
           "dies, the OS page cache survives)";
  }
  json exemplar() const override { return {{{"node", "redis-1"}}}; }
  std::shared_ptr<const Fault> load(const Reader& list, const NodeNames& names) const override {
    auto out = std::make_shared<Crashes>();
    each_entry(list, [&](const Reader& c) {
      c.only({"node", "at_ms", "downtime_ms", "process_only"});
      Crash crash{names.read(c, "node"), sim::Time{} + c.millis("at_ms", {})};
      crash.downtime = c.millis("downtime_ms", crash.downtime);
      crash.process_only = c.boolean("process_only", crash.process_only);
      out->crashes.push_back(crash);
    });
    return out;
  }
};

}  // namespace

const FaultKind& crashes_kind() {
  static const CrashesKind kind;
  return kind;
}

}  // namespace locksim
