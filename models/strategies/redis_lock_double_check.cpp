// redis-lock-double-check: sources/001, scheme 4, one lock attempt (see redis_retry_lock.hpp).

#include "models/strategies/redis_retry_lock.hpp"

namespace models::strategies {

Entry redis_lock_double_check() {
  return {{.name = "redis-lock-double-check",
           .description = "SELECT; Redis lock 60 s (busy: fail); SELECT again, INSERT if absent; DEL",
           .source = "sources/001, scheme 4 (distributed lock with a double check)",
           .risks = "a critical section outliving the 60 s lease lets a second holder in; a busy lock is an error to the caller",
           .params = RedisRetryLock::params(1),
           .needs = {.redis = true}},
          [](Env& env, const Params& p) { return std::make_unique<RedisRetryLock>(env, p, false); }};
}

}  // namespace models::strategies
