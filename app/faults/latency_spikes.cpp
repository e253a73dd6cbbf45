// "latency_spikes": for an interval, messages to and from a node (or between two nodes)
// take `factor` times as long: a congested switch, a saturated uplink. Clients time out and
// retry while their first request is still being served.

#include "app/fault_kind.hpp"
#include "models/faults/latency_spikes.hpp"

namespace locksim {
namespace {

struct Spike {
  sim::Time at;
  sim::Duration length{};
  double factor = models::LatencySpike{}.factor;
  std::string node{};                  // every link to and from it; or
  std::vector<std::string> between{};  // both directions between two nodes
};

class LatencySpikes : public Fault {
 public:
  std::vector<Spike> spikes;

  void inject(const models::FaultSurface& surface) const override {
    constexpr sim::NodeId any = models::Network::kAnyNode;
    std::vector<models::LatencySpike> out;
    for (const auto& s : spikes) {
      models::LatencySpike spike{.at = s.at, .length = s.length, .factor = s.factor};
      if (!s.node.empty()) {
        if (models::Node* n = surface.find(s.node)) spike.links = {{n->id(), any}, {any, n->id()}};
      } else {
        models::Node* a = surface.find(s.between[0]);
        models::Node* b = surface.find(s.between[1]);
        if (a != nullptr && b != nullptr) spike.links = {{a->id(), b->id()}, {b->id(), a->id()}};
      }
      if (!spike.links.empty()) out.push_back(std::move(spike));
    }
    if (!out.empty()) models::inject_latency_spikes(*surface.network, std::move(out));
  }
  int count() const override { return static_cast<int>(spikes.size()); }
  std::uint64_t injected(const models::FaultSurface& surface, sim::Time end) const override {
    return listed_injected(spikes, end, [&](const Spike& s) {
      return s.node.empty() ? surface.find(s.between[0]) != nullptr && surface.find(s.between[1]) != nullptr
                            : surface.find(s.node) != nullptr;
    });
  }
  json effective() const override {
    json list = json::array();
    for (const auto& s : spikes) {
      json one = {{"at_ms", to_ms(s.at.time_since_epoch())}, {"length_ms", to_ms(s.length)}, {"factor", s.factor}};
      if (!s.node.empty()) one["node"] = s.node;
      else one["between"] = s.between;
      list.push_back(std::move(one));
    }
    return list;
  }
};

class LatencySpikesKind : public FaultKind {
 public:
  const char* key() const override { return "latency_spikes"; }
  const char* meaning() const override {
    return "for length_ms from at_ms, messages to and from a node (or between two nodes) take factor times as long";
  }
  json exemplar() const override { return {{{"node", "app-1"}, {"length_ms", 10}}, {{"between", {"app-1", "db-1"}}, {"length_ms", 10}}}; }
  std::shared_ptr<const Fault> load(const Reader& list, const NodeNames& names) const override {
    auto out = std::make_shared<LatencySpikes>();
    each_entry(list, [&](const Reader& r) {
      r.only({"at_ms", "length_ms", "factor", "node", "between"});
      Spike s{sim::Time{} + r.millis("at_ms", {}), length(r)};
      s.factor = r.number("factor", s.factor, 1, 1e6);
      if (r.has("node") == r.has("between")) r.fail("either \"node\" (its every link) or \"between\": [a, b]");
      if (r.has("node")) {
        s.node = names.read(r, "node");
      } else {
        s.between = names.read_list(r, "between");
        if (s.between.size() != 2 || s.between[0] == s.between[1]) r.fail("two different nodes", "between");
      }
      out->spikes.push_back(std::move(s));
    });
    return out;
  }
};

}  // namespace

const FaultKind& latency_spikes_kind() {
  static const LatencySpikesKind kind;
  return kind;
}

}  // namespace locksim
