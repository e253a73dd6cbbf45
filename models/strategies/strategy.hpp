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

#include "models/app/server.hpp"
#include "models/db/server.hpp"
#include "models/redis/client.hpp"

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

/// The table every account-bind strategy writes: one row per bound OpenID, ideally.
inline const std::string kAccounts = "t_account";
db::TableSchema accounts_table(db::KeyIndex key_index);

/// The services one trial's strategy uses, per app node.
class Env {
 public:
  Env(std::vector<AppServer*> servers, std::vector<db::Pool*> pools, std::vector<redis::Client*> redis,
      sim::Distribution work = sim::fixed(sim::Duration{}));
  /// How long the handler works between reading and writing (building the row, calling
  /// another service): the window in which a second copy of the request can slip in.
  sim::Duration work(Worker& worker) const { return work_.sample_duration(worker.stream); }

  db::Pool& pool(const Worker& worker) { return *pools_.at(index(worker)); }
  /// Runs a Redis command from the worker's node, counted for redis_ops_per_op.
  redis::Reply redis(const Worker& worker, const redis::Command& command);
  std::uint64_t redis_commands() const { return redis_commands_; }
  /// Requests a strategy chose to drop (answered ErrorKind::dropped).
  std::uint64_t dropped() const { return dropped_; }
  void count_dropped() { ++dropped_; }

 private:
  std::size_t index(const Worker& worker) const;
  std::vector<AppServer*> servers_;
  std::vector<db::Pool*> pools_;
  std::vector<redis::Client*> redis_;
  std::uint64_t redis_commands_ = 0;
  std::uint64_t dropped_ = 0;
  sim::Distribution work_;
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
  static std::string open_id(const Request& r) { return "openid:" + std::to_string(r.key); }
  static std::string device(const Request& r) { return "device-" + std::to_string(r.value); }
  /// A connection from the worker's pool, labelled with who is inserting (for checkers).
  db::Connection connect(const Request& r, Worker& worker);
  /// SELECT ... WHERE open_id = ?, the handler's work, then INSERT if absent: the
  /// check-then-insert at the heart of most strategies, on one connection.
  void check_then_insert(db::Connection& c, const Request& r, Worker& w);
  /// SET lock NX PX ttl_ms with this attempt's own value, retried every retry_ms until
  /// acquire_timeout_ms (on the node's clock). Returns the value, or nothing when busy.
  std::optional<std::string> acquire_redis_lock(const Request& r, Worker& w, const std::string& lock);

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

struct Entry {
  Info info;
  Factory make;
};

/// Every strategy, in the order tables list them.
const std::vector<Entry>& registry();
const Entry* find(const std::string& name);

}  // namespace models::strategies
