// select-for-update: BEGIN; SELECT ... FOR UPDATE by OpenID; INSERT if absent; COMMIT.
// The row to lock does not exist yet, so REPEATABLE READ locks the gap.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
class SelectForUpdate : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    db::Connection c = connect(r, w);
    c.begin();
    if (c.select(kAccounts, {db::eq("open_id", open_id(r))}, db::ReadLock::update).empty())
      c.insert(kAccounts, {{"open_id", open_id(r)}, {"device", device(r)}});
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
