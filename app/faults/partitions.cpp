// "partitions": every link between two sides cut at a set time for a set length (or only the
// links from side_a to side_b: "one_way"); messages across are lost ("drop") or held until it
// heals ("hold").

#include "app/fault_kind.hpp"
#include "models/faults/partitions.hpp"

namespace locksim {
namespace {

const Names<models::PartitionMode> kModes = {{"drop", models::PartitionMode::drop}, {"hold", models::PartitionMode::hold}};

struct Partition {
  sim::Time at;
  sim::Duration length{};
  std::vector<std::string> side_a{}, side_b{};
  models::PartitionMode mode = models::PartitionWindow{}.mode;
  bool one_way = false;
};

class Partitions : public Fault {
 public:
  std::vector<Partition> partitions;

  void inject(const models::FaultSurface& surface) const override {
    std::vector<models::PartitionWindow> windows;
    for (const auto& p : partitions) {
      models::PartitionWindow w{.at = p.at, .length = p.length, .mode = p.mode, .one_way = p.one_way};
      for (const auto& name : p.side_a)
        if (models::Node* n = surface.find(name)) w.side_a.push_back(n->id());
      for (const auto& name : p.side_b)
        if (models::Node* n = surface.find(name)) w.side_b.push_back(n->id());
      if (!w.side_a.empty() && !w.side_b.empty()) windows.push_back(std::move(w));
    }
    if (!windows.empty()) models::inject_partitions(*surface.network, std::move(windows));
  }
  int count() const override { return static_cast<int>(partitions.size()); }
  std::uint64_t injected(const models::FaultSurface& surface, sim::Time end) const override {
    const auto any_of = [&](const std::vector<std::string>& side) {
      return std::any_of(side.begin(), side.end(), [&](const std::string& n) { return surface.find(n) != nullptr; });
    };
    return listed_injected(partitions, end, [&](const Partition& p) { return any_of(p.side_a) && any_of(p.side_b); });
  }
  json effective() const override {
    json list = json::array();
    for (const auto& p : partitions)
      list.push_back({{"at_ms", to_ms(p.at.time_since_epoch())},
                      {"length_ms", to_ms(p.length)},
                      {"side_a", p.side_a},
                      {"side_b", p.side_b},
                      {"mode", name_of(kModes, p.mode)},
                      {"one_way", p.one_way}});
    return list;
  }
};

class PartitionsKind : public FaultKind {
 public:
  const char* key() const override { return "partitions"; }
  const char* meaning() const override {
    return "every link between two sides (or from one side to the other) cut at a set time for a set length; messages across "
           "are lost (drop) or held until it heals (hold)";
  }
  json exemplar() const override { return {{{"side_a", {"app-1"}}, {"side_b", {"db-1"}}, {"length_ms", 10}, {"one_way", true}}}; }
  std::shared_ptr<const Fault> load(const Reader& list, const NodeNames& names) const override {
    auto out = std::make_shared<Partitions>();
    each_entry(list, [&](const Reader& p) {
      p.only({"at_ms", "length_ms", "side_a", "side_b", "mode", "one_way"});
      Partition w{sim::Time{} + p.millis("at_ms", {}), length(p)};
      w.side_a = names.read_list(p, "side_a");
      w.side_b = names.read_list(p, "side_b");
      w.mode = p.pick("mode", w.mode, kModes);
      w.one_way = p.boolean("one_way", w.one_way);
      out->partitions.push_back(std::move(w));
    });
    return out;
  }
};

}  // namespace

const FaultKind& partitions_kind() {
  static const PartitionsKind kind;
  return kind;
}

}  // namespace locksim
