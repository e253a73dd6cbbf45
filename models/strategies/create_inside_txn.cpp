// create-inside-txn: BEGIN; check-then-insert the account; call the wallet service for the
// new id; COMMIT. When the call times out, the transaction rolls back: the account is gone
// while the wallet service most likely made its record, and the retry creates another id.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
const db::sql::Prepared kFind = db::sql::pinned(db::sql::prepare("SELECT id FROM t_account WHERE open_id = ?"));
const db::sql::Prepared kInsert = db::sql::pinned(db::sql::prepare("INSERT INTO t_account (open_id, device) VALUES (?, ?)"));

class CreateInsideTxn : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    db::Connection c = connect(r, w);
    c.begin();
    if (!c.execute(kFind, {open_id(r)}).rows.empty()) {
      c.commit();
      return ErrorKind::none;
    }
    sim::sleep_for(env_.work(w));
    const std::int64_t id = c.execute(kInsert, {open_id(r), device(r)}).insert_id;
    link_remote_and_commit(c, w, id);
    return ErrorKind::none;
  }
};
}  // namespace

Entry create_inside_txn() {
  return {{.name = "create-inside-txn",
           .description = "BEGIN; check-then-insert; call another service with the new id; COMMIT (rollback on failure)",
           .source = "sources/001 (never generate data inside a transaction that calls other services)",
           .risks = "a timed-out call rolls the row back while the other service kept its record: orphans there, a new id on every retry",
           .params = {{"remote_timeout_ms", 100, "the RPC timeout of the call"}},
           .needs = {.key_index = db::KeyIndex::unique, .remote = true}},
          [](Env& env, const Params& p) { return std::make_unique<CreateInsideTxn>(env, p); }};
}

}  // namespace models::strategies
