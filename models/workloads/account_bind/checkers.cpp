#include "models/workloads/account_bind/checkers.hpp"

namespace models::workloads::account_bind {

// Each checker's file defines its accessor.
const checkers::WorkloadChecker<BindTrial>& lost_updates();
const checkers::WorkloadChecker<BindTrial>& orphaned_records();

const checkers::WorkloadCheckers<BindTrial>& account_checkers() {
  static const checkers::WorkloadCheckers<BindTrial> all = {&lost_updates(), &orphaned_records()};
  return all;
}

}  // namespace models::workloads::account_bind
