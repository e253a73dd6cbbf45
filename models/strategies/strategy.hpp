#pragma once
// What every strategy is: a handler for the account-bind operation ("bind OpenID `key` to
// device `value`"), written straight-line like the service code in the source articles,
// with a registry entry saying where it comes from and what it risks.
//
// A strategy reaches the services of the world through `Env`: the database pool of the app
// node it runs on, a Redis client there, lock-service sessions; it takes locks through the
// lock clients (lock_clients.hpp), which report the holds to what the checkers read
// (Env::observed()). It knows nothing of scenario files or the command line: its
// parameters are plain numbers by name.

#include <any>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/app/remote.hpp"
#include "models/app/server.hpp"
#include "models/db/server.hpp"
#include "models/checkers/locks.hpp"
#include "models/coord/consul.hpp"
#include "models/coord/etcd.hpp"
#include "models/coord/zookeeper.hpp"
#include "models/redis/client.hpp"
#include "models/redis/redlock.hpp"
#include "models/redis/sentinel.hpp"
#include "models/strategies/lock_clients.hpp"
#include "models/workloads/account_bind/accounts.hpp"
#include "models/workloads/lua/workload.hpp"

namespace models {
class LoadBalancer;
}

namespace models::strategies {

using Params = std::map<std::string, double>;

/// What a parameter's number means, and so which values it takes.
enum class ParamKind {
  duration_ms,  // milliseconds, 0 .. 1e12
  count,        // a whole number, 0 .. 1e6
  flag,         // 0 or 1
  index,        // the index on t_account.open_id: 0 none, 1 plain (not unique), 2 unique
};

struct ParamInfo {
  std::string name;
  double value;  // the default
  std::string meaning;
  ParamKind kind = ParamKind::duration_ms;
  /// Narrower bounds than the kind's, where the service sets them (Consul's TTL, 10 s .. 24 h).
  std::optional<double> at_least{};
  std::optional<double> at_most{};
};

/// What the world must hold for a strategy.
struct Needs {
  db::KeyIndex key_index = db::KeyIndex::none;  // on accounts.open_id
  bool redis = false;
  int redis_instances = 1;  // unless the scenario says how many
  bool zookeeper = false;
  bool etcd = false;
  bool consul = false;
  std::vector<db::TableSchema> tables{};  // besides the accounts table
  bool remote = false;                    // another service the handler calls
  /// The accounts table as the strategy defines it (a script's CREATE TABLE t_account); none:
  /// accounts_table(key_index).
  std::optional<db::TableSchema> accounts{};
  /// The account-bind workload's t_account exists; a strategy of a Lua workload has the
  /// workload's tables instead.
  bool account_table = true;
};

struct Info {
  std::string name;         // the CLI name
  std::string description;  // one line
  std::string source;       // article file and section, or the public source
  std::string risks;        // what it is expected to risk
  std::vector<ParamInfo> params{};
  Needs needs{};
};

/// The `index` parameter of a strategy whose design leaves the index on open_id to the user
/// (`--set select-for-update.index=unique`), with the design's own as the default.
inline ParamInfo index_param(db::KeyIndex design) {
  return {"index", static_cast<double>(design), "the index on t_account.open_id: 0 none, 1 plain, 2 unique", ParamKind::index};
}

/// The parameters of the token lock retried until a timeout (redis_token_cas_unlock.cpp), with their defaults.
inline std::vector<ParamInfo> redis_lock_params() {
  return {{"ttl_ms", 10000, "lock TTL"},
          {"acquire_timeout_ms", 1000, "give up acquiring after this"},
          {"retry_ms", 10, "pause between acquire attempts"}};
}

// The account-bind workload's table and values, which its strategies write.
using workloads::account_bind::accounts_table;
using workloads::account_bind::device_of;
using workloads::account_bind::kAccounts;
using workloads::account_bind::open_id_of;
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
  LoadBalancer* balancer = nullptr;  // in front of `servers` (a rolling deploy drains them)
  std::vector<db::Pool*> pools{};
  db::Server* database = nullptr;  // for sessions of its own (a rollout's jobs and DDL)
  std::vector<redis::Client*> redis{};        // to the master (through the sentinel when there is one)
  std::vector<redis::Server*> redis_nodes{};  // every Redis instance, redis-1 first: Redlock's masters
  const redis::Sentinel* sentinel = nullptr;
  zk::Server* zookeeper = nullptr;
  zk::ClientConfig zookeeper_client{};
  etcd::Server* etcd = nullptr;
  sim::Duration etcd_session_ttl = std::chrono::seconds(60);  // concurrency.NewSession's default
  consul::Server* consul = nullptr;
  RemoteService* remote = nullptr;
  Network* network = nullptr;
};

