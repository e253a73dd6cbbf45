// create-then-txn: create (or find) the account first, committed on its own; then, in a
// transaction, call the wallet service with its id and record the link. A failed call
// leaves the account in place; the retry finds it and calls again with the same id, which
// the other service already knows.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
const db::sql::Prepared kFind = db::sql::pinned(db::sql::prepare("SELECT id FROM t_account WHERE open_id = ?"));
const db::sql::Prepared kInsert = db::sql::pinned(db::sql::prepare("INSERT INTO t_account (open_id, device) VALUES (?, ?)"));

class CreateThenTxn : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    db::Connection c = connect(r, w);
    std::vector<db::Row> found = c.execute(kFind, {open_id(r)}).rows;
    std::int64_t id = 0;
    if (found.empty()) {
      sim::sleep_for(env_.work(w));
      try {
        id = c.execute(kInsert, {open_id(r), device(r)}).insert_id;
      } catch (const db::SqlError& e) {
        if (e.code() != db::Code::duplicate_key) throw;
        found = c.execute(kFind, {open_id(r)}).rows;
        if (found.empty()) return ErrorKind::internal;
      }
    }
    if (id == 0) id = found.front().id;
    c.begin();
    link_remote_and_commit(c, w, id);
    return ErrorKind::none;
  }
};
}  // namespace

Entry create_then_txn() {
  return {{.name = "create-then-txn",
           .description = "create (or find) the row first; then BEGIN; call another service with its id; record the link; COMMIT",
           .source = "sources/001 (create the data first, then enter the transaction)",
           .risks = "a failed call leaves the row unlinked until the retry; the other service must accept the same id twice",
           .params = {{"remote_timeout_ms", 100, "the RPC timeout of the call"}},
           .needs = {.key_index = db::KeyIndex::unique, .remote = true}},
          [](Env& env, const Params& p) { return std::make_unique<CreateThenTxn>(env, p); }};
}

}  // namespace models::strategies
