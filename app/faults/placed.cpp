// "explore": faults given as a budget instead of a time, placed by `explore --mode dfs` at
// every point a process can be interrupted (models/faults/placement.hpp). A plain trial, and a
// random or pct search, place none.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/fault_kind.hpp"
#include "models/faults/placement.hpp"

namespace locksim {
namespace {

/// Each kind's count at most: every placement more multiplies the schedules a search walks.
constexpr int kMaxPlaced = 3;
constexpr std::size_t kMaxLengths = 8;

struct Budget {
  int count = 0;
  std::vector<sim::Duration> lengths;  // pauses
  sim::Duration downtime = std::chrono::seconds(1);  // crashes
  std::vector<std::string> nodes;  // empty: the kind's default nodes
};

class Placed : public Fault {
 public:
  Budget pauses, crashes, lost;

  void inject(const models::FaultSurface& surface) const override {
    models::PlacementBudget b;
    const auto ids = [&](const Budget& budget, bool every_node) {
      std::vector<sim::NodeId> out;
      if (!budget.nodes.empty()) {
        for (const auto& name : budget.nodes)
          if (const models::Node* n = surface.find(name)) out.push_back(n->id());
      } else if (every_node) {
        for (const auto& [name, node] : surface.nodes) out.push_back(node->id());
      } else {
        for (const models::Node* app : surface.app_nodes) out.push_back(app->id());
      }
      return out;
    };
    b.pauses = pauses.count;
    b.pause_lengths = pauses.lengths;
    b.pause_nodes = ids(pauses, false);
    b.crashes = crashes.count;
    b.downtime = crashes.downtime;
    b.crash_nodes = ids(crashes, false);
    b.lost_messages = lost.count;
    b.loss_nodes = ids(lost, true);
    models::place_faults(*surface.engine, *surface.network, std::move(b), surface.placed_faults);
  }
  int count() const override { return pauses.count + crashes.count + lost.count; }
  std::uint64_t injected(const models::FaultSurface& surface, sim::Time) const override {
    return surface.placed_faults != nullptr ? surface.placed_faults->count : 0;
  }
  json effective() const override {
    json out = json::object();
    const auto lengths = [](const Budget& b) {
      json list = json::array();
      for (const auto d : b.lengths) list.push_back(to_ms(d));
      return list;
    };
    // Nodes left out: the kind's default nodes, which no list names.
    const auto with_nodes = [](json entry, const Budget& b) {
      if (!b.nodes.empty()) entry["nodes"] = b.nodes;
      return entry;
    };
    if (pauses.count > 0) out["pauses"] = with_nodes({{"count", pauses.count}, {"length_ms", {{"one_of_ms", lengths(pauses)}}}}, pauses);
    if (crashes.count > 0) out["crashes"] = with_nodes({{"count", crashes.count}, {"downtime_ms", to_ms(crashes.downtime)}}, crashes);
    if (lost.count > 0) out["lost_messages"] = with_nodes({{"count", lost.count}}, lost);
    return out;
  }
  std::string placed_text() const override {
    std::vector<std::string> parts;
    const auto where = [](const Budget& b, const char* fallback) {
      return b.nodes.empty() ? std::string(fallback) : fmt::format("{}", fmt::join(b.nodes, " or "));
    };
    if (pauses.count > 0) {
      std::vector<std::string> each;
      for (const auto d : pauses.lengths) each.push_back(fmt::format("{:g} ms", to_ms(d)));
      parts.push_back(fmt::format("{} pause{} of {} on {}", pauses.count, pauses.count == 1 ? "" : "s",
                                  fmt::join(each, " or "), where(pauses, "an app server")));
    }
    if (crashes.count > 0)
      parts.push_back(fmt::format("{} crash{} of {} ({:g} ms down)", crashes.count, crashes.count == 1 ? "" : "es",
                                  where(crashes, "an app server"), to_ms(crashes.downtime)));
    if (lost.count > 0)
      parts.push_back(fmt::format("{} lost message{} from {}", lost.count, lost.count == 1 ? "" : "s", where(lost, "any node")));
    return fmt::format("{} placed anywhere", fmt::join(parts, " and "));
  }
};

// The lengths a search tries: one duration, or {"one_of_ms": [...]}.
std::vector<sim::Duration> read_lengths(const Reader& p) {
  const std::string expected = fmt::format("a length_ms: a duration of at least 0.001 ms, or {{\"one_of_ms\": [up to {} of them]}} "
                                           "(a search places each length; it draws none)",
                                           kMaxLengths);
  const json number = {{"type", "number"}, {"minimum", 0.001}};
  p.declare("length_ms", {{"oneOf",
                           {number,
                            {{"type", "object"},
                             {"required", {"one_of_ms"}},
                             {"additionalProperties", false},
                             {"properties", {{"one_of_ms", {{"type", "array"}, {"minItems", 1}, {"maxItems", kMaxLengths}, {"items", number}}}}}}}}});
  p.require("length_ms", expected);
  const Reader bare(p.raw(), p.file(), p.where());  // declared above, as a whole
  const json& v = p.raw().at("length_ms");
  if (v.is_number()) return {bare.millis("length_ms", {}, 0.001)};
  if (!v.is_object() || v.size() != 1 || !v.contains("one_of_ms")) p.fail(expected, "length_ms");
  const Reader set(v, p.file(), p.where("length_ms"));
  std::vector<sim::Duration> out = set.times("one_of_ms", "the pause lengths a search tries", kMaxLengths);
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i] < std::chrono::microseconds(1) || (i > 0 && out[i] == out[i - 1]))
      set.fail("lengths of at least 0.001 ms, each once", "one_of_ms/" + std::to_string(i));
  return out;
}

