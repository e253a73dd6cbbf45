// check-then-insert: SELECT by OpenID, INSERT if absent, no unique index. The production
// code of sources/003 (docs/sources.md) section 2 before the fix.

#include "models/strategies/entries.hpp"

namespace models::strategies {

Entry check_then_insert() {
  return {{.name = "check-then-insert",
           .description = "SELECT by OpenID, INSERT if absent; no unique index",
           .source = "sources/003 section 2 (the production case)",
           .risks = "duplicates whenever two copies of a request overlap: retries of a timed-out client, queued requests",
           .params = {index_param(db::KeyIndex::none)}},
          [](Env& env, const Params& p) { return std::make_unique<PlainCheckThenInsert>(env, p); }};
}

}  // namespace models::strategies
