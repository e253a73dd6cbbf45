// redis-setnx-no-expiry: SETNX lock with no expiry; busy: fail; else check-then-insert and
// DEL. A holder that dies before its DEL leaves the lock behind for good. The class also
// serves redis-setnx-then-expire, which sends EXPIRE as a second command.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
class RedisSetnx : public Strategy {
 public:
  RedisSetnx(Env& env, Params params, bool then_expire) : Strategy(env, std::move(params)), then_expire_(then_expire) {}
  ErrorKind bind(const Request& r, Worker& w) override {
    RedisLockOptions setnx;  // no expiry
    if (then_expire_) setnx = {.ttl = millis("ttl_ms"), .expire_after = true};
    std::optional<LockGuard> lock = locks(r, w).redis("lock:" + open_id(r), setnx);
    if (!lock) return ErrorKind::lock_busy;
    check_then_insert(r, w, *lock);
    lock->unlock();  // DEL
    return ErrorKind::none;
  }

 private:
  bool then_expire_;
};
}  // namespace

std::unique_ptr<Strategy> make_redis_setnx(Env& env, const Params& params, bool then_expire) {
  return std::make_unique<RedisSetnx>(env, params, then_expire);
}

Entry redis_setnx_no_expiry() {
  return {{.name = "redis-setnx-no-expiry",
           .description = "SETNX lock (no expiry); busy: fail; check-then-insert; DEL",
           .source = "sources/002 (SETNX lock on the batch scheduler, left stuck by a crash)",
           .risks = "a holder crashing before DEL leaves the lock stuck forever: every later request fails",
           .needs = {.redis = true}},
          [](Env& env, const Params& p) { return make_redis_setnx(env, p, false); }};
}

}  // namespace models::strategies
