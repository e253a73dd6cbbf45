#include "app/fault_kind.hpp"

namespace locksim {

// Each kind's file defines its accessor.
const FaultKind& gc_pauses_kind();
const FaultKind& pauses_kind();
const FaultKind& crashes_kind();
const FaultKind& partitions_kind();
const FaultKind& clock_steps_kind();
const FaultKind& latency_spikes_kind();

const std::vector<const FaultKind*>& fault_kinds() {
  static const std::vector<const FaultKind*> all = {&gc_pauses_kind(),  &pauses_kind(),     &crashes_kind(),
                                                    &partitions_kind(), &clock_steps_kind(), &latency_spikes_kind()};
  return all;
}

}  // namespace locksim
