#pragma once
// What every strategy is: a handler for the account-bind operation ("bind OpenID `key` to
// device `value`"), written straight-line like the service code in the source articles,
// with a registry entry saying where it comes from and what it risks.
//
// A strategy reaches the services of the world through `Env`: the database pool of the app
// node it runs on, a Redis client there, and counters the checkers read. It knows nothing of
// scenario files or the command line: its parameters are plain numbers by name.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/app/remote.hpp"
#include "models/app/server.hpp"
#include "models/db/server.hpp"
#include "models/batch/batch.hpp"
#include "models/checkers/locks.hpp"
#include "models/coord/etcd.hpp"
#include "models/coord/zookeeper.hpp"
#include "models/redis/client.hpp"
#include "models/redis/redlock.hpp"
#include "models/redis/sentinel.hpp"

namespace models::strategies {

using Params = std::map<std::string, double>;

struct ParamInfo {
  std::string name;
  double value;  // the default
  std::string meaning;
};

/// What the world must hold for a strategy.
struct Needs {
  db::KeyIndex key_index = db::KeyIndex::none;  // on accounts.open_id
  bool redis = false;
  int redis_instances = 1;  // unless the scenario says how many
  bool zookeeper = false;
  bool etcd = false;
  std::vector<db::TableSchema> tables{};  // besides the accounts table
  bool remote = false;                    // another service the handler calls
};

struct Info {
  std::string name;         // the CLI name
  std::string description;  // one line
  std::string source;       // article file and section, or the public source
  std::string risks;        // what it is expected to risk
  std::vector<ParamInfo> params{};
  Needs needs{};
};

/// The parameters of acquire_redis_lock(), with their defaults.
inline std::vector<ParamInfo> redis_lock_params() {
  return {{"ttl_ms", 10000, "lock TTL"},
          {"acquire_timeout_ms", 1000, "give up acquiring after this"},
          {"retry_ms", 10, "pause between acquire attempts"}};
}

/// The row's values for a request's key and value (the value is the logical operation).
inline std::string open_id_of(std::uint64_t key) { return "openid:" + std::to_string(key); }
inline std::string device_of(std::uint64_t value) { return "device-" + std::to_string(value); }

/// The table every account-bind strategy writes: one row per bound OpenID, ideally.
inline const std::string kAccounts = "t_account";
db::TableSchema accounts_table(db::KeyIndex key_index);
/// A lock table in the database: one row per held lock, its key unique.
inline const std::string kLocks = "t_lock";
db::TableSchema lock_table();
/// The fencing tokens the database has seen, per lock: the storage side of a fencing token.
inline const std::string kFences = "t_fence";
db::TableSchema fence_table();

/// The services of one trial, as the runner built them: per app node (in the order of
/// `servers`) a database pool and the lock services' clients; the lock servers themselves
/// only for peeking (the checkers' view) and for clients a strategy builds per node.
struct Services {
  std::vector<AppServer*> servers{};
  std::vector<db::Pool*> pools{};
  std::vector<redis::Client*> redis{};        // to the master (through the sentinel when there is one)
  std::vector<redis::Server*> redis_nodes{};  // every Redis instance, redis-1 first: Redlock's masters
  const redis::Sentinel* sentinel = nullptr;
  zk::Server* zookeeper = nullptr;
  zk::ClientConfig zookeeper_client{};
  etcd::Server* etcd = nullptr;
  sim::Duration etcd_session_ttl = std::chrono::seconds(60);  // concurrency.NewSession's default
  RemoteService* remote = nullptr;
  Network* network = nullptr;
};

/// The services one trial's strategy uses, per app node, and what the checkers observe.
class Env {
 public:
  Env(Services services, sim::Distribution work = sim::fixed(sim::Duration{}));
  /// How long the handler works between reading and writing (building the row, calling
  /// another service): the window in which a second copy of the request can slip in.
  sim::Duration work(Worker& worker) const { return work_.sample_duration(worker.stream); }

