#include "app/workload_kind.hpp"

namespace locksim {

const WorkloadKind& account_bind_workload();
const WorkloadKind& batch_scheduler_workload();
const WorkloadKind& sessions_workload();
const WorkloadKind& lua_workload();

bool WorkloadKind::claims(const json& workload) const {
  if (workload.is_null()) return false;
  // A workload written in Lua is named by its "script", not by a kind.
  return workload.is_object() && !workload.contains("script") && workload.value("kind", json(workload_kinds().front()->name())) == name();
}

const Keys<Scenario>& WorkloadKind::keys() const {
  static const Keys<Scenario> none;
  return none;
}

json WorkloadKind::exemplar() const { return {{"name", name()}, {"workload", {{"kind", name()}}}}; }

const std::vector<const WorkloadKind*>& workload_kinds() {
  static const std::vector<const WorkloadKind*> kinds = {&account_bind_workload(), &batch_scheduler_workload(), &sessions_workload(),
                                                         &lua_workload()};
  return kinds;
}

const WorkloadKind& workload_kind_of(const json& workload) {
  for (const WorkloadKind* k : workload_kinds())
    if (k->claims(workload) || (workload.is_string() && workload.get<std::string>() == k->name())) return *k;
  return *workload_kinds().front();
}

std::vector<std::string> workload_kind_names() {
  std::vector<std::string> names;
  for (const WorkloadKind* k : workload_kinds())
    if (k != &lua_workload()) names.emplace_back(k->name());
  return names;
}

}  // namespace locksim
