// insert-ignore-reselect: INSERT IGNORE, then SELECT the row whichever insert won.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
class InsertIgnoreReselect : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    db::Connection c = connect(r, w);
    sim::sleep_for(env_.work(w));  // building the row
    c.insert(kAccounts, {{"open_id", open_id(r)}, {"device", device(r)}}, db::OnDuplicate::ignore);
    if (c.select(kAccounts, {db::eq("open_id", open_id(r))}).empty()) return ErrorKind::internal;
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
