#include "models/strategies/strategy.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace models::strategies {

db::TableSchema accounts_table(db::KeyIndex key_index) {
  return {.name = kAccounts, .key_column = "open_id", .key_index = key_index, .columns = {{"device", std::string()}}};
}

Env::Env(std::vector<AppServer*> servers, std::vector<db::Pool*> pools, std::vector<redis::Client*> redis,
         sim::Distribution work)
    : servers_(std::move(servers)), pools_(std::move(pools)), redis_(std::move(redis)), work_(std::move(work)) {}

std::size_t Env::index(const Worker& worker) const {
  auto it = std::find(servers_.begin(), servers_.end(), &worker.server);
  if (it == servers_.end()) throw sim::UsageError("strategies::Env: a worker of an unknown app server");
  return static_cast<std::size_t>(it - servers_.begin());
}

redis::Reply Env::redis(const Worker& worker, const redis::Command& command) {
  const std::size_t i = index(worker);
  if (i >= redis_.size()) throw sim::UsageError("strategies::Env: this world has no Redis");
  ++redis_commands_;
  return redis_[i]->run(command);
}

sim::Duration Strategy::millis(const std::string& name) const {
  return std::chrono::duration_cast<sim::Duration>(std::chrono::duration<double, std::milli>(param(name)));
}

db::Connection Strategy::connect(const Request& r, Worker& worker) {
  db::Connection c = env_.pool(worker).acquire();
  c.set_origin(fmt::format("{} worker {}, client {}, op {} attempt {}", worker.server.name(), worker.index + 1, r.client,
                           r.operation, r.attempt));
  return c;
}

void Strategy::check_then_insert(db::Connection& c, const Request& r, Worker& w) {
  if (c.select(kAccounts, {db::eq("open_id", open_id(r))}).empty()) {
    sim::sleep_for(env_.work(w));
    c.insert(kAccounts, {{"open_id", open_id(r)}, {"device", device(r)}});
  }
}

std::optional<std::string> Strategy::acquire_redis_lock(const Request& r, Worker& w, const std::string& lock) {
  const std::string token = fmt::format("{}-{}-{}", w.server.name(), w.index, r.operation * 16 + r.attempt);
  const Clock& clock = w.server.node().clock();
  const sim::Time give_up = clock.monotonic() + millis("acquire_timeout_ms");
  while (env_.redis(w, redis::Command::set_nx_px(lock, token, millis("ttl_ms"))).is_nil()) {
    if (clock.monotonic() >= give_up) return std::nullopt;
    sim::sleep_for(millis("retry_ms"));
  }
  return token;
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
    return Response{ErrorKind::timeout};  // a Redis call timed out
  }
}

}  // namespace models::strategies
