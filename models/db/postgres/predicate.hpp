#pragma once
// Serializable snapshot isolation (PostgreSQL's predicate.c): what each serializable
// transaction read and wrote, and the read-write dependencies between them. Internal to
// models/db/postgres (docs/sql.md, "PostgreSQL").

#include <cstdint>
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

}  // namespace models::db::postgres
