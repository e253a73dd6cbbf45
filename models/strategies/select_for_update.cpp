// select-for-update: BEGIN; SELECT ... FOR UPDATE by OpenID; INSERT if absent; COMMIT.
// The row to lock does not exist yet, so REPEATABLE READ locks the gap.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
const db::sql::Prepared kFindForUpdate = db::sql::pinned(db::sql::prepare("SELECT id FROM t_account WHERE open_id = ? FOR UPDATE"));
const db::sql::Prepared kInsert = db::sql::pinned(db::sql::prepare("INSERT INTO t_account (open_id, device) VALUES (?, ?)"));

class SelectForUpdate : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    db::Connection c = connect(r, w);
    c.begin();
    if (c.execute(kFindForUpdate, {open_id(r)}).rows.empty()) c.execute(kInsert, {open_id(r), device(r)});
    c.commit();
    return ErrorKind::none;
  }
};
}  // namespace

Entry select_for_update() {
  return {{.name = "select-for-update",
           .description = "BEGIN; SELECT ... FOR UPDATE; INSERT if absent; COMMIT (plain index)",
           .source = "sources/004 (pessimistic lock: SELECT FOR UPDATE)",
           .risks = "gap locks of an absent key are shared: two callers both insert and one gets a deadlock (1213)",
           .params = {index_param(db::KeyIndex::non_unique)},
           .needs = {.key_index = db::KeyIndex::non_unique}},
          [](Env& env, const Params& p) { return std::make_unique<SelectForUpdate>(env, p); }};
}

}  // namespace models::strategies