  db::Pool& pool(const Worker& worker) { return *services_.pools.at(index(worker)); }
  /// Runs a Redis command from the worker's node, counted for redis_ops_per_op.
  redis::Reply redis(const Worker& worker, const redis::Command& command) { return redis(worker.server, command); }
  redis::Reply redis(const AppServer& server, const redis::Command& command);
  /// Whether the Redis master (the sentinel's choice, if any) now grants `lock` to `value`:
  /// a string equal to it, or a hash lock owned by it. A peek, for the checkers.
  bool redis_grants(const std::string& lock, const std::string& value) const;
  /// Whether a quorum of the Redis instances grants `lock` to `value` (Redlock's view).
  bool redlock_grants(const std::string& lock, const std::string& value) const;
  /// Locks left at the lock services with no expiry: Redis keys without a TTL on any
  /// instance. Once the run is over nobody holds them, so they block the key for good.
  std::uint64_t stuck_locks() const;
  /// A Redlock client on the worker's node over every Redis instance, built once per node.
  redis::Redlock& redlock(const Worker& worker, const redis::RedlockConfig& config);
  /// The worker's ZooKeeper session (Curator's client), opened on first use; a new one
  /// after its node restarts.
  zk::Client& zookeeper(const Worker& worker);
  /// Whether znode `path` exists now (an ephemeral lock node lives as long as its session).
  bool zookeeper_has(const std::string& path) const;
  /// The worker's etcd client and session lease (concurrency.NewSession: a lease kept alive
  /// every TTL/3 from the node), granted on first use, or anew with `renew` (after the
  /// old one expired: its session is Done).
  etcd::Client& etcd(const Worker& worker);
  std::int64_t etcd_session(const Worker& worker, bool renew = false);
  bool etcd_has(const std::string& key) const;
  /// Asks the remote service to create its record for account `id`; throws sim::Timeout.
  void remote_create(const Worker& worker, std::int64_t id, sim::Duration timeout);
  /// Watch events that woke lock waiters (the herd effect shows here).
  std::uint64_t lock_wakeups() const { return lock_wakeups_; }
  void count_wakeups(std::uint64_t n) { lock_wakeups_ += n; }
  /// Redis commands sent by the strategy, Redlock's included.
  std::uint64_t redis_commands() const;
  /// Requests a strategy chose to drop (answered ErrorKind::dropped).
  std::uint64_t dropped() const { return dropped_; }
  void count_dropped() { ++dropped_; }
  checkers::LockMonitor& locks() { return locks_; }
  const checkers::LockMonitor& locks() const { return locks_; }

 private:
  std::size_t index(const AppServer& server) const;
  std::size_t index(const Worker& worker) const { return index(worker.server); }
  Services services_;
  std::uint64_t redis_commands_ = 0;
  std::uint64_t dropped_ = 0;
  sim::Distribution work_;
  checkers::LockMonitor locks_;
  std::map<std::size_t, std::unique_ptr<redis::Redlock>> redlocks_;  // by app node index
  // Per (app node, worker): sessions in use; those of a crashed node are kept, unused,
  // since messages in flight may still name them.
  using WorkerKey = std::pair<std::size_t, int>;
  struct EtcdSession {
    std::unique_ptr<etcd::Client> client;
    std::int64_t lease = 0;
  };
  std::map<WorkerKey, std::unique_ptr<zk::Client>> zk_clients_;
  std::map<WorkerKey, EtcdSession> etcd_sessions_;
  std::vector<std::unique_ptr<zk::Client>> zk_retired_;
  std::vector<EtcdSession> etcd_retired_;
  std::uint64_t lock_wakeups_ = 0;
};

/// A strategy instance for one trial.
class Strategy : public Handler {
 public:
  Strategy(Env& env, Params params) : env_(env), params_(std::move(params)) {}
  /// Runs bind() and turns what service code would surface into the response: MySQL errors
  /// by number, timeouts of the lock service or the database.
  Response handle(const Request& request, Worker& worker) final;

 protected:
  /// The operation itself; returns an error kind the client sees, or none.
  virtual ErrorKind bind(const Request& request, Worker& worker) = 0;

