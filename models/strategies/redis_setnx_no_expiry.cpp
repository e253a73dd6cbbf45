// redis-setnx-no-expiry: SETNX lock 1 with no expiry; busy: fail; else check-then-insert and
// DEL. A holder that dies before its DEL leaves the lock behind for good.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
class RedisSetnxNoExpiry : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    const std::string lock = "lock:" + open_id(r);
    const std::string value = attempt_token(r, w);
    if (env_.redis(w, redis::Command::set_nx_px(lock, value, sim::Duration{})).is_nil()) return ErrorKind::lock_busy;
    checkers::Hold hold = hold_redis(r, w, lock, value);
    then_unlock(
        [&] {
          db::Connection c = connect(r, w);
          check_then_insert(c, r, w, &hold);
        },
        [&] {
          hold.unlocking_blindly();
          hold.release();
          env_.redis(w, redis::Command::del(lock));
        });
    return ErrorKind::none;
  }
};
}  // namespace

Entry redis_setnx_no_expiry() {
  return {{.name = "redis-setnx-no-expiry",
           .description = "SETNX lock (no expiry); busy: fail; check-then-insert; DEL",
           .source = "sources/002 (SETNX lock on the batch scheduler, left stuck by a crash)",
           .risks = "a holder crashing before DEL leaves the lock stuck forever: every later request fails",
           .needs = {.redis = true}},
          [](Env& env, const Params& p) { return std::make_unique<RedisSetnxNoExpiry>(env, p); }};
}

}  // namespace models::strategies
