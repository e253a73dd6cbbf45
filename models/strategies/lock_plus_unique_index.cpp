// lock-plus-unique-index: a Redis lock to keep copies apart in the common case, and the
// unique index as the guarantee when the lock fails (expired, lost); 1062 means done.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
class LockPlusUniqueIndex : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    const std::string lock = "lock:" + open_id(r);
    const std::optional<std::string> token = acquire_redis_lock(r, w, lock);
    if (!token) return ErrorKind::lock_busy;
    checkers::Hold hold = hold_redis(r, w, lock, *token);
    then_unlock(
        [&] {
          try {
            check_then_insert(r, w, hold);
          } catch (const db::SqlError& e) {
            if (e.code() != db::Code::duplicate_key) throw;  // already bound: done
          }
        },
        [&] { unlock_own(w, hold, lock, *token); });
    return ErrorKind::none;
  }
};
}  // namespace

Entry lock_plus_unique_index() {
  return {{.name = "lock-plus-unique-index",
           .description = "Redis token lock around check-then-insert, unique index behind it, 1062 taken as done",
           .source = "sources/003 section 3 (the index as the last line); DOMAIN.md",
           .risks = "no duplicates even when the lock fails; lock_busy errors under contention",
           .params = redis_lock_params(),
           .needs = {.key_index = db::KeyIndex::unique, .redis = true}},
          [](Env& env, const Params& p) { return std::make_unique<LockPlusUniqueIndex>(env, p); }};
}

}  // namespace models::strategies
