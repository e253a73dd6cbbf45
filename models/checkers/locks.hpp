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
//
// LockObservations gathers what one trial's lock clients leave for the checkers and the
// runner: the monitor's holds, counts of what the clients did (requests dropped on a busy
// lock, wake-ups of lock waiters, Redis commands sent) and peeks at the lock servers. The
// lock clients (models/strategies/lock_clients.hpp) write to it; nothing else does.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/time.hpp"

namespace models::redis {
class Redlock;
class Sentinel;
class Server;
}  // namespace models::redis
namespace models::zk {
class Server;
}
namespace models::etcd {
class Server;
}
namespace models::consul {
class Server;
}

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
  /// Whether the lock service grants the lock to this holder now (the hold's peek); false once
  /// released. For a holder that learns its lock ended from the service's replies (a COMMIT
  /// ends a transaction's advisory lock).
  bool granted() const;
  /// The holder no longer believes it holds the lock.
  void release();
  bool active() const { return monitor_ != nullptr; }
  /// Where the monitor keeps this hold: a renewer that outlives the guard (Redisson's
  /// watchdog) reports renewals through LockMonitor::renewed with it.
  std::size_t index() const { return index_; }

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
  std::uint64_t most_at_once = 0;  // holders of one lock believing at the same instant, at the most
};

/// A peek at the lock service for one hold: does it grant the lock to this holder now?
using GrantedPeek = std::function<bool()>;
/// A peek at when the lock service ended a hold on its own (a lock node gone with its
/// ZooKeeper session, a key with its etcd lease); kNever while it has not.
using EndedPeek = std::function<sim::Time()>;

/// The service a hold was taken at, which says how the service ends a hold on its own
/// (pg_advisory: PostgreSQL's advisory lock, ended with its session or transaction;
/// mariadb_user_lock: GET_LOCK's, ended with its connection; lease: one the strategy keeps
/// anywhere, a row's `lock_until` say, granted until its holder's own clock reads its end;
/// consul: a key acquired by a Consul session, ended with the session).
enum class LockService { redis, redlock, zookeeper, etcd, pg_advisory, mariadb_user_lock, lease, consul };

/// Why a hold ended, as far as the holder and the service tell: the holder let go while the
/// service still granted it (released), or the service had ended it first (expired, deleted
/// by another holder's DEL, session or lease lost), or the holder's node crashed under it.
enum class HoldEnd { held, released, expired, deleted, session_lost, lost, crashed };

class LockMonitor {
 public:
  /// The holder `who` believes from now on that it holds `lock`; `granted` peeks at the
  /// lock service; `lease`, if known, is the TTL the service granted (for timelines).
  /// `ended`, if given, tells when the service ended the hold on its own (for timelines).
  Hold acquired(std::string lock, std::string who, GrantedPeek granted, std::optional<sim::Duration> lease = {},
                LockService service = LockService::redis, EndedPeek ended = {});
  /// The hold at `index` had its lease renewed now for `lease` more (a watchdog's PEXPIRE).
  void renewed(std::size_t index, sim::Duration lease);
  /// The hold at `index`, let go already, deletes its lock again by the lock's name (an etcd
  /// Unlock retried after its reply was lost): a wrong unlock if that name now stands for
  /// `victim`, a later hold the service still grants.
  void unlocking_again(std::size_t index, std::size_t victim);

  /// The findings once the run is over; holds still believed end at `end`.
  LockFindings findings(sim::Time end) const;

  struct Record {
    std::string lock;
    std::string who;
    sim::Time from;
    sim::Time until = sim::kNever;  // kNever: still believed
    GrantedPeek granted;
    sim::Time lease_until = sim::kNever;  // from + the granted TTL (or the last renewal + it), when known
    bool wrote = false;
    LockService service = LockService::redis;
    HoldEnd end = HoldEnd::held;
    /// When the service stopped granting it, where known and before `until` (an expiry, a
    /// DEL of another holder); kNever otherwise.
    sim::Time service_until = sim::kNever;
    std::optional<std::size_t> deleted_by{};  // the hold whose DEL removed this one's lock
    std::optional<std::size_t> removed{};     // the hold whose lock this one's DEL removed
    std::vector<sim::Time> renewals{};        // each successful renewal of the lease
    EndedPeek ended{};                        // when the service ended it on its own, where it can tell
  };
  /// Why `r` ended (or, still believed at `end`, whether its lease ran out before then).
  static HoldEnd end_of(const Record& r, sim::Time end);
  const std::vector<Record>& records() const { return records_; }

