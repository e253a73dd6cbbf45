#pragma once
// The lock clients a strategy takes its locks through, one per lock service, each acquiring
// as the articles' code does and returning a LockGuard that unlocks as that code does.
// Acquiring reports the hold to the checkers (with the peek that tells whether the service
// still grants it, and its lease when known), and the clients count what the checkers
// count: Redis commands, lock waiters' wake-ups. The strategy's code is then the article's:
//
//   auto lock = locks(r, w).redis("lock:" + open_id(r), {.ttl = millis("ttl_ms")});
//   if (!lock) return ErrorKind::lock_busy;
//   check_then_insert(r, w, *lock);
//   lock->unlock();
//
// Each acquire returns nothing when the lock is busy (after the waiting its options allow)
// and throws what the service's client throws (sim::Timeout, zk::KeeperError, db::SqlError).
// Its time, whatever the outcome, is the attempt's lock-service time (Worker::time).

#include <deque>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "models/coord/consul_lock.hpp"
#include "models/coord/etcd_lock.hpp"
#include "models/coord/zk_lock.hpp"
#include "models/db/server.hpp"
#include "models/redis/redlock.hpp"
#include "models/strategies/lock_guard.hpp"
#include "sim/sim.hpp"

namespace models {
class AppServer;
struct Worker;
}  // namespace models

namespace models::strategies {

class Env;

/// How a Redis lock is released.
enum class RedisUnlock {
  del,                 // DEL lock, as RedisUtil.unlock does: whoever's lock is there goes
  compare_and_delete,  // the compare-and-delete script: only if the lock still holds our value
};

/// SET lock value NX [PX ttl], the Redis lock of most articles, and its unlock.
struct RedisLockOptions {
  std::optional<sim::Duration> ttl{};  // none: SETNX, no expiry
  bool expire_after = false;           // SETNX, then PEXPIRE ttl as a second command (not atomic)
  int tries = 1;                       // attempts, `pause` apart...
  std::optional<sim::Duration> wait{}; // ...or attempts until this much has passed on the node's clock
  sim::Duration pause{};
  RedisUnlock unlock = RedisUnlock::del;
};

/// Redisson's RLock without a lease time: a hash lock owned by the attempt, with a `lease`
/// (lockWatchdogTimeout) that a watchdog on the holder's node renews every third of it.
struct RedissonOptions {
  sim::Duration lease;
  sim::Duration wait;  // tryLock's wait time, on the node's clock
  sim::Duration pause;
};

/// PostgreSQL's advisory lock on a bigint key, as the service's code calls it.
struct PgAdvisoryOptions {
  bool xact = false;      // pg_advisory_xact_lock: held until the transaction ends, no unlock
  bool try_only = false;  // pg_try_advisory_lock: busy is an answer, not a wait
};

/// How an etcd Mutex is released, and what its caller does when the Unlock's reply is lost.
struct EtcdUnlockOptions {
  etcd::Mutex::Unlock how = etcd::Mutex::Unlock::by_name;
  /// After an Unlock that got no reply, retry it in the background this often, at most
  /// `retries` times (none: the lost reply is the attempt's error, as Unlock returns it).
  std::optional<sim::Duration> retry{};
  int retries = 10;
};

/// A mutex per key inside one process (one app node), as `synchronized` in one JVM: FIFO
/// hand-over to waiters.
class KeyedMutex {
 public:
  void lock(const std::string& key);
  void unlock(const std::string& key);

 private:
  std::set<std::string> held_;
  std::map<std::string, std::deque<sim::Promise<bool>>> waiters_;
};

/// The lock clients of one worker, acting for one attempt of a request.
class LockClients {
 public:
  /// `who` names the holder for the checkers; `value` is the attempt's own lock value;
  /// `failed_unlock` is where guards leave an unlock's failure (see LockGuard).
  LockClients(Env& env, Worker& worker, std::string who, std::string value, std::exception_ptr* failed_unlock)
      : env_(env), worker_(worker), who_(std::move(who)), value_(std::move(value)), failed_unlock_(failed_unlock) {}

