// upsert: INSERT ... ON DUPLICATE KEY UPDATE device = VALUES(device).

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
const db::sql::Prepared kUpsert = db::sql::pinned(db::sql::prepare(
    "INSERT INTO t_account (open_id, device) VALUES (?, ?) ON DUPLICATE KEY UPDATE device = VALUES(device)"));

class Upsert : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    db::Connection c = connect(r, w);
    sim::sleep_for(env_.work(w));  // building the row
    c.execute(kUpsert, {open_id(r), device(r)});
    return ErrorKind::none;
  }
};
}  // namespace

Entry upsert() {
  return {{.name = "upsert",
           .description = "INSERT ... ON DUPLICATE KEY UPDATE",
           .source = "sources/004 (ON DUPLICATE KEY UPDATE)",
           .risks = "no duplicates; a late retry overwrites a newer binding; concurrent upserts can deadlock (1213)",
           .needs = {.key_index = db::KeyIndex::unique}},
          [](Env& env, const Params& p) { return std::make_unique<Upsert>(env, p); }};
}

}  // namespace models::strategies
