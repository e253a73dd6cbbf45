#include "models/strategies/lock_clients.hpp"

#include <memory>

#include <fmt/format.h>

#include "models/coord/etcd_lock.hpp"
#include "models/db/postgres/sql.hpp"
#include "models/strategies/strategy.hpp"

namespace models::strategies {
namespace {
const db::sql::Prepared kTakeLock = db::sql::pinned(db::sql::prepare("INSERT INTO t_lock (lock_key, owner) VALUES (?, ?)"));
// Only the owner's row: a lock another holder took since is left alone.
const db::sql::Prepared kReleaseLock = db::sql::pinned(db::sql::prepare("DELETE FROM t_lock WHERE lock_key = ? AND owner = ?"));
}  // namespace

LockGuard LockClients::guard(checkers::Hold hold, LockGuard::Unlock unlock, std::int64_t token) {
  return LockGuard(std::move(hold), std::move(unlock), failed_unlock_, token);
}

std::optional<LockGuard> LockClients::redis(const std::string& key, const RedisLockOptions& options) {
  TimeSpentIn acquiring(worker_.time, &TimeSpent::lock_service);
  const sim::Duration ttl = options.ttl && !options.expire_after ? *options.ttl : sim::Duration{};  // zero: no expiry
  const Clock& clock = worker_.server.node().clock();
  if (!options.wait && options.tries < 1) return std::nullopt;
  const sim::Time give_up = options.wait ? clock.monotonic() + *options.wait : sim::Time{};
  for (int attempt = 1; env_.redis(worker_, redis::Command::set_nx_px(key, value_, ttl)).is_nil(); ++attempt) {
    if (options.wait ? clock.monotonic() >= give_up : attempt >= options.tries) return std::nullopt;
    sim::sleep_for(options.pause);
  }
  checkers::LockObservations* seen = &env_.observed_;
  checkers::Hold hold = seen->locks().acquired(key, who_, [seen, key, value = value_] { return seen->redis_grants(key, value); },
                                               options.ttl);
  // Not atomic with the SETNX: a holder that dies in between leaves a lock with no expiry.
  if (options.expire_after) env_.redis(worker_, redis::Command::pexpire(key, *options.ttl));
  return guard(std::move(hold), redis_unlock(key, options.unlock));
}

LockGuard::Unlock LockClients::redis_unlock(const std::string& key, RedisUnlock how) const {
  Env* env = &env_;
  Worker* worker = &worker_;
  if (how == RedisUnlock::del)
    return [env, worker, key](checkers::Hold& h) {
      h.unlocking_blindly();
      h.release();
      env->redis(*worker, redis::Command::del(key));
    };
  return [env, worker, key, value = value_](checkers::Hold& h) {
    h.release();
    env->redis(*worker, redis::Command::cas_del(key, value));
  };
}

LockGuard LockClients::redis_hold(const std::string& key, const std::string& value, std::optional<sim::Duration> lease) {
  checkers::LockObservations* seen = &env_.observed_;
  checkers::Hold hold = seen->locks().acquired(key, who_, [seen, key, value] { return seen->redis_grants(key, value); }, lease);
  return guard(std::move(hold), [](checkers::Hold& h) { h.release(); });
}

LockGuard LockClients::lease_hold(const std::string& key, sim::Time until) {
  const Node* node = &worker_.server.node();
  const sim::Duration left = std::max(until - node->clock().now(), sim::Duration::zero());
  checkers::Hold hold = env_.observed_.locks().acquired(
      key, who_, [node, until] { return node->clock().now() < until; }, node->clock().true_duration(left),
      checkers::LockService::lease);
  return guard(std::move(hold), [](checkers::Hold& h) { h.release(); });
}

namespace {
// Renews the lease every third of it while the holder holds; stops when the renewal finds
// the lock no longer ours. It runs on the holder's node: a pause stops it too.
void start_watchdog(Env& env, AppServer& server, std::string lock, std::string owner, sim::Duration lease,
                    std::shared_ptr<bool> holding, checkers::LockMonitor& monitor, std::size_t hold) {
  server.node().spawn(
      "redisson-watchdog " + lock,
      [&env, &server, lock = std::move(lock), owner = std::move(owner), lease, holding = std::move(holding), &monitor, hold] {
        for (;;) {
          sim::sleep_for(lease / 3);
          if (!*holding) return;
          try {
            if (env.redis(server, redis::Command::hlock(redis::Op::hlock_renew, lock, owner, lease)).integer == 0) return;
            monitor.renewed(hold, lease);
          } catch (const sim::Timeout&) {
            // Redisson logs the failure and tries again at the next period
          }
        }
      },
      {.background = true});
}
}  // namespace

std::optional<LockGuard> LockClients::redisson(const std::string& key, const RedissonOptions& options) {
  TimeSpentIn acquiring(worker_.time, &TimeSpent::lock_service);
  const Clock& clock = worker_.server.node().clock();
  const sim::Time give_up = clock.monotonic() + options.wait;
  while (!env_.redis(worker_, redis::Command::hlock(redis::Op::hlock_acquire, key, value_, options.lease)).is_nil()) {
    if (clock.monotonic() >= give_up) return std::nullopt;
    sim::sleep_for(options.pause);
  }
  checkers::LockObservations* seen = &env_.observed_;
  checkers::Hold hold =
      seen->locks().acquired(key, who_, [seen, key, value = value_] { return seen->redis_grants(key, value); }, options.lease);
  auto holding = std::make_shared<bool>(true);
  start_watchdog(env_, worker_.server, key, value_, options.lease, holding, seen->locks(), hold.index());
  Env* env = &env_;
  Worker* worker = &worker_;
  return guard(std::move(hold), [env, worker, key, value = value_, lease = options.lease, holding](checkers::Hold& h) {
    *holding = false;
    h.release();
    env->redis(*worker, redis::Command::hlock(redis::Op::hlock_release, key, value, lease));
  });
}

std::optional<LockGuard> LockClients::redlock(const std::string& key, const redis::RedlockConfig& config) {
  TimeSpentIn acquiring(worker_.time, &TimeSpent::lock_service);
  redis::Redlock& redlock = env_.redlock(worker_, config);
  const redis::Redlock::Lock lock = redlock.lock(key);
  if (!lock.held) return std::nullopt;
  checkers::LockObservations* seen = &env_.observed_;
  checkers::Hold hold = seen->locks().acquired(
      lock.resource, who_, [seen, resource = lock.resource, value = lock.value] { return seen->redlock_grants(resource, value); },
      config.ttl, checkers::LockService::redlock);
  return guard(std::move(hold), [redlock = &redlock, lock](checkers::Hold& h) {
    h.release();
    redlock->unlock(lock);
  });
}

std::optional<LockGuard> LockClients::zookeeper(const std::string& path, zk::LockRecipe recipe, sim::Duration wait) {
  TimeSpentIn acquiring(worker_.time, &TimeSpent::lock_service);
  auto mutex = std::make_shared<zk::Mutex>(env_.zookeeper(worker_), path, recipe);
  const bool held = mutex->acquire(wait);
  env_.observed_.count_wakeups(mutex->wakeups());
  if (!held) return std::nullopt;
  checkers::LockObservations* seen = &env_.observed_;
  checkers::Hold hold = seen->locks().acquired(
      path, who_, [seen, node = mutex->node()] { return seen->zookeeper_has(node); }, std::nullopt, checkers::LockService::zookeeper,
      [seen, node = mutex->node()] { return seen->zookeeper_removed_at(node); });
  return guard(
      std::move(hold),
      [mutex](checkers::Hold& h) {
        h.release();
        mutex->release();
      },
      static_cast<std::int64_t>(mutex->token()));
}

std::optional<LockGuard> LockClients::etcd(const std::string& prefix, sim::Duration wait, const EtcdUnlockOptions& unlock) {
  TimeSpentIn acquiring(worker_.time, &TimeSpent::lock_service);
  etcd::Client& client = env_.etcd(worker_);
  auto mutex = std::make_shared<etcd::Mutex>(client, env_.etcd_session(worker_), prefix);
  if (!mutex->lock(wait)) {
    if (client.keep_alive(env_.etcd_session(worker_))) return std::nullopt;
    mutex = std::make_shared<etcd::Mutex>(client, env_.etcd_session(worker_, true), prefix);  // the session expired: a new one
    if (!mutex->lock(wait)) return std::nullopt;
  }
  checkers::LockObservations* seen = &env_.observed_;
  checkers::Hold hold = seen->locks().acquired(
      prefix, who_, [seen, key = mutex->key()] { return seen->etcd_has(key); }, std::nullopt, checkers::LockService::etcd,
      [seen, key = mutex->key()] { return seen->etcd_removed_at(key); });
  seen->etcd_held(mutex->key(), hold.index());
  return guard(
      std::move(hold),
      [mutex, unlock, seen](checkers::Hold& h) {
        const std::size_t index = h.index();
        h.release();
        try {
          mutex->unlock(unlock.how);
        } catch (const sim::Timeout&) {
          if (!unlock.retry) throw;
          // A retry by name deletes whatever key of that name is there: the session's next lock, if it came first.
          std::function<void()> before_each;
          if (unlock.how == etcd::Mutex::Unlock::by_name)
            before_each = [seen, index, key = mutex->key()] { seen->etcd_unlock_retried(key, index); };
          etcd::retry_unlock_in_background(mutex, unlock.how, *unlock.retry, unlock.retries, std::move(before_each));
        }
      },
      mutex->token());
}

std::optional<LockGuard> LockClients::consul(const std::string& key, const consul::LockOptions& options, sim::Duration wait) {
  TimeSpentIn acquiring(worker_.time, &TimeSpent::lock_service);
  auto lock = std::make_shared<consul::Lock>(env_.consul(worker_), key, value_, options);
  const bool held = lock->lock(wait);
  if (lock->wakeups() > 0) env_.observed_.count_wakeups(lock->wakeups());
  if (!held) return std::nullopt;
  checkers::LockObservations* seen = &env_.observed_;
  const std::uint64_t session = lock->session();
  checkers::Hold hold = seen->locks().acquired(
      key, who_, [seen, key, session] { return seen->consul_holds(key, session); }, std::nullopt, checkers::LockService::consul,
      [seen, session] { return seen->consul_invalidated_at(session); });
  return guard(
      std::move(hold),
      [lock](checkers::Hold& h) {
        h.release();
        lock->unlock();
      },
      static_cast<std::int64_t>(lock->token()));
}

std::optional<LockGuard> LockClients::table(db::Connection& c, const std::string& key) {
  TimeSpentIn acquiring(worker_.time, &TimeSpent::lock_service);
  try {
    c.execute(kTakeLock, {key, value_});
  } catch (const db::SqlError& e) {
    if (e.code() == db::Code::duplicate_key) return std::nullopt;
    throw;
  }
  return guard(checkers::Hold(), [&c, key, owner = value_](checkers::Hold&) {
    c.execute(kReleaseLock, {key, owner});
  });
}

std::optional<LockGuard> LockClients::pg_advisory(db::Connection& c, std::int64_t key, const PgAdvisoryOptions& options) {
  // Prepared on first use, not at start-up: PostgreSQL's parser is another file's static.
  static const db::sql::Prepared kLock = db::sql::pinned(db::pg::prepare("SELECT pg_advisory_lock($1)"));
  static const db::sql::Prepared kTryLock = db::sql::pinned(db::pg::prepare("SELECT pg_try_advisory_lock($1)"));
  static const db::sql::Prepared kXactLock = db::sql::pinned(db::pg::prepare("SELECT pg_advisory_xact_lock($1)"));
  static const db::sql::Prepared kTryXactLock = db::sql::pinned(db::pg::prepare("SELECT pg_try_advisory_xact_lock($1)"));
  static const db::sql::Prepared kUnlock = db::sql::pinned(db::pg::prepare("SELECT pg_advisory_unlock($1)"));
  if (c.engine() != db::Engine::postgresql)
    throw sim::UsageError("strategies::LockClients: an advisory lock needs database.engine \"postgresql\"");
  TimeSpentIn acquiring(worker_.time, &TimeSpent::lock_service);
  const auto& lock = options.xact ? (options.try_only ? kTryXactLock : kXactLock) : (options.try_only ? kTryLock : kLock);
  const db::Result r = c.execute(lock, {db::Value{key}});
  if (options.try_only && (r.rows.empty() || (*r.rows.front().values.begin()).second == db::Value{std::int64_t{0}}))
    return std::nullopt;
  const db::Database* database = &c.database();
  const std::uint64_t session = c.session();
  checkers::Hold hold = env_.observed_.locks().acquired(
      fmt::format("pg_advisory({})", key), who_, [database, session, key] { return database->holds_advisory(session, key); },
      std::nullopt, checkers::LockService::pg_advisory);
  if (options.xact) return guard(std::move(hold), [](checkers::Hold& h) { h.release(); });
  return guard(std::move(hold), [&c, key](checkers::Hold& h) {
    h.release();
    c.execute(kUnlock, {db::Value{key}});
  });
}

std::optional<LockGuard> LockClients::get_lock(db::Connection& c, const std::string& name, std::int64_t timeout_seconds) {
  static const db::sql::Prepared kGetLock = db::sql::pinned(db::sql::prepare("SELECT GET_LOCK(?, ?)"));
  static const db::sql::Prepared kRelease = db::sql::pinned(db::sql::prepare("SELECT RELEASE_LOCK(?)"));
  if (c.engine() != db::Engine::mariadb)
    throw sim::UsageError("strategies::LockClients: GET_LOCK is MariaDB's (database.engine \"mariadb\")");
  TimeSpentIn acquiring(worker_.time, &TimeSpent::lock_service);
  const db::Result r = c.execute(kGetLock, {db::Value{name}, db::Value{timeout_seconds}});
  if (r.rows.empty() || (*r.rows.front().values.begin()).second != db::Value{std::int64_t{1}}) return std::nullopt;
  const db::Database* database = &c.database();
  const std::uint64_t session = c.session();
  checkers::Hold hold = env_.observed_.locks().acquired(
      fmt::format("GET_LOCK('{}')", name), who_, [database, session, name] { return database->holds_user_lock(session, name); },
      std::nullopt, checkers::LockService::mariadb_user_lock);
  return guard(std::move(hold), [&c, name](checkers::Hold& h) {
    h.release();
    c.execute(kRelease, {db::Value{name}});
  });
}

LockGuard LockClients::local(KeyedMutex& mutex, const std::string& key) {
  TimeSpentIn acquiring(worker_.time, &TimeSpent::lock_service);
  mutex.lock(key);
  return LockGuard(checkers::Hold(), [&mutex, key](checkers::Hold&) { mutex.unlock(key); }, failed_unlock_, 0,
                   LockGuard::Kept::in_process);
}

void KeyedMutex::lock(const std::string& key) {
  if (held_.insert(key).second) return;
  sim::Promise<bool> turn("local mutex " + key);
  sim::Future<bool> mine = turn.get_future();
  waiters_[key].push_back(std::move(turn));
  mine.get();
}

void KeyedMutex::unlock(const std::string& key) {
  auto it = waiters_.find(key);
  if (it == waiters_.end() || it->second.empty()) {
    held_.erase(key);
    return;
  }
  sim::Promise<bool> next = std::move(it->second.front());
  it->second.pop_front();
  next.set_value(true);  // ownership passes on
}

}  // namespace models::strategies
