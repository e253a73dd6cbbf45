#pragma once
// A Redis keyspace: strings and hashes with per-key expiry, and the commands on it.
//
// Expiry is judged against the wall clock of the node that owns the keyspace, as Redis
// compares a key's absolute expire time with mstime() (docs/models.md, Lock services: a
// wall-clock jump expires keys early). Expired keys are gone for every command at once
// (Redis's lazy and active expiry together; expiry precision of 0-1 ms, docs/models.md,
// Figures the models take, is taken as exact).

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/redis/command.hpp"

namespace models::redis {

struct Value {
  bool is_hash = false;
  std::string text;                          // a string (counters are decimal strings)
  std::map<std::string, std::int64_t> hash;  // a hash of counters (the Redisson lock)
  sim::Time expires_at = sim::kNever;        // on the owning node's wall clock
  bool lock = false;  // taken as a lock (SET NX, Redisson's lock script); a counter or a plain SET is not
  bool operator==(const Value&) const = default;
};

/// The state of one key after a write: its value, or none if it was deleted.
using Change = std::pair<std::string, std::optional<Value>>;

class Keyspace {
 public:
  /// Runs `command` at wall-clock time `now`; a write appends the key's new state to `changes`.
  Reply execute(const Command& command, sim::Time now, std::vector<Change>* changes = nullptr);
  /// Applies a change recorded elsewhere (replication, the AOF on restart).
  void apply(const Change& change);
  /// The live value of `key` at `now`, if any.
  const Value* find(const std::string& key, sim::Time now) const;
  void clear() {
    data_.clear();
    bytes_ = 0;
  }
  const std::map<std::string, Value>& data() const { return data_; }
  /// The bytes its keys and values take, as the memory budget counts them (an estimate that
  /// does not depend on the machine: docs/limits.md, "Memory budget").
  std::uint64_t bytes_held() const { return bytes_; }

 private:
  Reply run(const Command& command, sim::Time now, std::vector<Change>* changes);
  Value* live(const std::string& key, sim::Time now);
  std::uint64_t bytes_of(const std::string& key) const;
  std::map<std::string, Value> data_;
  std::uint64_t bytes_ = 0;
};

}  // namespace models::redis
