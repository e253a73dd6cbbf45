#include "app/metrics.hpp"

#include <array>
#include <string_view>

namespace locksim {

bool is_metric(const std::string& name) {
  static constexpr std::array<std::string_view, 26> names = {
      "duplicate_rows",        "duplicated_keys",       "overlapping_holders", "overlap_ms",
      "lease_expiry_violations", "stale_writes_accepted", "stale_writes_rejected", "wrong_unlocks",
      "stuck_locks",           "lost_updates",          "duplicate_executions", "dropped_requests",
      "unfinished_runs",       "latency_ms.p50",        "latency_ms.p90",      "latency_ms.p99",
      "latency_ms.p99.9",      "latency_ms.max",        "db_ops_per_op",       "redis_ops_per_op",
      "operations",            "deadlocks",             "lock_wakeups",        "double_enqueues",
      "tasks_not_executed",    "orphaned_remote_records"};
  for (auto n : names)
    if (name == n) return true;
  return name.starts_with("errors.") && name.size() > 7;
}

std::string error_name(models::ErrorKind kind) {
  switch (kind) {
    case models::ErrorKind::duplicate_key: return "1062";
    case models::ErrorKind::deadlock: return "1213";
    case models::ErrorKind::lock_wait_timeout: return "1205";
    default: return models::to_string(kind);
  }
}

std::optional<models::ErrorKind> error_kind(const std::string& name) {
  for (auto kind : {models::ErrorKind::timeout, models::ErrorKind::rejected, models::ErrorKind::duplicate_key,
                    models::ErrorKind::deadlock, models::ErrorKind::lock_wait_timeout, models::ErrorKind::lock_busy,
                    models::ErrorKind::dropped, models::ErrorKind::fenced, models::ErrorKind::internal})
    if (error_name(kind) == name) return kind;
  return std::nullopt;
}

}  // namespace locksim
