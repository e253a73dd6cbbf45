// redis-token-cas-unlock: SET lock NX PX with a unique value, retrying until an acquire
// timeout; check-then-insert; unlock with the compare-and-delete script. The class also
// serves lock-plus-unique-index, where a unique index stands behind the lock and a 1062
// means the key is already bound.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
class RedisTokenLock : public Strategy {
 public:
  RedisTokenLock(Env& env, Params params, bool duplicate_is_done)
      : Strategy(env, std::move(params)), duplicate_is_done_(duplicate_is_done) {}
  ErrorKind bind(const Request& r, Worker& w) override {
    // SET NX PX with our own value, retried until the acquire timeout; the Lua unlock.
    const RedisLockOptions token_lock{.ttl = millis("ttl_ms"),
                                      .wait = millis("acquire_timeout_ms"),
                                      .pause = millis("retry_ms"),
                                      .unlock = RedisUnlock::compare_and_delete};
    std::optional<LockGuard> lock = locks(r, w).redis("lock:" + open_id(r), token_lock);
    if (!lock) return ErrorKind::lock_busy;
    try {
      check_then_insert(r, w, *lock);
    } catch (const db::SqlError& e) {
      if (!duplicate_is_done_ || e.code() != db::Code::duplicate_key) throw;  // 1062: already bound, done
    }
    lock->unlock();
    return ErrorKind::none;
  }

 private:
  bool duplicate_is_done_;
};
}  // namespace

std::unique_ptr<Strategy> make_redis_token_lock(Env& env, const Params& params, bool duplicate_is_done) {
  return std::make_unique<RedisTokenLock>(env, params, duplicate_is_done);
}

Entry redis_token_cas_unlock() {
  return {{.name = "redis-token-cas-unlock",
           .description = "SET NX PX with a unique value, retry until a timeout; compare-and-delete unlock",
           .source = "sources/004 (Redis lock with unique id, acquire timeout, Lua unlock)",
           .risks = "no wrong unlocks; a pause past the TTL still lets a second holder in",
           .params = redis_lock_params(),
           .needs = {.redis = true}},
          [](Env& env, const Params& p) { return make_redis_token_lock(env, p, false); }};
}

}  // namespace models::strategies
