#include "models/checkers/checker.hpp"

namespace models::checkers {

const char* to_string(MetricKind kind) {
  switch (kind) {
    case MetricKind::count: return "count";
    case MetricKind::duration: return "duration";
    case MetricKind::ratio: return "ratio";
  }
  return "?";
}

std::string error_name(ErrorKind kind, db::Engine engine) {
  const bool pg = engine == db::Engine::postgresql;
  switch (kind) {
    case ErrorKind::duplicate_key: return pg ? "23505" : "1062";
    case ErrorKind::deadlock: return pg ? "40P01" : "1213";
    case ErrorKind::lock_wait_timeout: return pg ? "55P03" : "1205";
    case ErrorKind::autoinc_failed: return "1467";  // MariaDB's only
    default: return to_string(kind);
  }
}

// Each checker's file defines its accessor.
const Checker& duplicate_rows();
const Checker& lock_holds();
const Checker& max_concurrent_holders();
const Checker& stuck_locks();
const Checker& deadlocks();
const Checker& dropped_requests();
const Checker& unfinished_runs();
const Checker& lock_wakeups();
const Checker& client_errors();
const Checker& script_errors();
const Checker& anomalies();

// The order of tables, and of `--property any`: the first finding listed is the one a
// search shrinks towards.
const std::vector<const Checker*>& registry() {
  static const std::vector<const Checker*> all = {
      &duplicate_rows(),   &lock_holds(),      &max_concurrent_holders(), &stuck_locks(),   &deadlocks(),
      &dropped_requests(), &unfinished_runs(), &lock_wakeups(),           &client_errors(), &script_errors(), &anomalies(),
  };
  return all;
}

Findings check_all(const Trial& trial) {
  Findings out;
  for (const Checker* c : registry()) c->check(trial, out);
  return out;
}

}  // namespace models::checkers