  /// SET `key` to the attempt's value NX (PX ttl), retried as `options` say.
  std::optional<LockGuard> redis(const std::string& key, const RedisLockOptions& options);
  /// How `redis()` unlocks `key` when the lock holds this attempt's value: `how` says which way.
  LockGuard::Unlock redis_unlock(const std::string& key, RedisUnlock how) const;
  /// A Redis lock the caller took with its own commands (`key` holds `value`, with `lease`
  /// when it expires): the checker's hold only. Its unlock ends the hold; the caller sends its
  /// own unlock command.
  LockGuard redis_hold(const std::string& key, const std::string& value, std::optional<sim::Duration> lease);
  /// A lease the caller keeps itself (a row's lock_until, ShedLock's, a lease table's):
  /// `key` is its own until its node's wall clock reads `until`, as it believes. The checkers'
  /// hold only: its writes once that clock has passed `until` are lease expiry violations, and
  /// another holder of `key` meanwhile overlaps it. Its unlock ends the hold.
  LockGuard lease_hold(const std::string& key, sim::Time until);
  /// Redisson's tryLock on `key`; the watchdog runs until the unlock (or the lock is lost).
  std::optional<LockGuard> redisson(const std::string& key, const RedissonOptions& options);
  /// Redlock over every Redis instance; unlocks on all of them.
  std::optional<LockGuard> redlock(const std::string& key, const redis::RedlockConfig& config);
  /// Curator's InterProcessMutex (or the herd recipe) at `path`, waiting at most `wait`;
  /// the lock node's create zxid is the guard's token.
  std::optional<LockGuard> zookeeper(const std::string& path, zk::LockRecipe recipe, sim::Duration wait);
  /// etcd's concurrency.Mutex under `prefix` on the worker's session lease, waiting at most
  /// `wait`; a lease found expired is replaced once. The key's create revision is the token.
  /// The unlock deletes the key as `unlock` says, and retries it as `unlock` says when its reply
  /// is lost; the session stays the worker's, so a retry can delete its next lock's key.
  std::optional<LockGuard> etcd(const std::string& prefix, sim::Duration wait, const EtcdUnlockOptions& unlock = {});
  /// Consul's api.Lock on `key` with its own session (`options`: its TTL, lock-delay and
  /// behavior), waiting at most `wait`. The key's LockIndex is the token. The checkers see the
  /// hold while the session holds the key: an invalidated session (the holder paused past twice
  /// the TTL, its node down) ends it, and the key stays refused for the lock-delay.
  std::optional<LockGuard> consul(const std::string& key, const consul::LockOptions& options, sim::Duration wait);
  /// A row in the lock table (unique key: busy) inserted on `c`, deleted by the unlock.
  /// No expiry, and no checker hold: nothing can take the lock while the row is there.
  std::optional<LockGuard> table(db::Connection& c, const std::string& key);
  /// PostgreSQL's advisory lock on `key` through `c`'s session (pg_advisory_lock, or the
  /// variant `options` names), waiting as the server makes it wait (lock_timeout, deadlocks).
  /// The checkers see the hold while the server grants the key to that session. A session
  /// lock's unlock is pg_advisory_unlock on `c`; a transaction lock's ends the hold only (the
  /// server releases it at COMMIT or ROLLBACK: see xact_advisory_ended).
  std::optional<LockGuard> pg_advisory(db::Connection& c, std::int64_t key, const PgAdvisoryOptions& options);
  /// MariaDB's user lock `name` through `c`'s session: GET_LOCK(name, timeout_seconds), waiting
  /// as the server makes it wait (nullopt when the timeout ends first; 1213 on a cycle of
  /// user-lock waits). The checkers see the hold while the server grants the name to that
  /// session: a closed connection (a pool's reconnect after a timeout, the node's crash) ends it
  /// under its holder. The unlock is RELEASE_LOCK on `c`, whatever session `c` has by then.
  std::optional<LockGuard> get_lock(db::Connection& c, const std::string& name, std::int64_t timeout_seconds);
  /// `mutex`, in the node's memory: a crash frees it with the process. No checker hold:
  /// it excludes within one node only, which the duplicates show.
  LockGuard local(KeyedMutex& mutex, const std::string& key);

 private:
  LockGuard guard(checkers::Hold hold, LockGuard::Unlock unlock, std::int64_t token = 0);
  Env& env_;
  Worker& worker_;
  std::string who_;
  std::string value_;
  std::exception_ptr* failed_unlock_;
};

}  // namespace models::strategies
