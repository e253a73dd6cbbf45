// redis-lock-double-check: SELECT; if absent, take a 60 s Redis lock (busy: fail), SELECT
// again and INSERT if still absent, DEL the lock in `finally`: double-checked locking, as
// the singleton pattern does it.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
class RedisLockDoubleCheck : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    if (!connect(r, w).select(kAccounts, {db::eq("open_id", open_id(r))}).empty()) return ErrorKind::none;
    const std::string lock = "init:" + open_id(r);
    const std::string value = attempt_token(r, w);
    if (env_.redis(w, redis::Command::set_nx_px(lock, value, millis("ttl_ms"))).is_nil()) return ErrorKind::lock_busy;
    checkers::Hold hold = hold_redis(r, w, lock, value);
    then_unlock(
        [&] {
          db::Connection c = connect(r, w);
          check_then_insert(c, r, w, &hold);
        },
        [&] {
          hold.unlocking_blindly();
          hold.release();
          env_.redis(w, redis::Command::del(lock));
        });
    return ErrorKind::none;
  }
};
}  // namespace

Entry redis_lock_double_check() {
  return {{.name = "redis-lock-double-check",
           .description = "SELECT; Redis lock 60 s (busy: fail); SELECT again, INSERT if absent; DEL",
           .source = "sources/001, scheme 4 (distributed lock with a double check)",
           .risks = "a critical section outliving the 60 s lease lets a second holder in; a busy lock is an error to the caller",
           .params = {{"ttl_ms", 60000, "lock TTL"}},
           .needs = {.redis = true}},
          [](Env& env, const Params& p) { return std::make_unique<RedisLockDoubleCheck>(env, p); }};
}

}  // namespace models::strategies
