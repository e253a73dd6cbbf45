#pragma once
// An InnoDB-like database: the storage, transactions and locks, without the network.
//
// Imitates InnoDB as its manual documents it and as MariaDB 10.11 runs the conformance
// scripts (docs/sql.md, docs/conformance.md), closely enough that each strategy in the source
// articles is exactly as safe here as there:
// - a table has an auto-increment primary key `id` (values taken by failed or rolled-back
//   inserts are lost: gaps; an INSERT or a seeded row may give its own id, which moves the
//   counter past it), an optional key index on business-key columns (unique or not), further
//   secondary indexes (TableSchema::indexes, searched, checked for duplicates and locked the
//   same way; the optimizer's choice among them by the rows each would read) and other
//   columns with defaults; or, in place of `id`, a primary key on other columns
//   (TableSchema::clustered_key), which is then the clustered index: the rows' order, the
//   records locked, and the tail of every further index's entries;
// - multi-version rows: a plain SELECT reads a snapshot (taken per statement under READ
//   COMMITTED, at the first read under REPEATABLE READ); locking reads and DML read the
//   latest committed version;
// - index entries: the primary index's are ids, a secondary index's are (key, id) pairs
//   ordered by both, so a new row's entry sorts by its new id among equal keys;
// - locks on those entries: record locks (S, X), gap locks on the open range between two
//   neighbouring entries (or up to the supremum; compatible with each other, blocking
//   inserts), next-key locks (a record and the gap below it), insert-intention locks at a
//   new entry's position; a unique search that finds its row locks the record only, other
//   searches lock each entry they visit next-key and the gap after the last; a duplicate
//   check takes S on the duplicate (X for ON DUPLICATE KEY UPDATE and REPLACE), next-key
//   on a unique secondary index under REPEATABLE READ and the record only on the primary
//   key, and waits for an uncommitted writer; locks of a rolled-back entry pass to the gap
//   (which is how the manual's three-session example deadlocks);
// - a FIFO lock-wait queue, deadlock detection on the wait-for graph as MariaDB 10.6 on searches
//   it, along each waiter's first blocker, again when that blocker goes (1213 rolls back the
//   victim's whole transaction) and lock-wait timeout (1205, 50 s by default, rolling back
//   only the statement, as 1062 does);
// - the table's AUTO-INC lock (lock mode 1, MariaDB's default): an INSERT ... SELECT takes it
//   for its generated id, a simple INSERT only while another statement holds it or waits for
//   it; held to the statement's end; a deadlock whose victim waits for it is 1467, the
//   transaction rolled back as for 1213;
// - READ COMMITTED takes no gap locks and, for UPDATE/DELETE, skips locked rows whose
//   latest committed version does not match (semi-consistent read);
// - READ UNCOMMITTED reads the latest versions, committed or not, and locks as READ
//   COMMITTED; SERIALIZABLE locks as REPEATABLE READ, a plain SELECT inside a transaction
//   taking shared locks;
// - index paths for `=`, `IN` and ranges on the primary key and the key index, with
//   InnoDB's next-key locks on what a range reads and on the first entry past it
//   (docs/sql.md, "Which index a statement uses"); the deadlock victim is the lightest
//   transaction by undo records and lock structs;
// - SET [SESSION] TRANSACTION ISOLATION LEVEL, refused inside a transaction (1568);
// - online ALTER TABLE ... ADD [UNIQUE] INDEX / DROP INDEX as MariaDB 10.11 runs it
//   (ALGORITHM=INPLACE, LOCK=NONE; docs/sql.md, Online ALTER): it commits the session's open
//   transaction first; a unique build on a table holding a duplicate fails at once with 1062
//   naming the smallest duplicated key; otherwise it takes index_build_per_row per live row,
//   during which other sessions' writes do not wait, and an insert of a key another live row
//   holds is accepted but fails the build at its end (1062 naming that key, no index), even
//   if the row goes again before the end; a second ALTER of the table waits for the first
//   (the metadata lock). The index can only be on the table's key columns, on a table with no
//   further index: another column, or a second index, is a sim::UsageError. DROP INDEX
//   is instant; the key column's entries and the locks taken on them stay until their
//   transactions end. 1061 for a name the table has, 1091 for dropping one it has not;
// - results as MySQL reports them: error messages, and each lock wait, deadlock cycle and
//   rolled-back change explained.
// - an UPDATE of an indexed column moves the row's entries (InnoDB's row_upd_sec_index_entry):
//   the old one delete-marked until the commit, the new one checked and locked as an insert's;
// Not modelled: updating an id, an index merge of two secondary indexes,
// ALTER's metadata-lock waits behind open transactions at its start and end (and the
// statements that queue behind such a waiting ALTER), ALGORITHM=COPY,
// purge of deleted rows (a committed delete takes its entries away at once, and locks on
// them stay where they were), a crash of the database's node (its state outlives it).
//
// Statements run inside simulated processes: a lock wait blocks the calling process, and
// the server's time for a statement (StatementTiming) passes inside it, where it falls.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "models/db/expr.hpp"
#include "models/db/row_values.hpp"
#include "sim/sim.hpp"

