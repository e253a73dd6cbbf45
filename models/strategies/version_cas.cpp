// version-cas: optimistic locking. Read the account; absent: insert it (unique index; 1062:
// read again); present: UPDATE ... SET device = ?, version = <read + 1> WHERE id = ? AND
// version = <read> and, when another writer got there first (0 rows), read and try again.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
const db::sql::Prepared kFind = db::sql::pinned(db::sql::prepare("SELECT id, version FROM t_account WHERE open_id = ?"));
const db::sql::Prepared kInsert = db::sql::pinned(db::sql::prepare("INSERT INTO t_account (open_id, device, version) VALUES (?, ?, 1)"));
const db::sql::Prepared kUpdateIfVersion =
    db::sql::pinned(db::sql::prepare("UPDATE t_account SET device = ?, version = ? WHERE id = ? AND version = ?"));

class VersionCas : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    db::Connection c = connect(r, w);
    sim::sleep_for(env_.work(w));
    for (int attempt = 0; attempt < static_cast<int>(param("tries")); ++attempt) {
      const std::vector<db::Row> found = c.execute(kFind, {open_id(r)}).rows;
      if (found.empty()) {
        try {
          c.execute(kInsert, {open_id(r), device(r)});
          return ErrorKind::none;
        } catch (const db::SqlError& e) {
          if (e.code() != db::Code::duplicate_key) throw;
          continue;  // someone inserted it: read it and update
        }
      }
      const db::Row& row = found.front();
      const auto version = std::get<std::int64_t>(row.values.at("version"));
      if (c.execute(kUpdateIfVersion, {device(r), version + 1, row.id, version}).affected == 1)
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
