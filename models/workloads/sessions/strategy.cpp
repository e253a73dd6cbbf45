// The sessions workload's one entry: its design is the scenario's own script of statements
// (models/workloads/sessions/sessions.hpp), so there is nothing to choose and no parameter to set.

#include "models/strategies/strategy.hpp"

namespace models::strategies {

Entry sessions_script() {
  return {{.name = "sessions",
           .description = "the scenario's statements, session by session, in the script's order",
           .source = "the scenario file",
           .risks = "what the script shows: waits, deadlocks, duplicate rows"},
          {},
          {},
          "sessions"};
}

}  // namespace models::strategies