namespace models::db {

// Value (an integer or a string) and Values (column values by name; `id` is the primary key)
// are models/db/expr.hpp's.
std::string to_string(const Value& value);

enum class KeyIndex { none, non_unique, unique };

/// Which server a database imitates: MariaDB's InnoDB (models/db/innodb/, the default)
/// or PostgreSQL 15 (models/db/postgres/). Each is its own model of locks and versions over
/// the same tables, rows, statements and results.
enum class Engine { mariadb, postgresql };
const char* to_string(Engine engine);

/// An index beyond the primary key and the key index: on one column or several, or (PostgreSQL
/// only) partial, on the rows its WHERE is true for. A unique one refuses a second live row of the
/// same values among the rows it covers, as the key index does. On MariaDB each is searched and
/// locked as the key index is; on PostgreSQL a plain one changes no answer in the model (a read
/// through it is taken as a scan).
struct IndexDef {
  std::string name;
  std::vector<std::string> columns;
  bool unique = true;
  /// A partial index's WHERE (null: every row), and the same as SQL, which ON CONFLICT's
  /// inference compares with its own WHERE's terms.
  std::shared_ptr<const Expr> where{};
  std::string where_text{};
  bool operator==(const IndexDef& o) const {
    return name == o.name && columns == o.columns && unique == o.unique && where_text == o.where_text;
  }
};

/// What a column's type admits beyond being an integer or text, as the server enforces it: an
/// integer type's range (INT's 32 bits), a VARCHAR(n) or CHAR(n)'s length in characters, and
/// the type's name in PostgreSQL's messages ("integer", "character varying(4)").
struct ColumnType {
  std::int64_t min = std::numeric_limits<std::int64_t>::min(), max = std::numeric_limits<std::int64_t>::max();
  std::size_t max_chars = 0;  // 0: any length
  std::string name{};
  bool operator==(const ColumnType&) const = default;
};

struct TableSchema {
  std::string name;
  /// The column strategies look rows up by (an OpenID, a request id). Empty: none.
  std::string key_column{};
  KeyIndex key_index = KeyIndex::unique;
  /// MariaDB: the key index's further columns, in index order, when it has several
  /// (`UNIQUE KEY uk (merchant, request)`: key_column merchant, key_tail {request}). They
  /// keep their defaults in `columns`. Empty: the index is on key_column alone.
  std::vector<std::string> key_tail{};
  /// Whether key_column holds strings (VARCHAR, TEXT); false: integers (BIGINT, INT). Its
  /// default is not in `columns`, which tells every other column's type.
  bool key_text = true;
  /// The key index's columns in order: key_column and key_tail (none without a key column).
  std::vector<std::string> key_columns() const {
    if (key_column.empty()) return {};
    std::vector<std::string> out{key_column};
    out.insert(out.end(), key_tail.begin(), key_tail.end());
    return out;
  }
  /// Every other column with its default (REPLACE resets unlisted columns to these), which also
  /// tells its type: an integer or a string (for a column whose default is NULL, the type's zero,
  /// and the column is in `null_by_default`).
  Values columns{};
  /// The index's name in messages ("Duplicate entry 'a' for key 'uk'"); empty: the column's.
  std::string index_name{};
  /// Every column, `id` first, in the order CREATE TABLE lists them (for display); empty:
  /// id, the key column, then the others by name.
  std::vector<std::string> column_order{};
  /// Whether `id` is AUTO_INCREMENT: without it an INSERT must give an id (1364 otherwise).
  bool auto_increment = true;
  /// The key index is the table's PRIMARY KEY, on columns it names (`k VARCHAR(64) PRIMARY KEY`,
  /// `PRIMARY KEY (user_id, item)`), and the table has no column `id`: on MariaDB the key index
  /// is the clustered index (its order is the rows' order, its gaps are the ones locked), every
  /// further index's entries end with its columns, and an insert must give them (1364); on
  /// PostgreSQL it is the unique index `<table>_pkey`. The model still numbers the rows, out of
  /// sight: that number is no column, takes no AUTO-INC lock and is no LAST_INSERT_ID().
  bool clustered_key = false;
  /// The secondary indexes after the key index (on PostgreSQL also partial ones).
  std::vector<IndexDef> indexes{};
  /// The columns that may hold NULL (CREATE TABLE's columns without NOT NULL), in name order;
  /// never `id`. A unique index admits any number of rows whose key is NULL, as both servers' do.
  std::vector<std::string> nullable{};
  /// Those of them whose default is NULL (no DEFAULT, or DEFAULT NULL), in name order.
  std::vector<std::string> null_by_default{};
  /// The columns whose type admits less than BIGINT or unbounded text (INT, SMALLINT,
  /// VARCHAR(n), CHAR(n)), with what it admits; a column absent here admits any integer or text.
  std::map<std::string, ColumnType> types{};
  bool may_be_null(const std::string& column) const {
    return std::binary_search(nullable.begin(), nullable.end(), column);
  }
  /// Whether the table has `column`: id (unless its primary key is another), the key column or
  /// one of `columns`.
  bool has_column(const std::string& column) const {
    return column == "id" ? !clustered_key : column == key_column || columns.count(column) > 0;
  }
  bool operator==(const TableSchema&) const = default;
};

/// The four levels as InnoDB runs them: READ UNCOMMITTED reads the latest version of a row,
/// committed or not, and otherwise locks as READ COMMITTED; SERIALIZABLE locks as REPEATABLE
/// READ and turns a plain SELECT inside an explicit transaction into LOCK IN SHARE MODE.
enum class Isolation { read_uncommitted, read_committed, repeatable_read, serializable };
const char* to_string(Isolation isolation);

/// One term of a WHERE clause; a statement's terms all hold (AND).
struct Condition {
  enum class Op { eq, ne, lt, le, gt, ge } op = Op::eq;
  std::string column;
  Value value;
};
inline Condition eq(std::string column, Value v) { return {Condition::Op::eq, std::move(column), std::move(v)}; }
inline Condition ne(std::string column, Value v) { return {Condition::Op::ne, std::move(column), std::move(v)}; }
inline Condition lt(std::string column, Value v) { return {Condition::Op::lt, std::move(column), std::move(v)}; }
inline Condition gt(std::string column, Value v) { return {Condition::Op::gt, std::move(column), std::move(v)}; }
using Where = std::vector<Condition>;

/// plain, LOCK IN SHARE MODE (FOR SHARE), FOR UPDATE, and PostgreSQL's FOR KEY SHARE and
/// FOR NO KEY UPDATE.
enum class ReadLock { none, share, update, key_share, no_key_update };
enum class OnDuplicate { error, ignore, update, replace };

/// The parts of a statement beyond the point statements strategies send: held behind one
/// pointer, so the statements that have none copy as cheaply as before (they are copied
/// through every call to the server).
struct StatementExtra {
  /// WHERE terms other than `column op value` (IN, BETWEEN, OR, arithmetic, ...): a row
  /// matches when every term of `where` and of `filter` is true.
  std::vector<Expr> filter{};
  /// UPDATE's SET, or ON DUPLICATE KEY UPDATE's, when a value is computed (`v = v + 1`,
  /// `c = VALUES(c)`): every assignment in order, each seeing the ones before it, as MySQL
  /// runs them. `values` (UPDATE) or `on_update` is then empty.
  std::vector<std::pair<std::string, Expr>> assign{};
  /// The values of the `?`s inside `filter` and `assign`, by Expr::param.
  std::vector<Value> args{};
  /// A multi-row INSERT: the rows after `values`, each inserted in turn by the one statement.
  std::vector<Values> more_rows{};
  /// ORDER BY: columns, each ascending (false) or descending (true).
  std::vector<std::pair<std::string, bool>> order_by{};
  /// PostgreSQL's ON CONFLICT (cols): the columns of the unique index it arbitrates on (empty:
  /// any), and DO UPDATE's WHERE (null: none), which sees the row as `column` and the row the
  /// INSERT proposed as `inserted` (EXCLUDED.col).
  std::vector<std::string> conflict_target{};
  std::shared_ptr<const Expr> conflict_where{};
  /// PostgreSQL's ON CONFLICT (cols) WHERE: the terms a partial unique index's WHERE must be
  /// among for the index to arbitrate (null: none given).
  std::shared_ptr<const Expr> conflict_index_where{};
  /// PostgreSQL's CREATE INDEX on several columns or with a WHERE: the index (add_index's
  /// `column` is then empty). MariaDB's ALTER TABLE ... ADD INDEX on several columns: the
  /// index, whose first column is also `column`.
  std::shared_ptr<const IndexDef> index_def{};
  /// PostgreSQL's RETURNING: the columns each written row is returned with ("*": all).
  std::vector<std::string> returning{};
  /// A SELECT of one aggregate (Statement::count_rows): COUNT, MAX, MIN or SUM of the non-NULL
  /// values of `aggregate_column` (COUNT with none: COUNT(*), every row). `none`: groups
  /// without an aggregate (GROUP BY alone, or SELECT DISTINCT), a row a group of its columns.
  enum class Aggregate { count, max, min, sum, none } aggregate = Aggregate::count;
  std::string aggregate_column{};
  /// The name its column is given (`COUNT(*) AS n`); empty: the server's own name for it.
  std::string aggregate_alias{};
  /// GROUP BY's columns: the aggregate over each group of the rows found that are equal in
  /// them, a row a group holding those columns and the aggregate (under its name).
  std::vector<std::string> group_by{};
  /// HAVING: the groups kept, the expression reading a group's row (the aggregate as a column
  /// of its name).
  std::shared_ptr<const Expr> having{};
  /// With GROUP BY, ORDER BY and LIMIT order and cut the groups, so they are held here and
  /// not in `order_by` and Statement::limit: the read finds (and locks) every row its WHERE
  /// finds, as the servers' grouping reads do.
  std::vector<std::pair<std::string, bool>> group_order_by{};
  std::optional<std::int64_t> group_limit{};
  std::int64_t group_offset = 0;
  /// LAST_INSERT_ID() inside an expression (MariaDB): the slot of `args` that holds the
  /// session's value, put there when the statement runs.
  std::optional<std::size_t> last_insert_id_arg{};
  /// `c = LAST_INSERT_ID(expr)` in an UPDATE or ON DUPLICATE KEY UPDATE (MariaDB): the column
  /// whose new value becomes the session's LAST_INSERT_ID() and the statement's insert id.
  std::string sets_last_insert_id{};
  /// A select list's computed columns (`SELECT n - 1 AS left`, `SELECT k AS key`): each one's
  /// name and value, evaluated over each row found and added to it under that name; of a
  /// SELECT without a table (`SELECT LAST_INSERT_ID()`), over no row into its one row.
  std::vector<std::pair<std::string, Expr>> computed{};
  /// Whether `computed` calls the server (Expr::Kind::session_call: GET_LOCK(), CONNECTION_ID()),
  /// which the engine answers before it evaluates the row.
  bool session_calls = false;
  /// The database node's clock, read where a statement reads it: MariaDB's UNIX_TIMESTAMP() (the
  /// statement's start, whole seconds), PostgreSQL's extract(epoch from now())::bigint and its kin
  /// (now(), CURRENT_TIMESTAMP and transaction_timestamp(): the transaction's start;
  /// statement_timestamp() and clock_timestamp(): the statement's; rounded to whole seconds by
  /// the cast). Each is a slot of `args` the engine fills when the statement runs.
  enum class ClockRead { statement_floor, transaction_rounded, statement_rounded };
  std::vector<std::pair<std::size_t, ClockRead>> clock_args{};
  /// MariaDB: a SELECT that reads only these columns in its list (none for `SELECT 1` or
  /// `COUNT(*)`), so that an index holding them and its WHERE's and ORDER BY's answers it
  /// alone (a covering index, which the optimizer searches whatever the rows it finds). Unset:
  /// it reads whole rows (`SELECT *`).
  std::optional<std::vector<std::string>> reads_only{};
};

/// PostgreSQL's advisory-lock functions: pg_advisory_lock, pg_try_advisory_lock,
/// pg_advisory_unlock, pg_advisory_unlock_all, with _xact (held to the transaction's end)
/// and _shared (shared mode) variants. The key is Statement::values["key"].
struct Advisory {
  enum class Op { lock, try_lock, unlock, unlock_all } op = Op::lock;
  bool xact = false;
  bool shared = false;
  bool operator==(const Advisory&) const = default;
};

/// PostgreSQL's savepoints: SAVEPOINT name, ROLLBACK TO [SAVEPOINT] name, RELEASE [SAVEPOINT] name.
struct Savepoint {
  enum class Op { set, rollback_to, release } op = Op::set;
  std::string name{};
  bool operator==(const Savepoint&) const = default;
};

namespace sql {
struct Written;  // models/db/sql.hpp
}

/// A statement in typed form; models/db/sql.hpp parses SQL text into it.
struct Statement {
  enum class Kind {
    begin,
    commit,
    rollback,
    set_isolation,     // SET [SESSION] TRANSACTION ISOLATION LEVEL ...
    set_lock_wait_timeout,  // SET [SESSION] innodb_lock_wait_timeout = <seconds>
    select,            // SELECT ... WHERE [LOCK IN SHARE MODE | FOR UPDATE]
    insert,            // INSERT / INSERT IGNORE / ... ON DUPLICATE KEY UPDATE / REPLACE
    insert_if_absent,  // INSERT INTO t SELECT ... WHERE NOT EXISTS (SELECT 1 FROM t WHERE <where>)
    update,            // UPDATE t SET <set> WHERE <where>
    remove,            // DELETE FROM t WHERE <where>
    add_index,         // ALTER TABLE t ADD [UNIQUE] INDEX <index> (<column>): an online build
    drop_index,        // ALTER TABLE t DROP INDEX <index>
    advisory,          // SELECT pg_advisory_lock(key) and the other advisory functions (PostgreSQL)
    set_timeout,       // SET lock_timeout | statement_timeout | deadlock_timeout = ms (PostgreSQL)
    savepoint,         // SAVEPOINT, ROLLBACK TO SAVEPOINT, RELEASE SAVEPOINT (PostgreSQL)
  } kind = Kind::select;
  std::string table{};
  Where where{};
  ReadLock lock = ReadLock::none;
  Values values{};  // insert: the new row; update / ON DUPLICATE KEY UPDATE: the assignments
  OnDuplicate on_duplicate = OnDuplicate::error;
  Values on_update{};  // ON DUPLICATE KEY UPDATE assignments
  Isolation isolation = Isolation::repeatable_read;  // set_isolation: the level
  /// set_isolation: SET TRANSACTION (the next transaction only) rather than SET SESSION.
  bool next_transaction_only = false;
  std::string index{};   // add_index, drop_index: the index's name
  std::string column{};  // add_index: the column it indexes
  bool unique = false;   // add_index: UNIQUE
  bool consistent_snapshot = false;  // begin: START TRANSACTION WITH CONSISTENT SNAPSHOT
  /// insert: INSERT ... SELECT of values without WHERE NOT EXISTS, a bulk insert (MariaDB takes
  /// the table's AUTO-INC lock for it).
  bool bulk = false;
  std::int64_t seconds = 0;          // set_lock_wait_timeout: the session's timeout
  /// set_timeout: which setting ("lock_timeout", "statement_timeout", "deadlock_timeout") and
  /// its value in milliseconds (0: none).
  std::string setting{};
  std::int64_t milliseconds = 0;
  Advisory advisory{};  // advisory: which function
  Savepoint savepoint{};  // savepoint: which statement, on which savepoint
  /// LIMIT [offset,] count (SELECT; UPDATE and DELETE take a count only).
  std::optional<std::int64_t> limit{};
  std::int64_t offset = 0;
  /// A locking read's answer to a row another transaction has locked: wait (the default),
  /// fail at once (NOWAIT) or leave the row out (SKIP LOCKED).
  enum class OnLocked { wait, fail, skip } on_locked = OnLocked::wait;
  /// filter, assign, args, more_rows and order_by (null: all empty). Read with more(); write
  /// with edit(), which copies them first when another statement shares them.
  std::shared_ptr<StatementExtra> extra{};
  /// The text it was parsed from, shared by each binding of it (sql::as_written shows it with
  /// the bound values); null for a statement a strategy built in code.
  std::shared_ptr<const sql::Written> written{};
  const StatementExtra& more() const {
    static const StatementExtra kNone;
    return extra ? *extra : kNone;
  }
  StatementExtra& edit() {
    if (!extra) extra = std::make_shared<StatementExtra>();
    else if (extra.use_count() != 1) extra = std::make_shared<StatementExtra>(*extra);  // shared, or pinned (sql::pinned)
    return *extra;
  }
  /// SELECT COUNT(*) (or another aggregate: StatementExtra::aggregate): one row, its column
  /// named as the server names it, over the rows the WHERE finds (locked as a locking read
  /// locks them).
  bool count_rows = false;
};
/// The statement as SQL, for narration: "SELECT * FROM t_account WHERE open_id = 'x' FOR UPDATE".
std::string to_string(const Statement& statement);
/// The same in `engine`'s dialect: on PostgreSQL, INSERT IGNORE is ON CONFLICT DO NOTHING,
/// ON DUPLICATE KEY UPDATE is ON CONFLICT DO UPDATE, LOCK IN SHARE MODE is FOR SHARE, ...
std::string to_string(const Statement& statement, Engine engine);

/// MySQL error numbers for what strategies catch. `connection_timeout` is the client's.
/// `transaction_in_progress` (1568): SET TRANSACTION inside an open transaction.
/// `duplicate_key_name` (1061): ADD INDEX of a name the table has; `no_such_index` (1091):
/// DROP INDEX of a name it has not. `out_of_range` (167): an AUTO_INCREMENT id past BIGINT's maximum.
/// `bad_null` (1048): NULL given or computed for a column that may not hold it; `bad_field` (1054): an expression names a column the table lacks; `no_default` (1364): an
/// INSERT without an id into a table whose id is not AUTO_INCREMENT; `value_out_of_range`
/// (1690): arithmetic past BIGINT's range.
enum class Code : int {
  ok = 0,
  out_of_range = 167,
  bad_null = 1048,
  bad_field = 1054,
  duplicate_key_name = 1061,
  duplicate_key = 1062,
  no_such_index = 1091,
  lock_wait_timeout = 1205,
  no_default = 1364,
  deadlock = 1213,
  autoinc_failed = 1467,  // a deadlock whose victim waited for the AUTO-INC lock (MariaDB)
  transaction_in_progress = 1568,
  value_out_of_range = 1690,
  column_out_of_range = 1264,  // 22003: a value past its column's integer type (INT's 2147483647)
  data_too_long = 1406,        // 22001: a string longer than its VARCHAR(n) or CHAR(n)
  bad_integer = 1366,          // 22P02: a string that is no integer, given to an integer column
  division_by_zero = 1365,     // 22012: x DIV 0 in a write (MariaDB's strict mode), x / 0 anywhere on PostgreSQL
  identifier_too_long = 1059,  // a user lock's name over 192 bytes (MariaDB)
  illegal_parameter_type = 4079,  // a user lock's name that is a number (MariaDB)
  connection_timeout = -1,
  // PostgreSQL's errors that MySQL has no number for (numbered here after their SQLSTATE's
  // class; sqlstate() gives the SQLSTATE itself). PostgreSQL's duplicate key (23505), deadlock
  // (40P01) and lock_timeout or NOWAIT (55P03) are duplicate_key, deadlock and
  // lock_wait_timeout above.
  serialization_failure = 40001,   // 40001 could not serialize access
  in_failed_transaction = 25002,   // 25P02 current transaction is aborted
  statement_timeout = 57014,       // 57014 canceling statement due to statement timeout
  no_conflict_index = 42010,       // 42P10 no unique constraint matching the ON CONFLICT specification
  no_active_transaction = 25001,   // 25P01 SAVEPOINT can only be used in transaction blocks
  no_such_savepoint = 30001,       // 3B001 savepoint does not exist
  cardinality_violation = 21000,   // 21000 ON CONFLICT DO UPDATE command cannot affect row a second time
};
const char* to_string(Code code);
/// The error as PostgreSQL names it: "23505", "40P01", "55P03", ...; "" for ok.
const char* sqlstate(Code code);
/// Whether the error made its transaction a deadlock's victim, rolled back whole: 1213, or
/// MariaDB's 1467 for a victim that was waiting for a table's AUTO-INC lock.
inline bool deadlock_victim(Code code) { return code == Code::deadlock || code == Code::autoinc_failed; }

/// A lock a session holds, as the server's own lock table would list it (InnoDB's
/// information_schema.innodb_locks with every granted lock, PostgreSQL's pg_locks): the holder's
/// origin, where the lock is and its mode, in the words of LockWait.
struct HeldLock {
  std::string who;
  std::string table, index, entry, mode;
};

/// A lock request a statement had to wait for: on which index entry, in which mode, behind
/// which sessions' transactions, and for how long.
struct LockWait {
  std::string table;
  std::string index;  // "PRIMARY", or the secondary index's name
  /// The entry ("('m', 2)" on a secondary index, "(2)" on the primary) or, for a gap or an
  /// insert intention, the entry after the gap ("gap before ('x', 3)", or "supremum").
  std::string entry;
  std::string mode;  // "S", "X", "S gap", "X next-key", "X insert intention", ...
  std::vector<std::string> behind;  // the sessions it waited behind, by their origin (`who`)
  sim::Duration waited{};
};

/// What a failed statement undid: nothing (it changed nothing), the statement's own changes
/// (1062, 1205), or the whole transaction (1213).
enum class Undone { nothing, statement, transaction };

struct Row {
  std::int64_t id = 0;
  RowValues values;  // every column, `id` included
  bool operator==(const Row&) const = default;
};

struct Result {
  Code code = Code::ok;
  std::int64_t affected = 0;   // affected rows, as MySQL counts them (ON DUPLICATE KEY UPDATE: 1 / 2 / 0)
  std::int64_t insert_id = 0;  // the id an insert took (consumed even when it failed)
  std::int32_t warnings = 0;   // INSERT IGNORE of a duplicate: 1
  std::vector<Row> rows{};     // select
  std::string message{};       // MySQL's text for an error: "Duplicate entry 'a' for key 'uk'"
  std::vector<LockWait> waits{};  // every lock wait of the statement, in order
  /// 1213: the sessions on the cycle by their origin (`who`), the victim first.
  std::vector<std::string> deadlock_cycle{};
  Undone undone = Undone::nothing;
  std::int64_t undone_rows = 0;  // row changes the failure undid
  /// When the statement's reads and writes were made, after its lock waits (a COMMIT: when it
  /// committed; a DDL: when it ended); kNever for a failure. An autocommit write is made before
  /// its commit's own time, which `end` of its log entry includes.
  sim::Time applied = sim::kNever;
  bool ok() const { return code == Code::ok; }
};

/// Who wrote a row and when, so a checker can explain a duplicate.
struct RowOrigin {
  std::string who;            // the connection's origin: "app-2 worker 3, client 7, op 12"
  std::uint64_t transaction = 0;
  sim::Time inserted_at;       // true time of the insert (for checkers only)
};

/// A committed row as a checker sees it.
struct RowRecord {
  Row row;
  RowOrigin origin;
};

/// The choice stream of InnoDB's purge race (InnoDb::purge_race): once a delete commits while
/// other transactions wait on its entries, option 0 runs the woken waiters first, option 1 the
/// purge, which hands their locks on the removed entries to the gaps they leave.
inline constexpr const char* kPurgeStream = "innodb.purge";

/// The choice stream of the order InnoDB's waiters run in when one release grants several
/// (LockSystem::regrant): option 0 the latest granted of those left, at odds 9 to 1 against
/// each other one, as MariaDB ran them.
inline constexpr const char* kWakeStream = "innodb.wake";

struct DatabaseConfig {
  Engine engine = Engine::mariadb;
  /// innodb_lock_wait_timeout on MariaDB; on PostgreSQL its lock_timeout, where zero (its
  /// default) waits for ever.
  sim::Duration lock_wait_timeout = std::chrono::seconds(50);
  /// PostgreSQL's deadlock_timeout: how long a lock wait lasts before it looks for a deadlock.
  sim::Duration deadlock_timeout = std::chrono::seconds(1);
  /// An online ADD INDEX's build time per row of the table: MariaDB 10.11 built a unique
  /// index on 3M rows in about 4 s (docs/sql.md, Online ALTER), 1.33 us a row.
  sim::Duration index_build_per_row = std::chrono::nanoseconds(1333);
  /// Keep the trial's history of transactions (models/db/history.hpp) for the anomaly checker:
  /// the workloads whose clients write SQL of their own ask for it.
  bool record_history = false;
};

/// Where the server's time for one statement goes, as its service-time model draws it
/// (models/db/server.hpp): before the statement reads or writes anything; between the read
/// and the write of INSERT ... SELECT, where another session's statement may run; and
/// before the commit the statement makes (COMMIT, or an autocommit statement's own), while
/// its changes and locks are in place.
struct StatementTiming {
  /// The database node's wall clock when the statement starts: what its NOW() reads (the
  /// simulated epoch is the trial's start). Zero where no server runs the model.
  sim::Time wall{};
  sim::Duration before{};
  sim::Duration read_to_write{};
  sim::Duration before_commit{};
};

/// Counts for reports.
struct DatabaseStats {
  std::uint64_t statements = 0, commits = 0, rollbacks = 0, deadlocks = 0, lock_wait_timeouts = 0, duplicate_keys = 0, lock_waits = 0;
};

class History;  // models/db/history.hpp

class Database {
 public:
  explicit Database(DatabaseConfig config = {});
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  void create_table(TableSchema schema);
  /// Stores a committed row before the run (a scenario's seeded rows): `values` may hold an
  /// explicit `id` (the auto-increment counter moves past it) and may duplicate a key where
  /// no unique index forbids it. Throws sim::UsageError with MySQL's message otherwise.
  /// `who` is the row's origin for checkers ("seeded", or where a legacy row came from).
  std::int64_t load_row(const std::string& table, Values values, std::string who = "seeded");
  bool has_table(const std::string& table) const;
  /// The table's columns as `SELECT *` returns them: id first, then as CREATE TABLE lists them.
  std::vector<std::string> columns(const std::string& table) const;