/// The services one trial's strategy uses, per app node (its worker's database pool, Redis
/// client, lock-service sessions, the other service), and what the checkers observe of it.
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
  /// A Redlock client on the worker's node over every Redis instance, built once per node.
  redis::Redlock& redlock(const Worker& worker, const redis::RedlockConfig& config);
  /// The worker's ZooKeeper session (Curator's client), opened on first use; a new one
  /// after its node restarts.
  zk::Client& zookeeper(const Worker& worker);
  /// The worker's etcd client and session lease (concurrency.NewSession: a lease kept alive
  /// every TTL/3 from the node), granted on first use, or anew with `renew` (after the
  /// old one expired: its session is Done).
  etcd::Client& etcd(const Worker& worker);
  std::int64_t etcd_session(const Worker& worker, bool renew = false);
  /// A Consul client on the worker's node (each lock makes its own session, as api.Lock does).
  consul::Client consul(const Worker& worker) const;
  /// Asks the remote service to create its record for account `id`; throws sim::Timeout.
  void remote_create(const Worker& worker, std::int64_t id, sim::Duration timeout);

  /// What the checkers and the runner read once the run is over: the holds, the requests
  /// dropped, the lock wake-ups, the Redis commands, the stuck locks.
  const checkers::LockObservations& observed() const { return observed_; }
  const Services& services() const { return services_; }

  /// The Lua workload this trial runs, if any, and the trial's seed, which its request fields
  /// are drawn from.
  void set_workload(const workloads::Workload* workload, std::uint64_t seed) {
    workload_ = workload;
    seed_ = seed;
  }
  const workloads::Workload* workload() const { return workload_; }
  /// The request fields of `request` (none without a Lua workload).
  std::vector<std::pair<std::string, db::Value>> fields(const Request& request) const {
    return workload_ == nullptr ? std::vector<std::pair<std::string, db::Value>>{} : workload_->draw(seed_, request);
  }
  /// An external side effect a handler reported (a card charged, a job run), for the workload's check.
  void note_effect(workloads::Effect effect) {
    effects_bytes_ += sizeof(workloads::Effect) + effect.name.capacity() +
                      (std::holds_alternative<std::string>(effect.value) ? std::get<std::string>(effect.value).capacity() : 0);
    effects_.push_back(std::move(effect));
  }
  const std::vector<workloads::Effect>& effects() const { return effects_; }
  /// What the effects noted so far hold, as the memory budget counts them.
  std::uint64_t effects_bytes() const { return effects_bytes_; }

 private:
  // The only writers of the observations: the lock clients, and the handler (drops).
  friend class LockClients;
  friend class Strategy;
  std::size_t index(const AppServer& server) const;
  std::size_t index(const Worker& worker) const { return index(worker.server); }
  Services services_;
  sim::Distribution work_;
  checkers::LockObservations observed_;
  const workloads::Workload* workload_ = nullptr;
  std::uint64_t seed_ = 0;
  std::vector<workloads::Effect> effects_;
  std::uint64_t effects_bytes_ = 0;
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
};

/// A strategy instance for one trial.
class Strategy : public Handler {
 public:
  Strategy(Env& env, Params params) : env_(env), params_(std::move(params)) {}
  /// Runs bind() and turns what service code would surface into the response: MySQL errors
  /// by number, timeouts of the lock service or the database.
  Response handle(const Request& request, Worker& worker) override;
  /// What its own state holds, for the trial's memory budget: a script's Lua state (0 for C++ code).
  virtual std::uint64_t bytes_held() const { return 0; }

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
  /// The lock clients of the worker's node, acting for this attempt (see lock_clients.hpp).
  LockClients locks(const Request& r, Worker& w);
  /// SELECT ... WHERE open_id = ?, the handler's work, then INSERT if absent: the
  /// check-then-insert at the heart of most strategies, on one connection.
  void check_then_insert(db::Connection& c, const Request& r, Worker& w);
  /// The same under `lock`: the insert is a critical-section step of its hold.
  void check_then_insert(db::Connection& c, const Request& r, Worker& w, LockGuard& lock);
  /// The same on a fresh connection from the pool: a lock strategy's critical section.
  void check_then_insert(const Request& r, Worker& w, LockGuard& lock);
  /// Inside the open transaction on `c`: asks the other service to create its record for account
  /// `id` (rolling back and rethrowing when the call times out), records the link, commits.
  void link_remote_and_commit(db::Connection& c, Worker& w, std::int64_t id);
  /// The fenced critical section (Kleppmann's fencing token, checked by the database): the
  /// handler's work first, then one short transaction that raises the lock's fence to the
  /// lock's token unless a higher token has been seen (then rolls back: this holder's
  /// write is stale) and inserts if absent. Returns false when refused.
  bool fenced_check_then_insert(const Request& r, Worker& w, LockGuard& lock);

  /// What the checkers read, for a strategy that reports more than its locks (a script's errors).
  checkers::LockObservations& observations() { return env_.observed_; }

  Env& env_;
  Params params_;

 private:
  ErrorKind bind_then_finally(const Request& request, Worker& worker);
  void check_then_insert(db::Connection& c, const Request& r, Worker& w, checkers::Hold* hold);
  // Per worker: an unlock that failed in a guard's destructor, to surface in place of the
  // error that was unwinding (as an exception thrown in `finally` replaces it).
  std::map<const Worker*, std::exception_ptr> failed_unlocks_;
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

/// The strategies of a workload without clients are designs of its own parts rather than
/// request handlers (the batch scheduler's: batch::Design of its scheduler and consumers). The
/// entry makes the design from its parameters; the workload's trial takes it out by its type, so
/// this header names no workload's design.
using DesignFactory = std::function<std::any(const Params&)>;

struct Entry {
  Info info;
  Factory make;               // a handler of the workload's requests; empty for the workloads without clients
  DesignFactory design = {};  // the design of a workload without clients; empty for the others
  /// The workload it is a strategy of: "account-bind", "batch-scheduler", "sessions" (whose one
  /// entry runs the scenario's own script), or a Lua workload's name. A scenario runs the
  /// strategies of its workload alone.
  std::string workload = "account-bind";
  /// A strategy written in Lua (script.hpp): the file it was loaded from; empty for the
  /// catalogue's C++ strategies.
  std::string script{};
};

/// What the world must hold for `entry` run with `params`: its needs, with the index its
/// `index` parameter chose, where it has one.
Needs needs(const Entry& entry, const Params& params);

/// Every strategy, in the order tables list them.
const std::vector<Entry>& registry();
const Entry* find(const std::string& name);

}  // namespace models::strategies
