#pragma once
// Account-bind's own checkers, beside those of every workload (models/checkers/): lost updates
// where the operation rebinds, and the other service's records of accounts never committed.
// They read t_account in the trial's database; duplicate rows of it are the generic
// duplicate_rows (the workload names t_account.open_id as its business key).

#include "models/checkers/checker.hpp"

namespace models::workloads::account_bind {

/// What account-bind's checkers read beside the trial.
struct BindTrial {
  /// The operation replaces an earlier binding (workload.operation rebind): the latest binding
  /// should stand, and lost_updates counts where it did not.
  bool rebinds = false;
};

const checkers::WorkloadCheckers<BindTrial>& account_checkers();

}  // namespace models::workloads::account_bind
