// Deadlocks the database detected: each rolled a transaction back with error 1213 (on MariaDB,
// 1467 when the victim waited for a table's AUTO-INC lock).

#include "models/checkers/checker.hpp"

namespace models::checkers {
namespace {
class Deadlocks : public Checker {
 public:
  std::vector<MetricInfo> metrics() const override {
    return {{.name = "deadlocks", .unit = "deadlocks", .meaning = "deadlocks the database detected (a transaction rolled back: 1213, or 1467 for an AUTO-INC lock's waiter)",
             .finding = true}};
  }
  void check(const Trial& trial, Findings& out) const override {
    if (trial.database != nullptr) out.set("deadlocks", static_cast<double>(trial.database->stats().deadlocks));
  }
};
}  // namespace

const Checker& deadlocks() {
  static const Deadlocks checker;
  return checker;
}
}  // namespace models::checkers
