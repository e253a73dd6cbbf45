// The most holders that at one instant believed they held the same lock: two is one too
// many; three means an unlock removed a lock another held (a late DEL) or leases expired
// twice over.

#include <algorithm>
#include <map>

#include "models/checkers/checker.hpp"

namespace models::checkers {
namespace {
class MaxConcurrentHolders : public Checker {
 public:
  std::vector<MetricInfo> metrics() const override {
    return {{.name = "max_concurrent_holders", .unit = "holders",
             .meaning = "the most holders that at one instant believed they held the same lock (the run's largest)",
             .finding = true, .fires_above = 1, .aggregate = Aggregate::max}};
  }
  void check(const Trial& trial, Findings& out) const override {
    if (trial.locks == nullptr) return;
    out.set("max_concurrent_holders", static_cast<double>(most_at_once(trial.locks->records(), trial.end)));
  }

  // Per lock, the holds' beliefs as intervals, swept in time order; at one instant a hold
  // that ends goes before one that begins (a hand-over is not an overlap).
  static int most_at_once(const std::vector<LockMonitor::Record>& records, sim::Time end) {
    std::map<std::string, std::vector<std::pair<sim::Time, int>>> edges;
    for (const auto& r : records) {
      const sim::Time until = std::min(r.until, end);
      if (until <= r.from) continue;
      edges[r.lock].push_back({r.from, +1});
      edges[r.lock].push_back({until, -1});
    }
    int most = 0;
    for (auto& [lock, list] : edges) {
      std::sort(list.begin(), list.end());
      int open = 0;
      for (const auto& [t, delta] : list) most = std::max(most, open += delta);
    }
    return most;
  }
};
}  // namespace

const Checker& max_concurrent_holders() {
  static const MaxConcurrentHolders checker;
  return checker;
}
}  // namespace models::checkers
