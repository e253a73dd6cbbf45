// redis-setnx-then-expire: SETNX lock, then EXPIRE it in a second command; busy: fail; else
// check-then-insert and DEL (the class is in redis_setnx_no_expiry.cpp). The two commands
// are not atomic: a holder that dies between them leaves a lock without expiry.

#include "models/strategies/entries.hpp"

namespace models::strategies {

Entry redis_setnx_then_expire() {
  return {{.name = "redis-setnx-then-expire",
           .description = "SETNX lock, then EXPIRE 10 s as a second command; check-then-insert; DEL",
           .source = "sources/000 and sources/003 (setnx + expire is not atomic: a crash between leaves the lock for good)",
           .risks = "a crash between SETNX and EXPIRE leaves a stuck lock; a pause past the TTL lets a second holder in",
           .params = {{"ttl_ms", 10000, "lock TTL set by EXPIRE"}},
           .needs = {.redis = true}},
          [](Env& env, const Params& p) { return make_redis_setnx(env, p, true); }};
}

}  // namespace models::strategies
