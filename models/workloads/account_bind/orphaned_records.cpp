// Records another service keeps for accounts that do not exist: its call succeeded, the
// local transaction around it rolled back.

#include <set>

#include "models/workloads/account_bind/checkers.hpp"
#include "models/db/database.hpp"
#include "models/workloads/account_bind/accounts.hpp"

namespace models::workloads::account_bind {

using checkers::Findings;
using checkers::MetricInfo;
using checkers::Trial;

namespace {
class OrphanedRecords : public checkers::WorkloadChecker<BindTrial> {
 public:
  std::vector<MetricInfo> metrics() const override {
    return {{.name = "orphaned_remote_records", .unit = "records",
             .meaning = "the other service's records for accounts that were never committed", .finding = true}};
  }
  void check(const Trial& trial, const BindTrial&, Findings& out) const override {
    if (trial.remote == nullptr) return;
    std::set<std::int64_t> ids;
    trial.database->for_each_committed(kAccounts,
                                       [&](std::int64_t id, const db::RowValues&, const db::RowOrigin&) { ids.insert(id); });
    double orphans = 0;
    for (std::int64_t id : trial.remote->records()) orphans += ids.count(id) ? 0 : 1;
    out.set("orphaned_remote_records", orphans);
  }
};
}  // namespace

const checkers::WorkloadChecker<BindTrial>& orphaned_records() {
  static const OrphanedRecords checker;
  return checker;
}
}  // namespace models::workloads::account_bind
