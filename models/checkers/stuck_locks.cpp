// Locks nobody will release once the run is over: Redis keys taken as a lock (SET NX, the
// Redisson lock script) with no expiry on any instance, and rows left in a lock table. They
// block their key for good. A counter (INCR) or a plain SET is no lock.

#include "models/checkers/checker.hpp"

namespace models::checkers {
namespace {
class StuckLocks : public Checker {
 public:
  std::vector<MetricInfo> metrics() const override {
    return {{.name = "stuck_locks", .unit = "locks",
             .meaning = "locks left at the end with no expiry (Redis keys taken as a lock without a TTL, lock-table rows): the key is blocked for good",
             .finding = true}};
  }
  void check(const Trial& trial, Findings& out) const override {
    if (trial.operations == nullptr) return;  // the request workloads
    std::uint64_t n = trial.lock_rows;
    for (const redis::Server* s : trial.redis)
      for (const auto& [key, value] : s->keyspace().data())
        if (value.lock && value.expires_at == sim::kNever) ++n;
    out.set("stuck_locks", static_cast<double>(n));
  }
};
}  // namespace

const Checker& stuck_locks() {
  static const StuckLocks checker;
  return checker;
}
}  // namespace models::checkers
