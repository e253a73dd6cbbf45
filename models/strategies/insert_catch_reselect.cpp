// insert-catch-reselect: INSERT first; on 1062 the row exists, so read it back and succeed.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
const db::sql::Prepared kInsert = db::sql::pinned(db::sql::prepare("INSERT INTO t_account (open_id, device) VALUES (?, ?)"));
const db::sql::Prepared kFind = db::sql::pinned(db::sql::prepare("SELECT id FROM t_account WHERE open_id = ?"));

class InsertCatchReselect : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    db::Connection c = connect(r, w);
    sim::sleep_for(env_.work(w));  // building the row
    try {
      c.execute(kInsert, {open_id(r), device(r)});
    } catch (const db::SqlError& e) {
      if (e.code() != db::Code::duplicate_key) throw;
      if (c.execute(kFind, {open_id(r)}).rows.empty()) return ErrorKind::internal;  // "1062 but not found"
    }
    return ErrorKind::none;
  }
};
}  // namespace

std::unique_ptr<Strategy> make_insert_catch_reselect(Env& env, const Params& p) {
  return std::make_unique<InsertCatchReselect>(env, p);
}

Entry insert_catch_reselect() {
  return {{.name = "insert-catch-reselect",
           .description = "INSERT; on 1062 re-select the existing row and succeed",
           .source = "sources/001 (swallow the duplicate key error and re-query)",
           .risks = "no duplicates; inside a REPEATABLE READ transaction that already read, the re-select can miss the row",
           .needs = {.key_index = db::KeyIndex::unique}},
          make_insert_catch_reselect};
}

}  // namespace models::strategies
