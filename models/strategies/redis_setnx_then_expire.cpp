// redis-setnx-then-expire: SETNX lock, then EXPIRE it in a second command; busy: fail; else
// check-then-insert and DEL. The two commands are not atomic: a holder that dies between
// them leaves a lock without expiry.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
class RedisSetnxThenExpire : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    const std::string lock = "lock:" + open_id(r);
    const std::string value = attempt_token(r, w);
    if (env_.redis(w, redis::Command::set_nx_px(lock, value, sim::Duration{})).is_nil()) return ErrorKind::lock_busy;
    checkers::Hold hold = hold_redis(r, w, lock, value);
    env_.redis(w, redis::Command::pexpire(lock, millis("ttl_ms")));
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

Entry redis_setnx_then_expire() {
  return {{.name = "redis-setnx-then-expire",
           .description = "SETNX lock, then EXPIRE 10 s as a second command; check-then-insert; DEL",
           .source = "sources/000 and sources/003 (setnx + expire is not atomic: a crash between leaves the lock for good)",
           .risks = "a crash between SETNX and EXPIRE leaves a stuck lock; a pause past the TTL lets a second holder in",
           .params = {{"ttl_ms", 10000, "lock TTL set by EXPIRE"}},
           .needs = {.redis = true}},
          [](Env& env, const Params& p) { return std::make_unique<RedisSetnxThenExpire>(env, p); }};
}

}  // namespace models::strategies
