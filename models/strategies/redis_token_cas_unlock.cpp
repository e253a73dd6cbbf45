// redis-token-cas-unlock: SET lock NX PX with a unique value, retrying until an acquire
// timeout; check-then-insert; unlock with the compare-and-delete script.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
class RedisTokenCasUnlock : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    const std::string lock = "lock:" + open_id(r);
    const std::optional<std::string> token = acquire_redis_lock(r, w, lock);
    if (!token) return ErrorKind::lock_busy;
    checkers::Hold hold = hold_redis(r, w, lock, *token);
    then_unlock([&] { check_then_insert(r, w, hold); },
                [&] { unlock_own(w, hold, lock, *token); });
    return ErrorKind::none;
  }
};
}  // namespace

Entry redis_token_cas_unlock() {
  return {{.name = "redis-token-cas-unlock",
           .description = "SET NX PX with a unique value, retry until a timeout; compare-and-delete unlock",
           .source = "sources/004 (Redis lock with unique id, acquire timeout, Lua unlock)",
           .risks = "no wrong unlocks; a pause past the TTL still lets a second holder in",
           .params = redis_lock_params(),
           .needs = {.redis = true}},
          [](Env& env, const Params& p) { return std::make_unique<RedisTokenCasUnlock>(env, p); }};
}

}  // namespace models::strategies
