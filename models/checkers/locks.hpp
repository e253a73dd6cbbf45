#pragma once
// The lock checkers: who believed they held which lock when, and what the lock service
// said meanwhile. Strategies report their beliefs (a hold from the acquire's reply to the
// unlock, or to the holder's death) and the steps they take inside the critical section;
// the lock service's view is read through a peek the strategy supplies (an observation of
// the server's state, not a message). The monitor only observes: nothing it does reaches
// the simulated world.
//
// What it counts, per trial:
// - overlapping_holders: holds that began while another hold of the same lock was still
//   believed; overlap_ms: the time during which two or more believed they held one lock;
// - lease_expiry_violations: critical-section steps taken when the lock service no longer
//   granted the lock to the holder (its lease had expired, another owned it, it was lost);
// - stale_writes_accepted: writes the database accepted from a holder after it had accepted
//   one from a later holder of the same lock (what a fencing token rejects);
//   stale_writes_rejected: writes a fencing check refused;
// - wrong_unlocks: unlocks that removed a lock the service granted to another holder.
// (Stuck locks are found at the lock service itself once the run is over: a holder may
// die before it learns it holds the lock.)

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/time.hpp"

namespace models::checkers {

class LockMonitor;

/// One holder's belief that it holds a lock: from acquired() until release() or the end
/// of its scope (a crash unwinds it too).
class Hold {
 public:
  Hold() = default;
  Hold(Hold&& other) noexcept;
  Hold& operator=(Hold&& other) noexcept;
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;
  ~Hold() { release(); }

  /// A step inside the critical section (a write to the database about to be sent).
  void step();
  /// A write of the critical section the database accepted.
  void wrote();
  /// A write a fencing check refused.
  void rejected();
  /// About to remove the lock without checking it is ours (DEL): a wrong unlock if the
  /// service grants the lock to another holder now.
  void unlocking_blindly();
  /// The holder no longer believes it holds the lock.
  void release();
  bool active() const { return monitor_ != nullptr; }

 private:
  friend class LockMonitor;
  Hold(LockMonitor& monitor, std::size_t index) : monitor_(&monitor), index_(index) {}
  LockMonitor* monitor_ = nullptr;
  std::size_t index_ = 0;
};

struct LockFindings {
  std::uint64_t holds = 0;
  std::uint64_t overlapping_holders = 0;
  double overlap_ms = 0;
  std::uint64_t lease_expiry_violations = 0;
  std::uint64_t stale_writes_accepted = 0;
  std::uint64_t stale_writes_rejected = 0;
  std::uint64_t wrong_unlocks = 0;
};

/// A peek at the lock service for one hold: does it grant the lock to this holder now?
using GrantedPeek = std::function<bool()>;

class LockMonitor {
 public:
  /// The holder `who` believes from now on that it holds `lock`; `granted` peeks at the
  /// lock service; `lease`, if known, is the TTL the service granted (for timelines).
  Hold acquired(std::string lock, std::string who, GrantedPeek granted, std::optional<sim::Duration> lease = {});

  /// The findings once the run is over; holds still believed end at `end`.
  LockFindings findings(sim::Time end) const;

  struct Record {
    std::string lock;
    std::string who;
    sim::Time from;
    sim::Time until = sim::kNever;  // kNever: still believed
    GrantedPeek granted;
    sim::Time lease_until = sim::kNever;  // from + the granted TTL, when known
    bool wrote = false;
  };
  const std::vector<Record>& records() const { return records_; }

 private:
  friend class Hold;
  void step(std::size_t index);
  void wrote(std::size_t index);
  void rejected(std::size_t) { ++stale_rejected_; }
  void unlocking_blindly(std::size_t index);
  void release(std::size_t index);

  std::vector<Record> records_;  // in acquire order
  std::map<std::string, std::size_t> last_writer_;  // lock -> the latest-acquired hold that wrote
  std::uint64_t expiry_violations_ = 0;
  std::uint64_t stale_accepted_ = 0;
  std::uint64_t stale_rejected_ = 0;
  std::uint64_t wrong_unlocks_ = 0;
};

}  // namespace models::checkers
