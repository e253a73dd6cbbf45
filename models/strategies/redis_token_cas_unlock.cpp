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
    const std::string lock = "lock:" + open_id(r);
    const std::optional<std::string> token = acquire_redis_lock(r, w, lock);
    if (!token) return ErrorKind::lock_busy;
    checkers::Hold hold = hold_redis(r, w, lock, *token);
    then_unlock(
        [&] {
          try {
            check_then_insert(r, w, hold);
          } catch (const db::SqlError& e) {
            if (!duplicate_is_done_ || e.code() != db::Code::duplicate_key) throw;  // 1062: already bound, done
          }
        },
        [&] { unlock_own(w, hold, lock, *token); });
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
