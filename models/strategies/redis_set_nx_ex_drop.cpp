// redis-set-nx-ex-drop: the article's final fix. SET lock:<openid> 1 NX EX 3; if the lock is
// busy, drop the request; else check-then-insert and DEL the lock. (The value is this
// attempt's own, which the strategy never reads: it only lets the checkers tell holders apart.)

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
class RedisSetNxExDrop : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    std::optional<LockGuard> lock = locks(r, w).redis("lock:" + open_id(r), {.ttl = millis("ttl_ms")});
    if (!lock) return ErrorKind::dropped;  // another copy holds it: drop this one
    check_then_insert(r, w, *lock);
    lock->unlock();  // DEL
    return ErrorKind::none;
  }
};
}  // namespace

Entry redis_set_nx_ex_drop() {
  return {{.name = "redis-set-nx-ex-drop",
           .description = "SET NX EX 3 s; busy: drop the request; else check-then-insert, DEL",
           .source = "sources/003 section 4 (the fix adopted)",
           .risks = "a pause or slow insert past the TTL lets a second holder in; DEL can remove another's lock; dropped writes",
           .params = {{"ttl_ms", 3000, "lock TTL"}},
           .needs = {.redis = true}},
          [](Env& env, const Params& p) { return std::make_unique<RedisSetNxExDrop>(env, p); }};
}

}  // namespace models::strategies
