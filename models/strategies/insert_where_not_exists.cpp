// insert-where-not-exists: INSERT INTO t_account SELECT ... WHERE NOT EXISTS (SELECT 1 FROM
// t_account WHERE open_id = ?), without a unique index.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
const db::sql::Prepared kInsertIfAbsent = db::sql::pinned(db::sql::prepare(
    "INSERT INTO t_account (open_id, device) SELECT ?, ? FROM DUAL "
    "WHERE NOT EXISTS (SELECT 1 FROM t_account WHERE open_id = ?)"));

class InsertWhereNotExists : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    db::Connection c = connect(r, w);
    sim::sleep_for(env_.work(w));  // building the row
    c.execute(kInsertIfAbsent, {open_id(r), device(r), open_id(r)});
    return ErrorKind::none;
  }
};
}  // namespace

Entry insert_where_not_exists() {
  return {{.name = "insert-where-not-exists",
           .description = "INSERT ... SELECT ... WHERE NOT EXISTS; plain index on open_id",
           .source = "sources/004 (INSERT ... SELECT WHERE NOT EXISTS)",
           .risks = "under REPEATABLE READ no duplicates but deadlocks when two arrive together (1467: the table's AUTO-INC "
                    "lock is in the cycle); under READ COMMITTED duplicates",
           .params = {index_param(db::KeyIndex::non_unique)},
           .needs = {.key_index = db::KeyIndex::non_unique}},
          [](Env& env, const Params& p) { return std::make_unique<InsertWhereNotExists>(env, p); }};
}

}  // namespace models::strategies
