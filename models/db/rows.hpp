#pragma once
// What both database engines do alike with rows, whatever their locks and versions: a WHERE
// evaluated on a row, ORDER BY and LIMIT on the rows found, a new row's values over its
// table's defaults, an UPDATE's computed assignments, and what a stored row costs the memory
// budget. Internal to models/db (models/db/innodb/, models/db/postgres/).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "models/db/database.hpp"

namespace models::db::detail {

/// A statement's error, as an engine's statement functions throw it. Messages are MySQL's;
/// the PostgreSQL engine words its own.
struct Failure {
  Code code = Code::ok;
  std::string message{};
  std::vector<std::string> cycle{};  // a deadlock: the transactions on the cycle, the victim first
  std::int64_t undone_rows = 0;      // a deadlock: the row changes the rollback undid
};

/// Whether the row meets every `column op value` term (a NULL on either side meets none).
bool matches(RowRef v, const Where& where);
/// Whether the row matches the statement's whole WHERE: `where`'s terms and `filter`'s.
bool matches(RowRef v, const Statement& s);

/// ORDER BY and LIMIT on rows a statement found, in the order found: a stable sort, then the
/// offset and count. NULL sorts as `engine` sorts it: first on MariaDB, last on PostgreSQL
/// (ascending; the other way round descending).
void order_and_limit(const Statement& s, Engine engine, std::vector<Row>& rows);

/// SELECT COUNT(col)'s count: the rows whose `column` is not NULL (COUNT(*): every row).

/// A new row's values: the columns given over the table's defaults, checked as MySQL checks
/// them; an `id` given is returned in `explicit_id` rather than stored. NULL in a column that
/// may not hold it fails as check_nulls says.
Values row_values(const TableSchema& schema, Engine engine, const Values& given, std::optional<std::int64_t>& explicit_id);

/// Runs the statement's computed assignments on `row` in order, each seeing the ones before
/// (a single-table UPDATE); `inserted` is the row an INSERT tried, for VALUES(col) and
/// PostgreSQL's EXCLUDED.col. An assignment that computes NULL stores it: check_nulls then
/// tells whether the column may hold it.
/// A division by zero in an assignment fails as `engine` fails it (MariaDB's strict mode: 1365).
void assign(const Statement& s, Values& row, const Values* inserted, Engine engine);

/// Fails (Failure, Code::bad_null) where the row holds NULL in a column that may not hold it,
/// worded as `engine` words it: MariaDB's 1048 "Column 'c' cannot be null", PostgreSQL's 23502.
void check_nulls(const TableSchema& schema, Engine engine, const Values& row);

/// What a row must be to be stored, checked as MariaDB in its default strict mode and PostgreSQL
/// check it (docs/sql.md, "Column types"): check_nulls, then each column's type. A string given
/// to an integer column becomes the integer it spells, or fails (1366, 22P02); an integer past
/// its column's type fails (1264, 22003), and so does a string longer than its VARCHAR(n) or
/// CHAR(n) (1406, 22001).
void check_row(const TableSchema& schema, Engine engine, Values& row);

/// A SELECT of an aggregate, its answer to the rows its WHERE found: one row, its column named as
/// aggregate_name says; none past a LIMIT 0 or an OFFSET. COUNT counts the rows (COUNT(col): those
/// whose col is not NULL); MAX, MIN and SUM are NULL over no value, SUM past BIGINT's range fails
/// as 1690 (both servers' SUM is a decimal; the model's integers stop there). With GROUP BY: a
/// row a group (its columns and the aggregate; its columns alone for Aggregate::none, GROUP BY
/// alone or DISTINCT), kept where HAVING holds, in the group columns'
/// order or GROUP BY's ORDER BY, cut by its LIMIT.
void aggregate_rows(const Statement& s, Engine engine, std::vector<Row>& rows);
/// A SELECT without a table's one row: each of StatementExtra::computed's expressions over no
/// row, under its name. Throws Failure for an expression's error (1690 past BIGINT's range).
Row computed_row(const Statement& s);

/// Adds StatementExtra::computed's columns to each row found, each evaluated over the row.
/// Throws Failure for an expression's error.
void add_computed(const Statement& s, std::vector<Row>& rows);

/// The aggregate's column: its alias, or as `engine` names it: "COUNT(*)", "MAX(v)" on MariaDB (COUNT's name
/// whatever it counts); "count", "max" on PostgreSQL.
std::string aggregate_name(const StatementExtra& e, Engine engine);

/// The simulated time, where the statement runs in a simulation (a test may run it alone).
sim::Time now_if_running();

/// `s` with its clock slots (StatementExtra::clock_args) filled: the database's clock in whole
/// seconds at `statement` (the statement's start) or `transaction` (its transaction's), cut as
/// each reading is (MariaDB's UNIX_TIMESTAMP() drops the fraction, PostgreSQL's cast rounds it,
/// halves away from zero).
Statement with_clock(const Statement& s, sim::Time statement, sim::Time transaction);
/// Server time passes in the statement's process; nothing at all when there is none.
void spend(sim::Duration d);

/// Refuses (sim::UsageError) an UPDATE that would move a row in an index: one that sets `id` or
/// the key column, which neither engine models.
void check_unmoved(const TableSchema& schema, const Statement& s);

/// Throws Failure (bad_field, 1054 or 42703) for a statement that names `id` on a table that has
/// none (TableSchema::clustered_key: its rows' numbers are the model's, no column).
void refuse_id(const TableSchema& schema, Engine engine, const Statement& s);

/// What storing a row costs, as the memory budget counts it (Database::bytes_held): each version
/// (its place in the row's list, and its columns' block: RowValues::bytes), and the row's place
/// in its table with an index entry. An estimate of what the model holds, the same on every
/// machine, so the budget ends a trial at the same event everywhere. Each engine stores rows
/// its own way (docs/limits.md, "Memory budget").
struct RowCosts {
  std::uint64_t version;  // a version's place in its row's list
  std::uint64_t row;      // a row's place in its table, and its index entry
  std::uint64_t of_version(const RowValues& values) const { return version + values.bytes(); }
};
/// InnoDB's model: a version of 24 bytes (the first inline in its row); the rest of the row (16
/// bytes) and its slot in the table's B-tree, and its index entry's 24 bytes and slot, with the
/// B-trees' room to grow (models/db/innodb/types.hpp; `locksim_bench memory` measures the total).
constexpr RowCosts kInnoDbCosts{24, 72};
/// PostgreSQL's model: a tuple in its row's vector; the row's node in a std::map and its
/// index entry's node in a std::set.
constexpr RowCosts kPostgresCosts{32, 208};

/// Who wrote each row, as a table stores it: each origin (the text, the transaction, the
/// time) once for all the rows it wrote (a client's operation writes a row or two; a million
/// seeded rows share a few), a row holding its number. An origin goes with the last row that
/// holds it. What it keeps is counted in bytes(), as bytes_held counts rows.
class Origins {
 public:
  struct Stored {
    static constexpr std::uint32_t kNone = static_cast<std::uint32_t>(-1);
    std::uint32_t number = kNone;
  };
  /// Stores the row's origin in `slot`, in place of the one it held.
  void keep(Stored& slot, std::string who, std::uint64_t transaction, sim::Time inserted_at);
  /// The row that held `slot` is gone.
  void drop(Stored& slot);
  RowOrigin operator()(const Stored& stored) const {
    const auto& [who, transaction, inserted_at] = kept_[stored.number].at->first;
    return RowOrigin{who, transaction, inserted_at};
  }
  std::uint64_t bytes() const { return bytes_; }

 private:
  using Origin = std::tuple<std::string, std::uint64_t, sim::Time>;
  using Numbers = std::map<Origin, std::uint32_t, std::less<>>;
  struct Kept {
    Numbers::iterator at;
    std::uint64_t rows = 0;
  };
  static std::uint64_t origin_bytes(const std::string& who);
  Numbers numbers_;
  std::vector<Kept> kept_;             // by number
  std::vector<std::uint32_t> unused_;  // numbers whose origin went, to give again
  std::uint64_t bytes_ = 0;
};

}  // namespace models::db::detail
