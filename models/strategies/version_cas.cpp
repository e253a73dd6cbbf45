// version-cas: optimistic locking. Read the account; absent: insert it (unique index; 1062:
// read again); present: UPDATE ... SET device = ?, version = version + 1 WHERE id = ? AND
// version = ? and, when another writer got there first (0 rows), read and try again.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
class VersionCas : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    db::Connection c = connect(r, w);
    const db::Where mine{db::eq("open_id", open_id(r))};
    sim::sleep_for(env_.work(w));
    for (int attempt = 0; attempt < static_cast<int>(param("tries")); ++attempt) {
      const std::vector<db::Row> found = c.select(kAccounts, mine);
      if (found.empty()) {
        try {
          c.insert(kAccounts, {{"open_id", open_id(r)}, {"device", device(r)}, {"version", std::int64_t{1}}});
          return ErrorKind::none;
        } catch (const db::SqlError& e) {
          if (e.code() != db::Code::duplicate_key) throw;
          continue;  // someone inserted it: read it and update
        }
      }
      const db::Row& row = found.front();
      const auto version = std::get<std::int64_t>(row.values.at("version"));
      if (c.update(kAccounts, {{"device", device(r)}, {"version", version + 1}},
                   {db::eq("id", row.id), db::eq("version", version)}) == 1)
        return ErrorKind::none;
    }
    return ErrorKind::lock_busy;  // kept losing the race: tell the caller to try later
  }
};
}  // namespace

Entry version_cas() {
  return {{.name = "version-cas",
           .description = "optimistic lock: read the version; INSERT if absent, else UPDATE ... WHERE version = read; retry on conflict",
           .source = "sources/002 (a status CAS as an optimistic lock); the version-column form of it",
           .risks = "no duplicates, no lost updates; conflicts cost retries and, when they run out, errors",
           .params = {{"tries", 5, "read-and-CAS attempts before giving up", ParamKind::count}},
           .needs = {.key_index = db::KeyIndex::unique}},
          [](Env& env, const Params& p) { return std::make_unique<VersionCas>(env, p); }};
}

}  // namespace models::strategies
