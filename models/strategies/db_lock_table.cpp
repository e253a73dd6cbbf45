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
    const std::string lock = "bind:" + open_id(r);
    db::Connection c = connect(r, w);
    try {
      c.insert(kLocks, {{"lock_key", lock}, {"owner", attempt_token(r, w)}});
    } catch (const db::SqlError& e) {
      if (e.code() == db::Code::duplicate_key) return ErrorKind::lock_busy;
      throw;
    }
    then_unlock([&] { check_then_insert(c, r, w); },
                [&] { c.remove(kLocks, {db::eq("lock_key", lock), db::eq("owner", attempt_token(r, w))}); });
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
