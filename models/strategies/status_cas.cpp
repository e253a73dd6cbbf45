// status-cas: the row's status as the lock. INSERT IGNORE the account as unbound (status 0,
// unique index), then bind with UPDATE ... SET device = ?, status = 1 WHERE open_id = ? AND
// status = 0: exactly one caller moves it from unbound to bound; the others find it bound.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
const db::sql::Prepared kInsertUnbound = db::sql::pinned(db::sql::prepare("INSERT IGNORE INTO t_account (open_id) VALUES (?)"));
const db::sql::Prepared kBind =
    db::sql::pinned(db::sql::prepare("UPDATE t_account SET device = ?, status = 1 WHERE open_id = ? AND status = 0"));

class StatusCas : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    db::Connection c = connect(r, w);
    c.execute(kInsertUnbound, {open_id(r)});
    sim::sleep_for(env_.work(w));
    c.execute(kBind, {device(r), open_id(r)});
    return ErrorKind::none;  // bound now, by this call or an earlier one
  }
};
}  // namespace

Entry status_cas() {
  return {{.name = "status-cas",
           .description = "INSERT IGNORE the row as unbound; UPDATE ... SET device, status = 1 WHERE status = 0",
           .source = "sources/002 (update tasks set status=3 where status=2: the status CAS as an optimistic lock)",
           .risks = "no duplicates; the first binding wins and later ones report success without binding (lost updates)",
           .needs = {.key_index = db::KeyIndex::unique}},
          [](Env& env, const Params& p) { return std::make_unique<StatusCas>(env, p); }};
}

}  // namespace models::strategies
