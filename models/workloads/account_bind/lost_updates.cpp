// Lost updates: a key whose final value came from an operation that was already
// acknowledged when another binding of the key, acknowledged too, began: that later
// binding was dropped. (Bindings that overlapped in time may end in either order.) Only where
// the operation rebinds: an insert-if-absent design is right to keep the first binding.

#include <set>

#include "models/workloads/account_bind/checkers.hpp"
#include "models/workloads/account_bind/accounts.hpp"

namespace models::workloads::account_bind {

using checkers::Findings;
using checkers::MetricInfo;
using checkers::Trial;

namespace {
class LostUpdates : public checkers::WorkloadChecker<BindTrial> {
 public:
  std::vector<MetricInfo> metrics() const override {
    return {{.name = "lost_updates", .unit = "keys",
             .meaning = "keys whose final value predates a later acknowledged write of the same key (account-bind with "
                        "workload.operation rebind: the latest binding should stand)",
             .finding = true}};
  }
  void check(const Trial& trial, const BindTrial& bind, Findings& out) const override {
    if (!bind.rebinds || trial.operations == nullptr) return;
    std::map<std::string, std::string> final_device;  // the latest row of each key
    trial.database->for_each_committed(kAccounts, [&](std::int64_t, const db::RowValues& values, const db::RowOrigin&) {
      final_device[std::get<std::string>(values.at("open_id"))] = std::get<std::string>(values.at("device"));
    });
    // The operations that write a value: a double click's copies write its first submission's.
    std::map<std::string, const OperationRecord*> by_device;
    for (const auto& op : *trial.operations) by_device.try_emplace(device_of(op.value), &op);
    std::set<std::string> lost_keys;
    for (const auto& op : *trial.operations) {
      if (op.outcome != Outcome::ok) continue;
      auto fin = final_device.find(open_id_of(op.key));
      if (fin == final_device.end() || fin->second == device_of(op.value)) continue;  // its value stands
      auto writer = by_device.find(fin->second);
      if (writer != by_device.end() && op.start > writer->second->end) lost_keys.insert(fin->first);
    }
    out.set("lost_updates", static_cast<double>(lost_keys.size()));
  }
};
}  // namespace

const checkers::WorkloadChecker<BindTrial>& lost_updates() {
  static const LostUpdates checker;
  return checker;
}
}  // namespace models::workloads::account_bind
