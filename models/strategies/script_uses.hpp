#pragma once
// What a strategy script uses, read from its source: the services the world must hold for it.

#include <string_view>

namespace models::strategies {

// What a script's source says it uses, besides what `uses` declares: what it calls (`locks.redis`,
// `redis.call`, `hold(`, ...) and the lock and fence tables its SQL names. Read by Lua's own lexical
// rules in one pass, linear in the text: comments do not count, and a call spelled inside a string
// is no call (a table's name inside one, in the SQL, is).
struct Uses {
  bool redis = false, redlock = false, zookeeper = false, etcd = false, consul = false, remote = false, lock_table = false, fences = false;
};

/// What `text` (a script's source) calls and names.
Uses uses_in(std::string_view text);

}  // namespace models::strategies
