// lock-plus-unique-index: a Redis lock to keep copies apart in the common case, and the
// unique index as the guarantee when the lock fails (expired, lost); 1062 means done.
// The handler is redis-token-cas-unlock's (redis_token_cas_unlock.cpp).

#include "models/strategies/entries.hpp"

namespace models::strategies {

Entry lock_plus_unique_index() {
  return {{.name = "lock-plus-unique-index",
           .description = "Redis token lock around check-then-insert, unique index behind it, 1062 taken as done",
           .source = "sources/003 section 3 (the index as the last line); docs/sql.md, Locks (a duplicate: 1062)",
           .risks = "no duplicates even when the lock fails; lock_busy errors under contention",
           .params = redis_lock_params(),
           .needs = {.key_index = db::KeyIndex::unique, .redis = true}},
          [](Env& env, const Params& p) { return make_redis_token_lock(env, p, true); }};
}

}  // namespace models::strategies
