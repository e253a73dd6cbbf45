// unique-index: the same check-then-insert with a unique index on open_id; the loser of a
// race gets 1062, which reaches the client as an error.

#include "models/strategies/entries.hpp"

namespace models::strategies {

Entry unique_index() {
  return {{.name = "unique-index",
           .description = "check-then-insert with a unique index on open_id; 1062 surfaces",
           .source = "sources/003 section 3; sources/001 (check then insert with a unique index)",
           .risks = "no duplicates; the loser of a race sees a 1062 error",
           .needs = {.key_index = db::KeyIndex::unique}},
          [](Env& env, const Params& p) { return std::make_unique<PlainCheckThenInsert>(env, p); }};
}

}  // namespace models::strategies
