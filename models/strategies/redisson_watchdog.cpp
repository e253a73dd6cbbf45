// redisson-watchdog: Redisson's RLock without a lease time. The lock is a hash owned by this
// attempt, taken with a 30 s lease (lockWatchdogTimeout) and renewed every 10 s by a watchdog
// on the holder's node while it holds; tryLock waits up to a limit. Unlock is the owner-
// checked script.

#include <memory>

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
class RedissonWatchdog : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    const std::string lock = "lock:" + open_id(r);
    const std::string owner = attempt_token(r, w);
    const sim::Duration lease = millis("watchdog_ms");
    const Clock& clock = w.server.node().clock();
    const sim::Time give_up = clock.monotonic() + millis("wait_ms");
    while (!env_.redis(w, redis::Command::hlock(redis::Op::hlock_acquire, lock, owner, lease)).is_nil()) {
      if (clock.monotonic() >= give_up) return ErrorKind::lock_busy;
      sim::sleep_for(millis("retry_ms"));
    }
    checkers::Hold hold = hold_redis(r, w, lock, owner);
    auto holding = std::make_shared<bool>(true);
    start_watchdog(w.server, lock, owner, lease, holding);
    then_unlock(
        [&] { check_then_insert(r, w, hold); },
        [&] {
          *holding = false;
          hold.release();
          env_.redis(w, redis::Command::hlock(redis::Op::hlock_release, lock, owner, lease));
        });
    return ErrorKind::none;
  }

 private:
  // Renews the lease every third of it while the holder holds; stops when the renewal
  // finds the lock no longer ours. It runs on the holder's node: a pause stops it too.
  void start_watchdog(AppServer& server, std::string lock, std::string owner, sim::Duration lease,
                      std::shared_ptr<bool> holding) {
    server.node().spawn(
        "redisson-watchdog " + lock,
        [this, &server, lock = std::move(lock), owner = std::move(owner), lease, holding = std::move(holding)] {
          for (;;) {
            sim::sleep_for(lease / 3);
            if (!*holding) return;
            try {
              if (env_.redis(server, redis::Command::hlock(redis::Op::hlock_renew, lock, owner, lease)).integer == 0) return;
            } catch (const sim::Timeout&) {
              // Redisson logs the failure and tries again at the next period
            }
          }
        },
        {.background = true});
  }
};
}  // namespace

Entry redisson_watchdog() {
  return {{.name = "redisson-watchdog",
           .description = "Redisson RLock: 30 s lease renewed every 10 s by a watchdog; tryLock wait; owner-checked unlock",
           .source = "DOMAIN.md, Lock services (Redisson lockWatchdogTimeout 30 s, renewal every 10 s)",
           .risks = "a pause or partition longer than 30 s stops the watchdog too: a second holder gets in",
           .params = {{"watchdog_ms", 30000, "lockWatchdogTimeout: the lease each renewal sets"},
                      {"wait_ms", 1000, "tryLock wait time"},
                      {"retry_ms", 10, "pause between acquire attempts"}},
           .needs = {.redis = true}},
          [](Env& env, const Params& p) { return std::make_unique<RedissonWatchdog>(env, p); }};
}

}  // namespace models::strategies