  double param(const std::string& name) const { return params_.at(name); }
  sim::Duration millis(const std::string& name) const;
  static std::string open_id(const Request& r) { return open_id_of(r.key); }
  static std::string device(const Request& r) { return device_of(r.value); }
  /// Who acts, for rows and the checkers: "app-1 worker 2, client 7, op 7 attempt 2".
  static std::string who(const Request& r, const Worker& w);
  /// A lock value unique to this attempt.
  static std::string attempt_token(const Request& r, const Worker& w);
  /// A connection from the worker's pool, labelled with who is inserting (for checkers).
  db::Connection connect(const Request& r, Worker& worker);
  /// SELECT ... WHERE open_id = ?, the handler's work, then INSERT if absent: the
  /// check-then-insert at the heart of most strategies, on one connection. Under a lock,
  /// the insert is a critical-section step of `hold`.
  void check_then_insert(db::Connection& c, const Request& r, Worker& w, checkers::Hold* hold = nullptr);
  /// The same on a fresh connection from the pool: a lock strategy's critical section.
  void check_then_insert(const Request& r, Worker& w, checkers::Hold& hold);
  /// Unlocks with a plain DEL, as RedisUtil.unlock does: whoever's lock is there goes.
  void unlock_with_del(Worker& w, checkers::Hold& hold, const std::string& lock);
  /// Unlocks with the compare-and-delete script: only if the lock still holds `token`.
  void unlock_own(Worker& w, checkers::Hold& hold, const std::string& lock, const std::string& token);
  /// Inside the open transaction on `c`: asks the other service to create its record for account
  /// `id` (rolling back and rethrowing when the call times out), records the link, commits.
  void link_remote_and_commit(db::Connection& c, Worker& w, std::int64_t id);
  /// SET lock NX PX ttl_ms with this attempt's own value, retried every retry_ms until
  /// acquire_timeout_ms (on the node's clock). Returns the value, or nothing when busy.
  std::optional<std::string> acquire_redis_lock(const Request& r, Worker& w, const std::string& lock);
  /// The fenced critical section (Kleppmann's fencing token, checked by the database): the
  /// handler's work first, then one short transaction that raises the lock's fence to
  /// `token` unless a higher token has been seen (then rolls back: this holder's write is
  /// stale) and inserts if absent. Returns false when refused.
  bool fenced_check_then_insert(const Request& r, Worker& w, checkers::Hold& hold, std::int64_t token);
  /// Runs `body`, then `unlock`, as a `finally` block does: also when the body fails with
  /// a database error or a timeout. (A crash runs neither: the process is gone.)
  template <class Body, class Unlock>
  static void then_unlock(Body&& body, Unlock&& unlock) {
    try {
      body();
    } catch (const db::SqlError&) {
      unlock();
      throw;
    } catch (const sim::Timeout&) {
      unlock();
      throw;
    }
    unlock();
  }
  /// Tells the checkers this attempt holds Redis lock `lock` with value `value` (on the
  /// master, or on a Redlock quorum).
  checkers::Hold hold_redis(const Request& r, const Worker& w, const std::string& lock, const std::string& value,
                            bool redlock = false);

  Env& env_;
  Params params_;
};

/// Check-then-insert on one connection and nothing else: the strategy of the production
/// code, with or without a unique index behind it (the registry entry says which).
class PlainCheckThenInsert : public Strategy {
 public:
  using Strategy::Strategy;

 protected:
  ErrorKind bind(const Request& r, Worker& w) override {
    db::Connection c = connect(r, w);
    check_then_insert(c, r, w);
    return ErrorKind::none;
  }
};

using Factory = std::function<std::unique_ptr<Strategy>(Env&, const Params&)>;

/// The strategies of the batch-scheduler workload are designs of its scheduler and
/// consumers rather than request handlers.
using BatchFactory = std::function<batch::Design(const Params&)>;

struct Entry {
  Info info;
  Factory make;             // the account-bind handler; empty for batch-scheduler strategies
  BatchFactory batch = {};  // the batch-scheduler design; empty for account-bind strategies
  const char* workload() const { return batch ? "batch-scheduler" : "account-bind"; }
};

/// Every strategy, in the order tables list them.
const std::vector<Entry>& registry();
const Entry* find(const std::string& name);

}  // namespace models::strategies
