#pragma once
// Serializable snapshot isolation (PostgreSQL's predicate.c): what each serializable
// transaction read and wrote, and the read-write dependencies between them. Internal to
// models/db/postgres (docs/sql.md, "PostgreSQL").

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "models/db/postgres/heap.hpp"

namespace models::db::postgres {

// What a serializable transaction read, for SSI: a row by its id or its key's value, or a
// whole table (a scan).
struct ReadKey {
  const Table* table = nullptr;
  enum class By { table, id, key } by = By::table;
  Value value{};
  auto operator<=>(const ReadKey&) const = default;
};

// A serializable transaction as SSI follows it, kept after its commit while a transaction
// concurrent with it may still run.
struct Serializable {
  std::uint64_t snapshot = 0;
  std::uint64_t commit = 0;  // 0 while running
  bool wrote = false;
  std::set<ReadKey> reads;
  std::vector<std::pair<const Table*, std::int64_t>> writes;  // rows written, with their keys below
  std::vector<Value> written_keys;
  std::set<Xid> in, out;  // read-write dependencies: in (reader -> this), out (this -> writer)
  bool doomed = false;    // a dangerous structure was found with this one to fail
};

const char* const kSerialization = "could not serialize access due to read/write dependencies among transactions";

bool concurrent(const Serializable& a, const Serializable& b);
bool covers(const ReadKey& r, const Table* table, std::int64_t id, const std::vector<Value>& keys);

// The serializable transactions SSI follows, by their ids: from their snapshot until no
// running one overlaps them.
class Ssi {
 public:
  /// Follows `xid` from the snapshot its first statement takes.
  void begin(Xid xid, std::uint64_t snapshot) { ssi_[xid].snapshot = snapshot; }
  bool follows(Xid xid) const { return ssi_.count(xid) != 0; }
  bool doomed(Xid xid) const { return ssi_.at(xid).doomed; }
  void committed(Xid xid, std::uint64_t commit) {
    if (const auto it = ssi_.find(xid); it != ssi_.end()) it->second.commit = commit;
  }
  /// An aborted transaction's reads and dependencies go with it.
  void forget(Xid xid) { ssi_.erase(xid); }
  /// What `reader` read, and what a concurrent one wrote there: a dependency. Throws Failure
  /// (40001) where `reader` is to fail.
  void read(Xid reader, ReadKey key);
  /// What `writer` wrote (row `id`, with the key `key`), and who read it concurrently.
  void write(Xid writer, const Table& t, std::int64_t id, const Value& key);
  /// Whether COMMIT of `xid` fails with 40001, `commits` being the commits so far.
  bool fails_commit(Xid xid, std::uint64_t commits);
  void prune();

 private:
  void depends(Xid reader, Xid writer, Xid self);
  bool dangerous(Xid pivot, std::optional<Xid> only_in = std::nullopt) const;
  bool would_endanger(Xid xid, std::uint64_t commits);

  std::map<Xid, Serializable> ssi_;  // the serializable transactions SSI follows
};

}  // namespace models::db::postgres
