// The errors clients were left with: each logical operation that did not succeed, by the
// error of its last attempt.

#include "models/checkers/checker.hpp"

namespace models::checkers {

namespace {
class ClientErrors : public Checker {
 public:
  std::vector<MetricInfo> metrics() const override {
    return {{.name = "errors.<kind>", .unit = "operations",
             .meaning = "operations that ended with this error (database errors by the server's code: 1062, 1213, 1205, 1467 on MariaDB, "
                        "23505, 40P01, 55P03 on PostgreSQL; others by kind: "
                        "timeout, rejected, lock_busy, dropped, fenced, internal, session_expired; any other database error a strategy "
                        "let through by its code, 1690 or 40001; a strategy's own answer by its name, seat_taken)"}};
  }
  void check(const Trial& trial, Findings& out) const override {
    if (trial.operations == nullptr) return;
    const db::Engine engine = trial.database != nullptr ? trial.database->engine() : db::Engine::mariadb;
    for (const auto& op : *trial.operations)
      if (op.outcome != Outcome::ok) out.add("errors." + (op.last_code.empty() ? error_name(op.last_error, engine) : op.last_code), 1);
  }
};
}  // namespace

const Checker& client_errors() {
  static const ClientErrors checker;
  return checker;
}
}  // namespace models::checkers
