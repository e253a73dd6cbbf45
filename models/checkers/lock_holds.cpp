// What lock holders believed against what the lock service granted: two holders at once,
// steps taken after the lease ran out, stale writes, unlocks of another's lock.

#include "models/checkers/checker.hpp"

namespace models::checkers {
namespace {
class LockHolds : public Checker {
 public:
  std::vector<MetricInfo> metrics() const override {
    return {{.name = "overlapping_holders", .unit = "holds",
             .meaning = "holds that began while another holder still believed it held the same lock", .finding = true},
            {.name = "overlap_ms", .kind = MetricKind::duration, .unit = "ms",
             .meaning = "time during which two or more holders believed they held one lock"},
            {.name = "lease_expiry_violations", .unit = "steps",
             .meaning = "critical-section steps taken when the lock service no longer granted the lock to the holder",
             .finding = true},
            {.name = "stale_writes_accepted", .unit = "writes",
             .meaning = "writes accepted from a holder after one from a later holder of the same lock", .finding = true},
            {.name = "stale_writes_rejected", .unit = "writes", .meaning = "writes a fencing check refused", .finding = true},
            {.name = "wrong_unlocks", .unit = "unlocks",
             .meaning = "unlocks that removed a lock the service granted to another holder", .finding = true}};
  }
  void check(const Trial& trial, Findings& out) const override {
    if (trial.locks == nullptr) return;
    const LockFindings f = trial.locks->findings(trial.end);
    out.set("overlapping_holders", static_cast<double>(f.overlapping_holders));
    out.set("overlap_ms", f.overlap_ms);
    out.set("lease_expiry_violations", static_cast<double>(f.lease_expiry_violations));
    out.set("stale_writes_accepted", static_cast<double>(f.stale_writes_accepted));
    out.set("stale_writes_rejected", static_cast<double>(f.stale_writes_rejected));
    out.set("wrong_unlocks", static_cast<double>(f.wrong_unlocks));
  }
};
}  // namespace

const Checker& lock_holds() {
  static const LockHolds checker;
  return checker;
}
}  // namespace models::checkers