 private:
  friend class Hold;
  void step(std::size_t index);
  void wrote(std::size_t index);
  void rejected(std::size_t) { ++stale_rejected_; }
  void unlocking_blindly(std::size_t index);
  /// Hold `index`'s unlock removes `victim`'s lock.
  void removes(std::size_t index, std::size_t victim);
  void release(std::size_t index);

  std::vector<Record> records_;  // in acquire order
  std::map<std::string, std::size_t> last_writer_;  // lock -> the latest-acquired hold that wrote
  std::uint64_t expiry_violations_ = 0;
  std::uint64_t stale_accepted_ = 0;
  std::uint64_t stale_rejected_ = 0;
  std::uint64_t wrong_unlocks_ = 0;
};

/// The lock servers of a trial, for peeking at their state (never a message to them).
struct LockServers {
  std::vector<const redis::Server*> redis_nodes{};  // every Redis instance, redis-1 first
  const redis::Sentinel* sentinel = nullptr;        // picks the master, when there is one
  const zk::Server* zookeeper = nullptr;
  const etcd::Server* etcd = nullptr;
  const consul::Server* consul = nullptr;
};

/// What one trial's lock clients report, read by the runner and the checkers once the run
/// is over. Strategies write to it only through the lock clients.
class LockObservations {
 public:
  explicit LockObservations(LockServers servers = {}) : servers_(std::move(servers)) {}
  LockObservations(const LockObservations&) = delete;  // peeks and holds point at it
  LockObservations& operator=(const LockObservations&) = delete;

  /// Every hold the lock clients reported: findings(end) and records().
  const LockMonitor& locks() const { return locks_; }
  /// Requests the handler dropped on purpose (answered ErrorKind::dropped).
  std::uint64_t dropped_requests() const { return dropped_; }
  /// Watch events that woke lock waiters (the herd effect shows here).
  std::uint64_t lock_wakeups() const { return lock_wakeups_; }
  /// Redis commands the strategy sent, Redlock's included.
  std::uint64_t redis_commands() const;
  /// A script strategy's runtime errors, each "file:line: message (who)", in the order they
  /// happened; and whether its instruction budget ran out (the trial was stopped).
  const std::vector<std::string>& script_errors() const { return script_errors_; }
  bool script_stopped() const { return script_stopped_; }

  /// Whether the Redis master (the sentinel's choice, if any) now grants `lock` to `value`:
  /// a string equal to it, or a hash lock owned by it.
  bool redis_grants(const std::string& lock, const std::string& value) const;
  /// Whether a quorum of the Redis instances grants `lock` to `value` (Redlock's view).
  bool redlock_grants(const std::string& lock, const std::string& value) const;
  /// Whether znode `path` exists now (an ephemeral lock node lives as long as its session).
  bool zookeeper_has(const std::string& path) const;
  /// Whether etcd holds `key` now (a lock key lives as long as its lease).
  bool etcd_has(const std::string& key) const;
  /// When ZooKeeper removed znode `path` / etcd deleted `key` (kNever: not, or no such server).
  sim::Time zookeeper_removed_at(const std::string& path) const;
  sim::Time etcd_removed_at(const std::string& key) const;
  /// Whether Consul's `key` is held by `session` now, and when that session was invalidated.
  bool consul_holds(const std::string& key, std::uint64_t session) const;
  sim::Time consul_invalidated_at(std::uint64_t session) const;

  // What the lock clients write.
  LockMonitor& locks() { return locks_; }
  void count_dropped() { ++dropped_; }
  void count_wakeups(std::uint64_t n) { lock_wakeups_ += n; }
  void count_redis_command() { ++redis_commands_; }
  /// Counts the commands `redlock` has sent and will send (it keeps its own count).
  void count_commands_of(const redis::Redlock& redlock) { redlocks_.push_back(&redlock); }
  void note_script_error(std::string message) { script_errors_.push_back(std::move(message)); }
  void note_script_stopped() { script_stopped_ = true; }
  /// Hold `index` holds etcd key `key` from now on (each session's lock under one prefix has one key).
  void etcd_held(const std::string& key, std::size_t index) { etcd_holds_[key] = index; }
  /// Hold `index` retries its Unlock of etcd key `key` now, deleting the key by its name.
  void etcd_unlock_retried(const std::string& key, std::size_t index);

 private:
  LockServers servers_;
  LockMonitor locks_;
  std::uint64_t dropped_ = 0;
  std::uint64_t lock_wakeups_ = 0;
  std::uint64_t redis_commands_ = 0;
  std::vector<const redis::Redlock*> redlocks_;
  std::vector<std::string> script_errors_;
  bool script_stopped_ = false;
  std::map<std::string, std::size_t> etcd_holds_;  // etcd key -> the latest hold of it
};

}  // namespace models::checkers
