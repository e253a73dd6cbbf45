// Requests a strategy chose to drop (a lock already held, a rate limit): the client sees
// an error and the work is not done.

#include "models/checkers/checker.hpp"

namespace models::checkers {
namespace {
class DroppedRequests : public Checker {
 public:
  std::vector<MetricInfo> metrics() const override {
    return {{.name = "dropped_requests", .unit = "requests", .meaning = "requests the strategy chose to drop unserved",
             .finding = true}};
  }
  void check(const Trial& trial, Findings& out) const override {
    if (trial.operations != nullptr) out.set("dropped_requests", static_cast<double>(trial.dropped_requests));
  }
};
}  // namespace

const Checker& dropped_requests() {
  static const DroppedRequests checker;
  return checker;
}
}  // namespace models::checkers
