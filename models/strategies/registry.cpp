#include <algorithm>

#include "models/strategies/entries.hpp"

namespace models::strategies {

// The strategies a workload keeps in its own folder: the batch scheduler's designs
// (models/workloads/batch/strategies.cpp) and the sessions workload's script
// (models/workloads/sessions/strategy.cpp). A new workload's are declared here, beside their place
// in the list.
Entry publish_then_mark();
Entry mark_then_publish();
Entry cas_mark_then_publish();
Entry sessions_script();

const std::vector<Entry>& registry() {
  static const std::vector<Entry> all = {
      check_then_insert(),     unique_index(),          insert_catch_reselect(),  insert_ignore_reselect(),
      upsert(),                replace_into(),          insert_where_not_exists(), select_for_update(),
      status_cas(),            version_cas(),           db_lock_table(),          local_mutex(),
      redis_setnx_no_expiry(), redis_setnx_then_expire(), redis_set_nx_ex_drop(), redis_token_cas_unlock(),
      redis_lock_double_check(), redis_retry_lock(), redis_retry_lock_requery(), redisson_watchdog(),
      redlock(),               zookeeper_recipe(),      zookeeper_herd(),         fencing_token(),
      etcd_lease_revision(),   request_token(),         rate_limit(),             lock_plus_unique_index(),
      create_inside_txn(),     create_then_txn(),
      publish_then_mark(),     mark_then_publish(),     cas_mark_then_publish(),
      sessions_script(),       consul_lock(),           consul_lock_index(),      zookeeper_recipe_checked(),
  };
  return all;
}

Needs needs(const Entry& entry, const Params& params) {
  Needs out = entry.info.needs;
  const bool has_index = std::any_of(entry.info.params.begin(), entry.info.params.end(),
                                     [](const ParamInfo& p) { return p.kind == ParamKind::index; });
  if (auto it = params.find("index"); has_index && it != params.end())
    out.key_index = static_cast<db::KeyIndex>(static_cast<int>(it->second));
  return out;
}

const Entry* find(const std::string& name) {
  for (const Entry& e : registry())
    if (e.info.name == name) return &e;
  return nullptr;
}

}  // namespace models::strategies
