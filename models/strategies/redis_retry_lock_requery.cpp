// redis-retry-lock-requery: sources/001, scheme 6 (see redis_retry_lock.hpp).

#include "models/strategies/redis_retry_lock.hpp"

namespace models::strategies {

Entry redis_retry_lock_requery() {
  return {{.name = "redis-retry-lock-requery",
           .description = "the retry lock, and on failing to lock, SELECT once more before reporting an error",
           .source = "sources/001, scheme 6 (retry lock + re-query on lock failure)",
           .risks = "fewer errors than the retry lock; the same lease risk",
           .params = RedisRetryLock::params(6),
           .needs = {.redis = true}},
          [](Env& env, const Params& p) { return std::make_unique<RedisRetryLock>(env, p, true); }};
}

}  // namespace models::strategies
