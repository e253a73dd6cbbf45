// insert-ignore-reselect: INSERT IGNORE, then SELECT the row whichever insert won.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
const db::sql::Prepared kInsertIgnore = db::sql::pinned(db::sql::prepare("INSERT IGNORE INTO t_account (open_id, device) VALUES (?, ?)"));
const db::sql::Prepared kFind = db::sql::pinned(db::sql::prepare("SELECT id FROM t_account WHERE open_id = ?"));

class InsertIgnoreReselect : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    db::Connection c = connect(r, w);
    sim::sleep_for(env_.work(w));  // building the row
    c.execute(kInsertIgnore, {open_id(r), device(r)});
    if (c.execute(kFind, {open_id(r)}).rows.empty()) return ErrorKind::internal;
    return ErrorKind::none;
  }
};
}  // namespace

Entry insert_ignore_reselect() {
  return {{.name = "insert-ignore-reselect",
           .description = "INSERT IGNORE, then SELECT the row",
           .source = "sources/001; sources/004 (INSERT IGNORE)",
           .risks = "no duplicates; ignores other ignorable errors too; an auto-increment id is used up per call",
           .needs = {.key_index = db::KeyIndex::unique}},
          [](Env& env, const Params& p) { return std::make_unique<InsertIgnoreReselect>(env, p); }};
}

}  // namespace models::strategies
