#include "models/strategies/strategy.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <utility>

namespace models::strategies {

db::TableSchema lock_table() {
  return {.name = kLocks, .key_column = "lock_key", .key_index = db::KeyIndex::unique, .columns = {{"owner", std::string()}}};
}

db::TableSchema fence_table() {
  return {.name = kFences, .key_column = "lock_key", .key_index = db::KeyIndex::unique, .columns = {{"token", std::int64_t{0}}}};
}

namespace {
const db::sql::Prepared kFindAccount = db::sql::pinned(db::sql::prepare("SELECT id FROM t_account WHERE open_id = ?"));
const db::sql::Prepared kInsertAccount = db::sql::pinned(db::sql::prepare("INSERT INTO t_account (open_id, device) VALUES (?, ?)"));
const db::sql::Prepared kLinkWallet = db::sql::pinned(db::sql::prepare("UPDATE t_account SET wallet = ? WHERE id = ?"));
const db::sql::Prepared kInsertFence = db::sql::pinned(db::sql::prepare("INSERT IGNORE INTO t_fence (lock_key) VALUES (?)"));
// The fencing check: raises the fence to this holder's token unless a higher one was seen.
const db::sql::Prepared kRaiseFence = db::sql::pinned(db::sql::prepare("UPDATE t_fence SET token = ? WHERE lock_key = ? AND token < ?"));

checkers::LockServers lock_servers(const Services& services) {
  checkers::LockServers servers{
      .sentinel = services.sentinel, .zookeeper = services.zookeeper, .etcd = services.etcd, .consul = services.consul};
  servers.redis_nodes.assign(services.redis_nodes.begin(), services.redis_nodes.end());
  return servers;
}
}  // namespace

Env::Env(Services services, sim::Distribution work)
    : services_(std::move(services)), work_(std::move(work)), observed_(lock_servers(services_)) {
  for (std::size_t i = 0; i < services_.servers.size(); ++i) {
    services_.servers[i]->node().on_crash([this, i] {
      for (auto it = zk_clients_.begin(); it != zk_clients_.end();) {
        if (it->first.first != i) { ++it; continue; }
        zk_retired_.push_back(std::move(it->second));
        it = zk_clients_.erase(it);
      }
      for (auto it = etcd_sessions_.begin(); it != etcd_sessions_.end();) {
        if (it->first.first != i) { ++it; continue; }
        etcd_retired_.push_back(std::move(it->second));
        it = etcd_sessions_.erase(it);
      }
    });
  }
}

zk::Client& Env::zookeeper(const Worker& worker) {
  if (services_.zookeeper == nullptr) throw sim::UsageError("strategies::Env: this world has no ZooKeeper");
  auto& slot = zk_clients_[{index(worker), worker.index}];
  if (!slot) {
    slot = std::make_unique<zk::Client>(*services_.network, worker.server.node(), *services_.zookeeper,
                                        services_.zookeeper_client);
    slot->connect();
  }
  return *slot;
}

etcd::Client& Env::etcd(const Worker& worker) {
  if (services_.etcd == nullptr) throw sim::UsageError("strategies::Env: this world has no etcd");
  EtcdSession& session = etcd_sessions_[{index(worker), worker.index}];
  if (!session.client) session.client = std::make_unique<etcd::Client>(*services_.network, worker.server.node(), *services_.etcd);
  return *session.client;
}

consul::Client Env::consul(const Worker& worker) const {
  if (services_.consul == nullptr) throw sim::UsageError("strategies::Env: this world has no Consul");
  return consul::Client(*services_.network, worker.server.node(), *services_.consul);
}

std::int64_t Env::etcd_session(const Worker& worker, bool renew) {
  etcd::Client& client = etcd(worker);
  EtcdSession& session = etcd_sessions_[{index(worker), worker.index}];
  if (session.lease == 0 || renew) {
    session.lease = client.grant(services_.etcd_session_ttl);
    etcd::keep_alive_in_background(client, session.lease, services_.etcd_session_ttl);
  }
  return session.lease;
}

void Env::remote_create(const Worker& worker, std::int64_t id, sim::Duration timeout) {
  if (services_.remote == nullptr) throw sim::UsageError("strategies::Env: this world has no remote service");
  services_.remote->create(worker.server.node().id(), id, timeout);
}

std::size_t Env::index(const AppServer& server) const {
  const auto& servers = services_.servers;
  auto it = std::find(servers.begin(), servers.end(), &server);
  if (it == servers.end()) throw sim::UsageError("strategies::Env: a worker of an unknown app server");
  return static_cast<std::size_t>(it - servers.begin());
}

redis::Reply Env::redis(const AppServer& server, const redis::Command& command) {
  const std::size_t i = index(server);
  if (i >= services_.redis.size()) throw sim::UsageError("strategies::Env: this world has no Redis");
  observed_.count_redis_command();
  return services_.redis[i]->run(command);
}

redis::Redlock& Env::redlock(const Worker& worker, const redis::RedlockConfig& config) {
  const std::size_t i = index(worker);
  auto& slot = redlocks_[i];
  if (!slot) {
    if (services_.network == nullptr || services_.redis_nodes.empty())
      throw sim::UsageError("strategies::Env: this world has no Redis");
    slot = std::make_unique<redis::Redlock>(*services_.network, worker.server.node(), services_.redis_nodes, config);
    observed_.count_commands_of(*slot);
  }
  return *slot;
}

sim::Duration Strategy::millis(const std::string& name) const {
  return std::chrono::duration_cast<sim::Duration>(std::chrono::duration<double, std::milli>(param(name)));
}

std::string Strategy::who(const Request& r, const Worker& w) {
  return Origin{w.server.name(), static_cast<std::uint32_t>(w.index + 1), r.client, r.operation, r.attempt}.text();
}

std::string Strategy::attempt_token(const Request& r, const Worker& w) {
  fmt::memory_buffer out;  // as Origin::text: on the stack, copied out once
  fmt::format_to(std::back_inserter(out), FMT_COMPILE("{}-{}-{}-{}"), w.server.name(), w.index, r.operation, r.attempt);
  return fmt::to_string(out);
}

db::Connection Strategy::connect(const Request& r, Worker& worker) {
  db::Connection c = [&] {
    TimeSpentIn waiting(worker.time, &TimeSpent::pool);  // a wait that ends in the pool's timeout counts too
    return env_.pool(worker).acquire();
  }();
  c.set_origin(who(r, worker));
  c.count_lock_waits(&worker.time.db_lock);
  return c;
}

LockClients Strategy::locks(const Request& r, Worker& w) {
  return LockClients(env_, w, who(r, w), attempt_token(r, w), &failed_unlocks_[&w]);
}

void Strategy::check_then_insert(db::Connection& c, const Request& r, Worker& w, checkers::Hold* hold) {
  if (c.execute(kFindAccount, {open_id(r)}).rows.empty()) {
    sim::sleep_for(env_.work(w));
    if (hold != nullptr) hold->step();
    c.execute(kInsertAccount, {open_id(r), device(r)});
    if (hold != nullptr) hold->wrote();
  }
}

void Strategy::check_then_insert(db::Connection& c, const Request& r, Worker& w) { check_then_insert(c, r, w, nullptr); }

void Strategy::check_then_insert(db::Connection& c, const Request& r, Worker& w, LockGuard& lock) {
  check_then_insert(c, r, w, &lock.hold());
}

void Strategy::check_then_insert(const Request& r, Worker& w, LockGuard& lock) {
  db::Connection c = connect(r, w);
  check_then_insert(c, r, w, lock);
}

void Strategy::link_remote_and_commit(db::Connection& c, Worker& w, std::int64_t id) {
  try {
    env_.remote_create(w, id, millis("remote_timeout_ms"));
  } catch (const sim::Timeout&) {
    c.rollback();  // the RPC failed: undo "our" part
    throw;
  }
  c.execute(kLinkWallet, {id, id});
  c.commit();
}

bool Strategy::fenced_check_then_insert(const Request& r, Worker& w, LockGuard& lock) {
  sim::sleep_for(env_.work(w));  // building the row, calling other services: before the short transaction
  db::Connection c = connect(r, w);
  c.begin();
  c.execute(kInsertFence, {open_id(r)});  // the fence row, once
  if (c.execute(kRaiseFence, {lock.token(), open_id(r), lock.token()}).affected == 0) {
    c.rollback();
    lock.hold().rejected();
    return false;
  }
  if (c.execute(kFindAccount, {open_id(r)}).rows.empty()) {
    lock.hold().step();
    c.execute(kInsertAccount, {open_id(r), device(r)});
    lock.hold().wrote();
  }
  c.commit();
  return true;
}

ErrorKind Strategy::bind_then_finally(const Request& request, Worker& worker) {
  std::exception_ptr& failed_unlock = failed_unlocks_[&worker];
  ErrorKind outcome;
  try {
    outcome = bind(request, worker);
  } catch (...) {
    // An unlock that failed while this error unwound replaces it, as in `finally`.
    if (failed_unlock) std::rethrow_exception(std::exchange(failed_unlock, nullptr));
    throw;
  }
  if (failed_unlock) std::rethrow_exception(std::exchange(failed_unlock, nullptr));
  return outcome;
}

Response Strategy::handle(const Request& request, Worker& worker) {
  try {
    worker.answer_code.clear();
    const ErrorKind outcome = bind_then_finally(request, worker);
    if (outcome == ErrorKind::dropped) env_.observed_.count_dropped();
    // A server error or an answer of the strategy's own is counted by the code it named.
    std::string code = std::exchange(worker.answer_code, {});
    if (outcome != ErrorKind::server_error && outcome != ErrorKind::business) code.clear();
    return Response{outcome, std::move(code)};
  } catch (const db::SqlError& e) {
    switch (e.code()) {
      case db::Code::duplicate_key: return Response{ErrorKind::duplicate_key};
      case db::Code::deadlock: return Response{ErrorKind::deadlock};
      case db::Code::lock_wait_timeout: return Response{ErrorKind::lock_wait_timeout};
      case db::Code::autoinc_failed: return Response{ErrorKind::autoinc_failed};
      case db::Code::connection_timeout:
      case db::Code::statement_timeout: return Response{ErrorKind::timeout};  // the pool, the connection or the statement timed out
      default: return Response{ErrorKind::server_error, e.server_code()};  // counted by the server's own code
    }
  } catch (const sim::Timeout&) {
    return Response{ErrorKind::timeout};  // a lock service call timed out
  } catch (const consul::Error&) {
    return Response{ErrorKind::session_expired};  // the lock's session was invalidated while it waited
  } catch (const zk::KeeperError& e) {
    // The session expired mid-call, or the lock node went with it (Curator's LOST): named as such.
    if (e.code() == zk::Code::session_expired || e.code() == zk::Code::no_node) return Response{ErrorKind::session_expired};
    return Response{ErrorKind::internal};  // another KeeperException
  }
}

}  // namespace models::strategies
