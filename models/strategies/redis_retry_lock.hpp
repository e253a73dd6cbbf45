#pragma once
// The Redis locks of sources/001, schemes 4 to 6: SELECT; if absent, take a 60 s Redis lock
// (scheme 4: one try; scheme 5: RedisUtil.lockWithRetry, up to 6 tries 5 ms apart), SELECT
// again and INSERT if still absent, DEL the lock in `finally`: double-checked locking, as
// the singleton pattern does it. Scheme 6 re-queries when the lock is not had: the other
// holder has most likely inserted by then.
//
// With `transactional`, the method runs as under Spring's @Transactional: one transaction
// from the first SELECT to after the `finally`. Under REPEATABLE READ the second SELECT
// then reads the snapshot of the first; under any level the lock is released before the
// insert commits.

#include "models/strategies/entries.hpp"

namespace models::strategies {

class RedisRetryLock : public Strategy {
 public:
  RedisRetryLock(Env& env, Params params, bool requery) : Strategy(env, std::move(params)), requery_(requery) {}

  static std::vector<ParamInfo> params(double tries) {
    return {{"ttl_ms", 60000, "lock TTL"},
            {"tries", tries, "lock attempts", ParamKind::count},
            {"retry_ms", 5, "pause between attempts"},
            {"transactional", 0, "1: the whole method in one transaction (@Transactional), committed after the unlock",
             ParamKind::flag}};
  }

 protected:
  static inline const db::sql::Prepared kFind = db::sql::prepare("SELECT id FROM t_account WHERE open_id = ?");

  ErrorKind bind(const Request& r, Worker& w) override {
    const bool transactional = param("transactional") != 0;
    std::optional<db::Connection> txn;
    if (transactional) {
      txn.emplace(connect(r, w));
      txn->begin();
    }
    auto exists = [&] {
      const std::vector<db::Value> args{open_id(r)};
      return !(txn ? txn->execute(kFind, args) : connect(r, w).execute(kFind, args)).rows.empty();
    };
    auto finish = [&](ErrorKind outcome) {
      if (txn) outcome == ErrorKind::none ? txn->commit() : txn->rollback();
      return outcome;
    };
    if (exists()) return finish(ErrorKind::none);
    // RedisUtil.lockWithRetry: SET NX PX, `tries` times; unlock: a plain DEL.
    std::optional<LockGuard> lock = locks(r, w).redis(
        "init:" + open_id(r), {.ttl = millis("ttl_ms"), .tries = static_cast<int>(param("tries")), .pause = millis("retry_ms")});
    if (!lock) return finish(requery_ && exists() ? ErrorKind::none : ErrorKind::lock_busy);
    txn ? check_then_insert(*txn, r, w, *lock) : check_then_insert(r, w, *lock);
    lock->unlock();
    return finish(ErrorKind::none);
  }

 private:
  bool requery_;
};

}  // namespace models::strategies
