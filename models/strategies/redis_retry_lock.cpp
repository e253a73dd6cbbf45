// redis-retry-lock: sources/001, scheme 5 (see redis_retry_lock.hpp).

#include "models/strategies/redis_retry_lock.hpp"

namespace models::strategies {

Entry redis_retry_lock() {
  return {{.name = "redis-retry-lock",
           .description = "SELECT; Redis lock 60 s, 6 tries 5 ms apart (else fail); SELECT, INSERT if absent; DEL",
           .source = "sources/001, scheme 5 (distributed retry lock)",
           .risks = "as the double check, with fewer lock failures and more latency; a lease outlived lets a second holder in",
           .params = RedisRetryLock::params(6),
           .needs = {.redis = true}},
          [](Env& env, const Params& p) { return std::make_unique<RedisRetryLock>(env, p, false); }};
}

}  // namespace models::strategies