  /// A session: one connection's state (its open transaction, isolation, origin).
  using SessionId = std::uint64_t;
  SessionId open_session(Isolation isolation, std::string who);
  void set_origin(SessionId session, std::string who);

  /// Runs `statement` in `session`, blocking the calling process on lock waits. Without
  /// BEGIN each statement is its own transaction (autocommit).
  Result execute(SessionId session, const Statement& statement);
  /// The same, spending `timing` where it says, so other sessions' statements interleave.
  Result execute(SessionId session, const Statement& statement, const StatementTiming& timing);
  /// Rolls back the session's open transaction, if any, and forgets the session (its
  /// connection closed).
  void close(SessionId session);
  bool in_transaction(SessionId session) const;
  /// Whether `session` holds PostgreSQL's advisory lock on `key` now, session-level or
  /// transaction-level, in either mode (a peek for the lock checkers; never on MariaDB).
  bool holds_advisory(SessionId session, std::int64_t key) const;
  /// Whether `session` holds MariaDB's user lock `name` now (GET_LOCK), for the lock checkers.
  bool holds_user_lock(SessionId session, const std::string& name) const;
  /// Every lock granted now, at most `most` of them (a story's picture of the lock table), in
  /// a fixed order: by table, index and place, holder by holder.
  std::vector<HeldLock> locks(std::size_t most) const;

