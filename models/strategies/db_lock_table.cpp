// db-lock-table: a lock table in the database: INSERT the lock row (its unique key taken:
// busy), check-then-insert, DELETE the lock row in `finally`. No expiry: a holder that
// dies in between leaves the row.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
class DbLockTable : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    db::Connection c = connect(r, w);
    std::optional<LockGuard> lock = locks(r, w).table(c, "bind:" + open_id(r));
    if (!lock) return ErrorKind::lock_busy;
    check_then_insert(c, r, w, *lock);
    lock->unlock();
    return ErrorKind::none;
  }
};
}  // namespace

Entry db_lock_table() {
  return {{.name = "db-lock-table",
           .description = "INSERT a row into a lock table (unique key: busy), check-then-insert, DELETE it",
           .source = "sources/004 (database-table distributed lock)",
           .risks = "a holder crashing before its DELETE leaves the lock row for good (stuck lock); busy is an error to the caller",
           .needs = {.tables = {lock_table()}}},
          [](Env& env, const Params& p) { return std::make_unique<DbLockTable>(env, p); }};
}

}  // namespace models::strategies
