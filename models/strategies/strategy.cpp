#include "models/strategies/strategy.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>

namespace models::strategies {

db::TableSchema accounts_table(db::KeyIndex key_index) {
  return {.name = kAccounts,
          .key_column = "open_id",
          .key_index = key_index,
          .columns = {{"device", std::string()},
                      {"wallet", std::int64_t{0}},
                      {"version", std::int64_t{0}},
                      {"status", std::int64_t{0}}}};
}

db::TableSchema lock_table() {
  return {.name = kLocks, .key_column = "lock_key", .key_index = db::KeyIndex::unique, .columns = {{"owner", std::string()}}};
}

db::TableSchema fence_table() {
  return {.name = kFences, .key_column = "lock_key", .key_index = db::KeyIndex::unique, .columns = {{"token", std::int64_t{0}}}};
}

Env::Env(Services services, sim::Distribution work) : services_(std::move(services)), work_(std::move(work)) {
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

bool Env::zookeeper_has(const std::string& path) const {
  return services_.zookeeper != nullptr && services_.zookeeper->exists(path);
}

etcd::Client& Env::etcd(const Worker& worker) {
  if (services_.etcd == nullptr) throw sim::UsageError("strategies::Env: this world has no etcd");
  EtcdSession& session = etcd_sessions_[{index(worker), worker.index}];
  if (!session.client) session.client = std::make_unique<etcd::Client>(*services_.network, worker.server.node(), *services_.etcd);
  return *session.client;
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

bool Env::etcd_has(const std::string& key) const { return services_.etcd != nullptr && services_.etcd->find(key) != nullptr; }

std::size_t Env::index(const AppServer& server) const {
  const auto& servers = services_.servers;
  auto it = std::find(servers.begin(), servers.end(), &server);
  if (it == servers.end()) throw sim::UsageError("strategies::Env: a worker of an unknown app server");
  return static_cast<std::size_t>(it - servers.begin());
}

redis::Reply Env::redis(const AppServer& server, const redis::Command& command) {
  const std::size_t i = index(server);
  if (i >= services_.redis.size()) throw sim::UsageError("strategies::Env: this world has no Redis");
  ++redis_commands_;
  return services_.redis[i]->run(command);
}

namespace {
bool grants(const redis::Server& server, const std::string& lock, const std::string& value) {
  if (!server.node().is_up()) return false;
  const redis::Value* v = server.keyspace().find(lock, server.node().clock().now());
  return v != nullptr && (v->is_hash ? v->hash.count(value) > 0 : v->text == value);
}
}  // namespace

bool Env::redis_grants(const std::string& lock, const std::string& value) const {
  if (services_.redis_nodes.empty()) return false;
  return grants(services_.sentinel != nullptr ? services_.sentinel->master() : *services_.redis_nodes.front(), lock, value);
}

bool Env::redlock_grants(const std::string& lock, const std::string& value) const {
  const auto n = std::count_if(services_.redis_nodes.begin(), services_.redis_nodes.end(),
                               [&](const redis::Server* s) { return grants(*s, lock, value); });
  return static_cast<std::size_t>(n) >= services_.redis_nodes.size() / 2 + 1;
}

std::uint64_t Env::stuck_locks() const {
  std::uint64_t n = 0;
  for (const redis::Server* s : services_.redis_nodes)
    for (const auto& [key, value] : s->keyspace().data())
      if (value.expires_at == sim::kNever) ++n;
  return n;
}

redis::Redlock& Env::redlock(const Worker& worker, const redis::RedlockConfig& config) {
  const std::size_t i = index(worker);
  auto& slot = redlocks_[i];
  if (!slot) {
    if (services_.network == nullptr || services_.redis_nodes.empty())
      throw sim::UsageError("strategies::Env: this world has no Redis");
    slot = std::make_unique<redis::Redlock>(*services_.network, worker.server.node(), services_.redis_nodes, config);
  }
  return *slot;
}

std::uint64_t Env::redis_commands() const {
  std::uint64_t n = redis_commands_;
  for (const auto& [i, r] : redlocks_) n += r->commands_sent();
  return n;
}

sim::Duration Strategy::millis(const std::string& name) const {
  return std::chrono::duration_cast<sim::Duration>(std::chrono::duration<double, std::milli>(param(name)));
}

std::string Strategy::who(const Request& r, const Worker& w) {
  return fmt::format(FMT_COMPILE("{} worker {}, client {}, op {} attempt {}"), w.server.name(), w.index + 1, r.client, r.operation,
                     r.attempt);
}

std::string Strategy::attempt_token(const Request& r, const Worker& w) {
  return fmt::format(FMT_COMPILE("{}-{}-{}-{}"), w.server.name(), w.index, r.operation, r.attempt);
}

db::Connection Strategy::connect(const Request& r, Worker& worker) {
  db::Connection c = env_.pool(worker).acquire();
  c.set_origin(who(r, worker));
  return c;
}

void Strategy::check_then_insert(db::Connection& c, const Request& r, Worker& w, checkers::Hold* hold) {
  if (c.select(kAccounts, {db::eq("open_id", open_id(r))}).empty()) {
    sim::sleep_for(env_.work(w));
    if (hold != nullptr) hold->step();
    c.insert(kAccounts, {{"open_id", open_id(r)}, {"device", device(r)}});
    if (hold != nullptr) hold->wrote();
  }
}

void Strategy::check_then_insert(const Request& r, Worker& w, checkers::Hold& hold) {
  db::Connection c = connect(r, w);
  check_then_insert(c, r, w, &hold);
}

void Strategy::unlock_with_del(Worker& w, checkers::Hold& hold, const std::string& lock) {
  hold.unlocking_blindly();
  hold.release();
  env_.redis(w, redis::Command::del(lock));
}

void Strategy::unlock_own(Worker& w, checkers::Hold& hold, const std::string& lock, const std::string& token) {
  hold.release();
  env_.redis(w, redis::Command::cas_del(lock, token));
}

void Strategy::link_remote_and_commit(db::Connection& c, Worker& w, std::int64_t id) {
  try {
    env_.remote_create(w, id, millis("remote_timeout_ms"));
  } catch (const sim::Timeout&) {
    c.rollback();  // the RPC failed: undo "our" part
    throw;
  }
  c.update(kAccounts, {{"wallet", id}}, {db::eq("id", id)});
  c.commit();
}

bool Strategy::fenced_check_then_insert(const Request& r, Worker& w, checkers::Hold& hold, std::int64_t token) {
  sim::sleep_for(env_.work(w));  // building the row, calling other services: before the short transaction
  db::Connection c = connect(r, w);
  c.begin();
  c.insert(kFences, {{"lock_key", open_id(r)}}, db::OnDuplicate::ignore);  // the fence row, once
  if (!c.update_fenced(kFences, {}, {db::eq("lock_key", open_id(r))}, "token", token)) {
    c.rollback();
    hold.rejected();
    return false;
  }
  if (c.select(kAccounts, {db::eq("open_id", open_id(r))}).empty()) {
    hold.step();
    c.insert(kAccounts, {{"open_id", open_id(r)}, {"device", device(r)}});
    hold.wrote();
  }
  c.commit();
  return true;
}

std::optional<std::string> Strategy::acquire_redis_lock(const Request& r, Worker& w, const std::string& lock) {
  const std::string token = attempt_token(r, w);
  const Clock& clock = w.server.node().clock();
  const sim::Time give_up = clock.monotonic() + millis("acquire_timeout_ms");
  while (env_.redis(w, redis::Command::set_nx_px(lock, token, millis("ttl_ms"))).is_nil()) {
    if (clock.monotonic() >= give_up) return std::nullopt;
    sim::sleep_for(millis("retry_ms"));
  }
  return token;
}

checkers::Hold Strategy::hold_redis(const Request& r, const Worker& w, const std::string& lock, const std::string& value,
                                    bool redlock) {
  Env* env = &env_;
  checkers::GrantedPeek granted = redlock ? checkers::GrantedPeek([env, lock, value] { return env->redlock_grants(lock, value); })
                                          : checkers::GrantedPeek([env, lock, value] { return env->redis_grants(lock, value); });
  std::optional<sim::Duration> lease;
  if (params_.count("ttl_ms")) lease = millis("ttl_ms");
  return env_.locks().acquired(lock, who(r, w), std::move(granted), lease);
}

Response Strategy::handle(const Request& request, Worker& worker) {
  try {
    const ErrorKind outcome = bind(request, worker);
    if (outcome == ErrorKind::dropped) env_.count_dropped();
    return Response{outcome};
  } catch (const db::SqlError& e) {
    switch (e.code()) {
      case db::Code::duplicate_key: return Response{ErrorKind::duplicate_key};
      case db::Code::deadlock: return Response{ErrorKind::deadlock};
      case db::Code::lock_wait_timeout: return Response{ErrorKind::lock_wait_timeout};
      default: return Response{ErrorKind::timeout};  // the pool or the connection timed out
    }
  } catch (const sim::Timeout&) {
    return Response{ErrorKind::timeout};  // a lock service call timed out
  } catch (const zk::KeeperError&) {
    return Response{ErrorKind::internal};  // a KeeperException (the session expired mid-call, say)
  }
}

}  // namespace models::strategies
