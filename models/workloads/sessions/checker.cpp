// The sessions workload's outcomes: each step's result (its error, affected rows, insert
// id, rows returned, warnings, whether it waited), the rows each table holds at the end, and
// the errors by number. (Duplicates among the rows: the generic duplicate_rows, by each table's
// indexed column.)

#include "models/workloads/sessions/checker.hpp"

#include <fmt/format.h>

namespace models::sessions {

using checkers::Aggregate;
using checkers::Findings;
using checkers::MetricInfo;
using checkers::Trial;

namespace {
class SessionSteps : public checkers::WorkloadChecker<SessionsTrial> {
 public:
  std::vector<MetricInfo> metrics() const override {
    return {{.name = "steps.<n>.<field>", .unit = "value",
             .meaning = "sessions workload: step n's error (its MySQL number, 0 for none; on PostgreSQL the number of the "
                        "same error in MySQL's terms, its SQLSTATE counted in errors.<code>), affected, insert_id, rows "
                        "(returned), value (its first row's first column, where that is an integer: GET_LOCK's 1 or 0), "
                        "warnings, waited (1 if it waited for a lock) or done (0 if it never finished); "
                        "`expect` holds when it holds in every trial",
             .aggregate = Aggregate::each},
            {.name = "rows.<table>", .unit = "rows",
             .meaning = "sessions workload: committed rows of the table at the end; `expect` holds when it holds in every "
                        "trial",
             .aggregate = Aggregate::each}};
  }
  void check(const Trial& trial, const SessionsTrial& sessions, Findings& out) const override {
    const bool postgres = trial.database != nullptr && trial.database->engine() == db::Engine::postgresql;
    for (const auto& r : sessions.steps) {
      if (!r.was_issued) continue;
      const std::string at = fmt::format("steps.{}.", r.step);
      out.set(at + "done", r.done ? 1 : 0);
      if (!r.done) continue;
      const db::Result& res = r.result;
      out.set(at + "error", static_cast<double>(static_cast<int>(res.code)));
      out.set(at + "affected", static_cast<double>(res.affected));
      out.set(at + "insert_id", static_cast<double>(res.insert_id));
      out.set(at + "rows", static_cast<double>(res.rows.size()));
      if (!r.rows.empty() && !r.rows.front().empty())
        if (const auto* n = std::get_if<std::int64_t>(&r.rows.front().front())) out.set(at + "value", static_cast<double>(*n));
      out.set(at + "warnings", res.warnings);
      out.set(at + "waited", r.waited() ? 1 : 0);
      // errors.1062 on MariaDB; errors.23505 (the SQLSTATE) on PostgreSQL.
      if (!res.ok())
        out.add("errors." + (postgres ? std::string(db::sqlstate(res.code)) : std::to_string(static_cast<int>(res.code))), 1);
    }
    for (const auto& t : sessions.tables) out.set("rows." + t.table, static_cast<double>(t.rows.size()));
  }
};
}  // namespace

const checkers::WorkloadCheckers<SessionsTrial>& sessions_checkers() {
  static const SessionSteps steps;
  static const checkers::WorkloadCheckers<SessionsTrial> all = {&steps};
  return all;
}
}  // namespace models::sessions
