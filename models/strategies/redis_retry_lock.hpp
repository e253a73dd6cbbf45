#pragma once
// The retry lock of sources/001, schemes 5 and 6: SELECT; if absent, RedisUtil.lockWithRetry
// (SET NX with a 60 s lease, up to 6 tries 5 ms apart); then SELECT again and INSERT if
// still absent, DEL in `finally`. Scheme 6 re-queries when the lock is not had: the
// other holder has most likely inserted by then.

#include "models/strategies/entries.hpp"

namespace models::strategies {

class RedisRetryLock : public Strategy {
 public:
  RedisRetryLock(Env& env, Params params, bool requery) : Strategy(env, std::move(params)), requery_(requery) {}

  static std::vector<ParamInfo> params() {
    return {{"ttl_ms", 60000, "lock TTL"}, {"tries", 6, "lock attempts"}, {"retry_ms", 5, "pause between attempts"}};
  }

 protected:
  ErrorKind bind(const Request& r, Worker& w) override {
    if (exists(r, w)) return ErrorKind::none;
    const std::string lock = "init:" + open_id(r);
    const std::string value = attempt_token(r, w);
    if (!lock_with_retry(w, lock, value)) {
      if (requery_ && exists(r, w)) return ErrorKind::none;
      return ErrorKind::lock_busy;
    }
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

 private:
  bool exists(const Request& r, Worker& w) {
    return !connect(r, w).select(kAccounts, {db::eq("open_id", open_id(r))}).empty();
  }
  bool lock_with_retry(Worker& w, const std::string& lock, const std::string& value) {
    const int tries = static_cast<int>(param("tries"));
    for (int i = 0; i < tries; ++i) {
      if (i > 0) sim::sleep_for(millis("retry_ms"));
      if (!env_.redis(w, redis::Command::set_nx_px(lock, value, millis("ttl_ms"))).is_nil()) return true;
    }
    return false;
  }
  bool requery_;
};

}  // namespace models::strategies
