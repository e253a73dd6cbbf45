// A rollout's progress, phase by phase: the duplicates its traffic created and those left in
// the table, what users saw, the DDL statements and what the cleanup job did.

#include "models/workloads/rollout/log.hpp"

#include <algorithm>
#include <map>

namespace models::rollout {

using checkers::Aggregate;
using checkers::Findings;
using checkers::MetricInfo;
using checkers::MetricKind;
using checkers::Trial;


std::size_t RolloutLog::phase_of(sim::Time t) const {
  const auto after = std::upper_bound(boundaries.begin(), boundaries.end(), t);
  const auto k = static_cast<std::size_t>(after - boundaries.begin());
  return std::clamp<std::size_t>(k, 1, std::max<std::size_t>(phases(), 1));
}

namespace {
class Phases : public checkers::WorkloadChecker<RolloutLog> {
 public:
  std::vector<MetricInfo> metrics() const override {
    return {{.name = "duplicates_created", .unit = "rows",
             .meaning = "rows the trial's traffic inserted beyond the first of their key, cleaned up since or not",
             .finding = true},
            {.name = "created_in_phase.<n>", .unit = "rows", .meaning = "duplicates_created inserted in phase n of the rollout"},
            {.name = "left_after_phase.<n>", .unit = "rows",
             .meaning = "duplicate rows in the table at the end of phase n of the rollout (left_after_phase.0: at its start)", .per_operation = false},
            {.name = "left_at_sample.<k>", .unit = "rows",
             .meaning = "duplicate rows in the table k thirtieths of the way through the rollout's plan (the picture's lines)",
             .per_operation = false},
            {.name = "operations_in_phase.<n>", .unit = "operations", .meaning = "logical operations begun in phase n", .per_operation = false},
            {.name = "failed_in_phase.<n>", .unit = "operations",
             .meaning = "logical operations begun in phase n that ended failed or gave up"},
            {.name = "p99_ms_in_phase.<n>", .kind = MetricKind::duration, .unit = "ms",
             .meaning = "99th percentile latency of the successful operations begun in phase n (the worst trial's)",
             .aggregate = Aggregate::max},
            {.name = "ddl_statements", .unit = "statements", .meaning = "DDL statements the rollout ran, retries included", .per_operation = false},
            {.name = "ddl_failed", .unit = "statements", .meaning = "DDL statements that failed (1062 on a duplicate, mostly)", .per_operation = false},
            {.name = "unique_index", .unit = "trials", .meaning = "the rollout ended with a unique index on the key column", .per_operation = false},
            {.name = "clean_and_indexed_ms", .kind = MetricKind::duration, .unit = "ms",
             .meaning = "from the start until a unique index stood on the key column (so the table was clean); the "
                        "plan's end in a trial where none did"},
            {.name = "cleanup_runs", .unit = "runs", .meaning = "runs of the rollout's cleanup job", .per_operation = false},
            {.name = "cleanup_deleted_rows", .unit = "rows", .meaning = "duplicate rows the cleanup job deleted", .per_operation = false}};
  }

  void check(const Trial& trial, const RolloutLog& log, Findings& out) const override {
    const std::size_t phases = log.phases();
    // Each key's rows ever, in id order: the first stays the original; a later one the
    // traffic inserted is a duplicate it created, counted in the phase it was inserted in.
    std::map<db::Value, std::vector<const db::RowRecord*>> by_key;
    for (const auto& r : log.rows_ever) by_key[r.row.values.at(log.key_column)].push_back(&r);
    std::vector<double> created(phases + 1, 0);
    double total = 0;
    for (const auto& [key, rows] : by_key)
      for (std::size_t i = 1; i < rows.size(); ++i)
        if (rows[i]->origin.transaction != 0) {  // seeded rows have none
          ++created[log.phase_of(rows[i]->origin.inserted_at)];
          ++total;
        }
    out.set("duplicates_created", total);
    std::vector<double> ops(phases + 1, 0), failed(phases + 1, 0);
    std::vector<std::vector<double>> ok_ms(phases + 1);
    if (trial.operations != nullptr)
      for (const auto& op : *trial.operations) {
        const std::size_t k = log.phase_of(op.start);
        ++ops[k];
        if (op.outcome != Outcome::ok)
          ++failed[k];
        else
          ok_ms[k].push_back(std::chrono::duration<double, std::milli>(op.latency()).count());
      }
    for (std::size_t k = 1; k <= phases; ++k) {
      const std::string n = std::to_string(k);
      out.set("created_in_phase." + n, created[k]);
      out.set("operations_in_phase." + n, ops[k]);
      out.set("failed_in_phase." + n, failed[k]);
      std::vector<double>& ms = ok_ms[k];
      if (!ms.empty()) {
        const std::size_t at = std::min(ms.size() - 1, static_cast<std::size_t>(0.99 * static_cast<double>(ms.size())));
        std::nth_element(ms.begin(), ms.begin() + static_cast<std::ptrdiff_t>(at), ms.end());
        out.set("p99_ms_in_phase." + n, ms[at]);
      }
    }
    for (std::size_t k = 0; k < log.duplicates_at.size(); ++k)
      out.set("left_after_phase." + std::to_string(k), static_cast<double>(log.duplicates_at[k]));
    for (std::size_t k = 0; k < log.duplicates_sampled.size(); ++k)
      out.set("left_at_sample." + std::to_string(k), static_cast<double>(log.duplicates_sampled[k]));
    double failed_ddl = 0;
    for (const auto& d : log.ddl) failed_ddl += d.code == db::Code::ok ? 0 : 1;
    out.set("ddl_statements", static_cast<double>(log.ddl.size()));
    out.set("ddl_failed", failed_ddl);
    out.set("unique_index", log.indexed ? 1 : 0);
    const sim::Time end = log.indexed ? log.indexed_at : log.boundaries.empty() ? trial.end : log.boundaries.back();
    out.set("clean_and_indexed_ms", std::chrono::duration<double, std::milli>(end.time_since_epoch()).count());
    out.set("cleanup_runs", static_cast<double>(log.cleanup_runs));
    out.set("cleanup_deleted_rows", static_cast<double>(log.cleanup_deleted));
  }
};
}  // namespace

const checkers::WorkloadCheckers<RolloutLog>& rollout_checkers() {
  static const Phases phases;
  static const checkers::WorkloadCheckers<RolloutLog> all = {&phases};
  return all;
}
}  // namespace models::rollout