  /// Committed rows of `table` in id order (for checkers).
  std::vector<RowRecord> committed_rows(const std::string& table) const;
  /// Every row of `table` whose insert committed, deleted since or not, as first committed,
  /// in id order (for a rollout's count of the duplicates its traffic created).
  std::vector<RowRecord> rows_ever_committed(const std::string& table) const;
  /// The same rows one at a time, read where they are stored: a checker over a table of
  /// millions of rows keeps what it needs of them, not a copy of the table. `values` holds
  /// every column, `id` included.
  using RowVisitor = std::function<void(std::int64_t id, const RowValues& values, const RowOrigin& origin)>;
  void for_each_committed(const std::string& table, const RowVisitor& visit) const;
  void for_each_ever_committed(const std::string& table, const RowVisitor& visit) const;
  /// The rows committed_rows (with `ever`, rows_ever_committed) lists whose `column` another of
  /// them has, in id order: a business key's duplicates (NULL is shared by none). On the table's key column it reads the
  /// index once, entries of one key side by side; on another column it counts each value first.
  std::vector<RowRecord> rows_sharing(const std::string& table, const std::string& column, bool ever = false) const;
  const DatabaseStats& stats() const;
  /// The bytes its rows hold, versions included, as the memory budget counts them (an estimate
  /// that does not depend on the machine: docs/limits.md, "Memory budget").
  std::uint64_t bytes_held() const;
  /// What one row of these values adds to bytes_held (for a run's estimate before it starts).
  static std::uint64_t row_bytes(const Values& values);
  const DatabaseConfig& config() const { return config_; }
  Engine engine() const { return config_.engine; }
  /// The trial's history of transactions, where DatabaseConfig::record_history asked for one;
  /// null otherwise.
  const History* history() const;

  /// The engine's model behind these calls (models/db/model.hpp).
  class Model;

 private:
  std::unique_ptr<Model> model_;
  DatabaseConfig config_;
};

}  // namespace models::db
