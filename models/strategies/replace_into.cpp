// replace-into: REPLACE INTO t_account (open_id, device): with the unique index, an
// existing row is deleted and a new one inserted in its place.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
const db::sql::Prepared kReplace = db::sql::pinned(db::sql::prepare("REPLACE INTO t_account (open_id, device) VALUES (?, ?)"));

class ReplaceInto : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    db::Connection c = connect(r, w);
    sim::sleep_for(env_.work(w));  // building the row
    c.execute(kReplace, {open_id(r), device(r)});
    return ErrorKind::none;
  }
};
}  // namespace

Entry replace_into() {
  return {{.name = "replace-into",
           .description = "REPLACE INTO: delete the existing row, insert the new one (unique index)",
           .source = "sources/001 (REPLACE INTO as an idempotent insert)",
           .risks = "no duplicates; every retry deletes and re-inserts: a new id each time, other columns reset to defaults",
           .needs = {.key_index = db::KeyIndex::unique}},
          [](Env& env, const Params& p) { return std::make_unique<ReplaceInto>(env, p); }};
}

}  // namespace models::strategies