Budget read_budget(const Reader& r, const NodeNames& names, bool pauses, bool crashes) {
  if (pauses) r.only({"count", "length_ms", "nodes"});
  else if (crashes) r.only({"count", "downtime_ms", "nodes"});
  else r.only({"count", "nodes"});
  Budget b;
  r.require("count", fmt::format("a count (how many to place, 1 to {})", kMaxPlaced));
  b.count = static_cast<int>(r.integer("count", 1, kMaxPlaced));
  if (pauses) b.lengths = read_lengths(r);
  if (crashes) b.downtime = r.millis("downtime_ms", b.downtime);
  if (r.has("nodes")) b.nodes = names.read_list(r, "nodes");
  else r.declare("nodes", {{"type", "array"}, {"items", {{"type", "string"}}}});
  return b;
}

class PlacedKind : public FaultKind {
 public:
  const char* key() const override { return "explore"; }
  const char* meaning() const override {
    return "faults given as a budget, not a time: explore --mode dfs places each at every point a process can be "
           "interrupted (before and after each message it sends)";
  }
  json exemplar() const override {
    return {{"pauses", {{"count", 1}, {"length_ms", {{"one_of_ms", {10, 20}}}}, {"nodes", {"app-1"}}}},
            {"crashes", {{"count", 1}, {"nodes", {"app-1"}}}},
            {"lost_messages", {{"count", 1}, {"nodes", {"app-1"}}}}};
  }
  std::shared_ptr<const Fault> load(const Reader& e, const NodeNames& names) const override {
    e.only({"pauses", "crashes", "lost_messages"});
    auto f = std::make_shared<Placed>();
    if (e.has("pauses")) f->pauses = read_budget(e.child("pauses"), names, true, false);
    if (e.has("crashes")) f->crashes = read_budget(e.child("crashes"), names, false, true);
    if (e.has("lost_messages")) f->lost = read_budget(e.child("lost_messages"), names, false, false);
    if (f->count() == 0) e.fail("at least one of pauses, crashes and lost_messages");
    return f;
  }
  void shrink(const json& faults, std::vector<Smaller>& removals, std::vector<Smaller>&) const override {
    if (!faults.contains(key()) || !faults.at(key()).is_object()) return;
    const json& placed = faults.at(key());
    for (const char* kind : {"pauses", "crashes", "lost_messages"}) {
      if (!placed.contains(kind) || placed.size() < 2) continue;
      json fewer = placed;
      fewer.erase(kind);
      removals.emplace_back("faults.explore", std::move(fewer));
    }
  }
};

}  // namespace

const FaultKind& placed_kind() {
  static const PlacedKind kind;
  return kind;
}

}  // namespace locksim
