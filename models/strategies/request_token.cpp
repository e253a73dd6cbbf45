// request-token: an id generated before the operation (when the client opens the form, say)
// and sent with every submission of it. The handler is insert-catch-reselect on that id: a
// unique index on it, and a 1062 means this very operation was already done. What makes it
// work is where the key comes from: two clicks on one form carry the same id.

#include "models/strategies/entries.hpp"

namespace models::strategies {

Entry request_token() {
  return {{.name = "request-token",
           .description = "a pre-generated request id, unique-indexed, sent with every submission; 1062 returns the row",
           .source = "sources/001 (non-idempotent creates: pre-generated ids, article_prepare_record)",
           .risks = "none for duplicates of one operation; the id must be issued before the first submission",
           .needs = {.key_index = db::KeyIndex::unique}},
          make_insert_catch_reselect};
}

}  // namespace models::strategies
