// redisson-watchdog: Redisson's RLock without a lease time. The lock is a hash owned by this
// attempt, taken with a 30 s lease (lockWatchdogTimeout) and renewed every 10 s by a watchdog
// on the holder's node while it holds; tryLock waits up to a limit. Unlock is the owner-
// checked script. (The client is LockClients::redisson.)

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
class RedissonWatchdog : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    std::optional<LockGuard> lock = locks(r, w).redisson(
        "lock:" + open_id(r), {.lease = millis("watchdog_ms"), .wait = millis("wait_ms"), .pause = millis("retry_ms")});
    if (!lock) return ErrorKind::lock_busy;
    check_then_insert(r, w, *lock);
    lock->unlock();
    return ErrorKind::none;
  }
};
}  // namespace

Entry redisson_watchdog() {
  return {{.name = "redisson-watchdog",
           .description = "Redisson RLock: 30 s lease renewed every 10 s by a watchdog; tryLock wait; owner-checked unlock",
           .source = "docs/models.md, Lock services (Redisson lockWatchdogTimeout 30 s, renewal every 10 s)",
           .risks = "a pause or partition longer than 30 s stops the watchdog too: a second holder gets in",
           .params = {{"watchdog_ms", 30000, "lockWatchdogTimeout: the lease each renewal sets"},
                      {"wait_ms", 1000, "tryLock wait time"},
                      {"retry_ms", 10, "pause between acquire attempts"}},
           .needs = {.redis = true}},
          [](Env& env, const Params& p) { return std::make_unique<RedissonWatchdog>(env, p); }};
}

}  // namespace models::strategies
