#pragma once
// A trial's transactions as the database ran them, for the anomaly checker
// (models/checkers/anomalies.cpp): every version each transaction wrote, every version each
// statement looked at, each statement's WHERE with the commit count it read at, and the order of
// the commits. Where Jepsen's Elle infers the versions from the values a client saw, the engines
// here say which version each read returned, so the dependency graph of the committed
// transactions is exact (docs/anomalies.md).
//
// The engines record into it when DatabaseConfig::record_history asks (the sessions and Lua
// workloads do); it keeps at most kMostEvents events, and says so when a trial went past them
// (the checker then checks nothing and counts anomalies.unchecked).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/db/database.hpp"
#include "models/db/row_values.hpp"

namespace models::db {

class History {
 public:
  using Txn = std::uint64_t;
  /// The transaction that wrote the rows seeded before the trial: committed before every other.
  static constexpr Txn kSeed = 0;
  static constexpr std::size_t kMostEvents = 50'000;

  /// A version of a row one transaction wrote: a new row, an update, or a delete.
  struct Write {
    Txn txn;
    std::uint32_t table;
    std::int64_t row;
    RowValues values;
    bool deleted;
    bool undone = false;  // rolled back: the statement's or the whole transaction's
  };
  /// A statement's reading of a table: its WHERE, and the commit count it read at (its
  /// snapshot; for a locking read or DML, the count as it started), which tells the version it
  /// took of each row it did not look at.
  struct Predicate {
    Txn txn;
    std::uint32_t table;
    std::shared_ptr<const Statement> where;
    std::uint64_t view;
    /// It reads the rows it returns and no more (rows_only): the rows it did not return say
    /// nothing of it.
    bool rows_only = false;
  };
  /// A version a statement looked at (`write`, in writes()), in its predicate's table.
  struct Read {
    Txn txn;
    std::uint32_t predicate;
    std::int64_t row;
    std::size_t write;
  };

  /// A transaction's name in explanations: its session ("s1"), and the engine's number.
  void began(Txn txn, const std::string& who);
  /// `txn` wrote a version of `row` (a seeded row: kSeed).
  void wrote(Txn txn, const std::string& table, std::int64_t row, const RowValues& values, bool deleted);
  /// The last version `txn` wrote of `row` that stands is undone (a rollback's undo).
  void undone(Txn txn, const std::string& table, std::int64_t row);
  /// `txn` committed; `commit` is the engine's commit count at it (what snapshots compare).
  void committed(Txn txn, std::uint64_t commit);
  /// A statement of `txn` reads `table` with `where` at commit count `view`; returns its number
  /// for the reads it makes (nullopt: past the bound, nothing to record).
  std::optional<std::uint32_t> predicate(Txn txn, const std::string& table, const Statement& where, std::uint64_t view);
  /// The statement numbered `predicate` looked at `row`'s version by `writer`, that writer's
  /// `ordinal`-th version of the row (from 0) among those standing that delete nothing.
  void read(std::uint32_t predicate, std::int64_t row, Txn writer, std::size_t ordinal);

  const std::vector<Write>& writes() const { return writes_; }
  const std::vector<Predicate>& predicates() const { return predicates_; }
  const std::vector<Read>& reads() const { return reads_; }
  const std::map<Txn, std::uint64_t>& commits() const { return commits_; }
  const std::string& table_name(std::uint32_t table) const { return tables_[table]; }
  /// Whether a statement's answer depends on the rows it returns alone, not on every row its
  /// WHERE matches: one with a LIMIT (the first rows found; a later row past them changes
  /// nothing) or SKIP LOCKED (a row another holds is left out, whatever it holds). An engine
  /// records such a statement's reads of the rows it returns.
  static bool rows_only(const Statement& s);
  /// Whether a version's columns meet the predicate's WHERE.
  static bool matches(const Predicate& predicate, const RowValues& values);
  /// The predicate's statement as SQL.
  static std::string text(const Predicate& predicate);
  /// Who ran `txn`: its session's name as `began` gave it (empty: not known, or the seeded rows).
  std::string who(Txn txn) const;
  /// "s1's transaction 7", or "the seeded rows".
  std::string name(Txn txn) const;
  /// Whether a trial's history went past kMostEvents: what it holds is not all that happened.
  bool overflowed() const { return overflowed_; }

 private:
  bool room();
  std::uint32_t table_number(const std::string& table);
  std::vector<Write> writes_;
  std::vector<Predicate> predicates_;
  std::vector<Read> reads_;
  std::map<Txn, std::uint64_t> commits_{{kSeed, 0}};
  std::map<Txn, std::string> who_;
  std::vector<std::string> tables_;
  /// Each row's writes that stand (not undone), in the order written: what a read's ordinal counts in.
  std::map<std::pair<std::uint32_t, std::int64_t>, std::vector<std::size_t>> standing_;
  bool overflowed_ = false;
};

}  // namespace models::db
