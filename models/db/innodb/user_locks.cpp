#include "models/db/innodb/user_locks.hpp"

#include <algorithm>
#include <chrono>

#include "models/db/rows.hpp"
#include "sim/engine.hpp"

namespace models::db {

namespace {

using detail::Failure;

// MariaDB's 1059 names the identifier's first 97 bytes (whole characters) and "...".
std::string too_long_message(const std::string& name) {
  std::size_t end = std::min<std::size_t>(name.size(), 97);
  while (end > 0 && end < name.size() && (static_cast<unsigned char>(name[end]) & 0xC0) == 0x80) --end;
  return "Identifier name '" + name.substr(0, end) + "...' is too long";
}

std::string entry_of(const std::string& name) { return "user lock '" + name + "'"; }

}  // namespace

std::optional<std::string> UserLocks::key(const Value& name, const char* function) {
  if (is_null(name)) return std::nullopt;
  if (!std::holds_alternative<std::string>(name))
    throw Failure{Code::illegal_parameter_type, std::string("Illegal parameter data type int for operation '") + function + "'"};
  const std::string& text = std::get<std::string>(name);
  if (text.empty()) return std::nullopt;
  if (text.size() > kMaxName) throw Failure{Code::identifier_too_long, too_long_message(text)};
  return text;
}

UserLocks::Answer UserLocks::get(SessionId session, const std::string& who, const Value& name, const Value& timeout,
                                 std::vector<LockWait>& waits) {
  const std::optional<std::string> k = key(name, "get_lock");
  if (!k || is_null(timeout)) return std::nullopt;
  const std::int64_t seconds = as_number(timeout);
  if (seconds < 0) return std::nullopt;  // MariaDB warns (1411) and takes nothing
  Lock& lock = locks_[*k];
  if (lock.count == 0 || lock.owner == session) {
    lock.owner = session;
    lock.owner_who = who;
    ++lock.count;
    return 1;
  }
  if (seconds == 0) return 0;
  if (closes_cycle(session, *k))
    throw Failure{Code::deadlock, "Deadlock found when trying to get lock; try restarting transaction"};
  LockWait& wait = waits.emplace_back(LockWait{.table = "", .index = "", .entry = entry_of(*k), .mode = "X", .behind = {lock.owner_who}});
  const sim::Time started = sim::now();
  auto me = lock.waiting.insert(lock.waiting.end(), Waiter{session, who});
  sim::Future<bool> granted = me->granted.get_future();
  waiting_for_[session] = *k;
  // A day bounds a timeout the server would wait years for: a trial ends long before.
  const sim::Duration limit = std::chrono::seconds(std::min<std::int64_t>(seconds, 86'400));
  const bool got = granted.try_get_for(limit).has_value();
  waiting_for_.erase(session);
  wait.waited = sim::now() - started;
  if (!got) {  // still queued: leave the queue
    locks_.at(*k).waiting.erase(me);
    return 0;
  }
  return 1;  // hand_on made it the owner
}

bool UserLocks::closes_cycle(SessionId session, const std::string& name) const {
  std::string next = name;
  // Each session waits for one name at most, so a chain is at most as long as the waiters.
  for (std::size_t step = 0; step <= waiting_for_.size(); ++step) {
    const SessionId holder = locks_.at(next).owner;
    if (holder == session) return true;
    const auto w = waiting_for_.find(holder);
    if (w == waiting_for_.end()) return false;
    next = w->second;
  }
  return false;
}

void UserLocks::hand_on(std::map<std::string, Lock>::iterator it) {
  Lock& lock = it->second;
  if (lock.waiting.empty()) {
    locks_.erase(it);
    return;
  }
  Waiter next = std::move(lock.waiting.front());
  lock.waiting.pop_front();
  lock.owner = next.session;
  lock.owner_who = std::move(next.who);
  lock.count = 1;
  next.granted.set_value(true);
}

UserLocks::Answer UserLocks::release(SessionId session, const Value& name) {
  const std::optional<std::string> k = key(name, "release_lock");
  if (!k) return std::nullopt;
  const auto it = locks_.find(*k);
  if (it == locks_.end()) return std::nullopt;
  if (it->second.owner != session) return 0;
  if (--it->second.count == 0) hand_on(it);
  return 1;
}

std::int64_t UserLocks::release_all(SessionId session) {
  std::int64_t released = 0;
  for (auto it = locks_.begin(); it != locks_.end();) {
    auto here = it++;  // hand_on may erase it
    if (here->second.owner != session) continue;
    released += here->second.count;
    hand_on(here);
  }
  return released;
}

UserLocks::Answer UserLocks::is_free(const Value& name) const {
  const std::optional<std::string> k = key(name, "is_free_lock");
  if (!k) return std::nullopt;
  return locks_.count(*k) ? 0 : 1;
}

UserLocks::Answer UserLocks::is_used(const Value& name) const {
  const std::optional<std::string> k = key(name, "is_used_lock");
  if (!k) return std::nullopt;
  const auto it = locks_.find(*k);
  if (it == locks_.end()) return std::nullopt;
  return static_cast<std::int64_t>(it->second.owner);
}

void UserLocks::list(std::vector<HeldLock>& out, std::size_t most) const {
  for (const auto& [name, lock] : locks_) {
    if (out.size() >= most) return;
    out.push_back({lock.owner_who, "", "", entry_of(name), "X"});
  }
}

bool UserLocks::holds(SessionId session, const std::string& name) const {
  const auto it = locks_.find(name);
  return it != locks_.end() && it->second.owner == session;
}

}  // namespace models::db
