#include "models/db/database.hpp"

#include "models/db/cell.hpp"
#include "models/db/model.hpp"
#include "models/db/rows.hpp"
#include "models/db/user_locks.hpp"

#include <absl/container/btree_map.h>
#include <absl/container/btree_set.h>
#include <boost/container/small_vector.hpp>

#include <algorithm>
#include <bit>
#include <utility>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <array>
#include <set>
#include <span>

namespace models::db {

std::string to_string(const Value& value) {
  if (is_null(value)) return "NULL";
  if (const auto* n = std::get_if<std::int64_t>(&value)) return std::to_string(*n);
  return "'" + std::get<std::string>(value) + "'";
}

const char* to_string(Isolation isolation) {
  switch (isolation) {
    case Isolation::read_uncommitted: return "READ UNCOMMITTED";
    case Isolation::read_committed: return "READ COMMITTED";
    case Isolation::repeatable_read: return "REPEATABLE READ";
    case Isolation::serializable: return "SERIALIZABLE";
  }
  return "?";
}

const char* to_string(Engine engine) { return engine == Engine::postgresql ? "postgresql" : "mariadb"; }

const char* sqlstate(Code code) {
  switch (code) {
    case Code::ok: return "";
    case Code::out_of_range: return "22003";
    case Code::value_out_of_range: return "22003";
    case Code::column_out_of_range: return "22003";
    case Code::data_too_long: return "22001";
    case Code::bad_integer: return "22P02";
    case Code::division_by_zero: return "22012";
    case Code::identifier_too_long: return "42000";
    case Code::illegal_parameter_type: return "HY000";
    case Code::bad_null: return "23502";
    case Code::bad_field: return "42703";
    case Code::no_default: return "23502";
    case Code::duplicate_key_name: return "42P07";
    case Code::duplicate_key: return "23505";
    case Code::no_such_index: return "42704";
    case Code::lock_wait_timeout: return "55P03";
    case Code::deadlock: return "40P01";
    case Code::autoinc_failed: return "HY000";
    case Code::transaction_in_progress: return "25001";
    case Code::connection_timeout: return "08006";
    case Code::serialization_failure: return "40001";
    case Code::in_failed_transaction: return "25P02";
    case Code::statement_timeout: return "57014";
    case Code::no_conflict_index: return "42P10";
    case Code::no_active_transaction: return "25P01";
    case Code::no_such_savepoint: return "3B001";
    case Code::cardinality_violation: return "21000";
  }
  return "XX000";
}

const char* to_string(Code code) {
  switch (code) {
    case Code::ok: return "ok";
    case Code::out_of_range: return "167 Out of range value";
    case Code::bad_null: return "1048 Column cannot be null";
    case Code::bad_field: return "1054 Unknown column";
    case Code::no_default: return "1364 Field doesn't have a default value";
    case Code::value_out_of_range: return "1690 BIGINT value is out of range";
    case Code::column_out_of_range: return "1264 Out of range value for column";
    case Code::data_too_long: return "1406 Data too long for column";
    case Code::bad_integer: return "1366 Incorrect integer value";
    case Code::division_by_zero: return "1365 Division by 0";
    case Code::identifier_too_long: return "1059 Identifier name is too long";
    case Code::illegal_parameter_type: return "4079 Illegal parameter data type";
    case Code::duplicate_key_name: return "1061 Duplicate key name";
    case Code::duplicate_key: return "1062 Duplicate entry";
    case Code::no_such_index: return "1091 Can't DROP INDEX";
    case Code::lock_wait_timeout: return "1205 Lock wait timeout exceeded";
    case Code::deadlock: return "1213 Deadlock found when trying to get lock";
    case Code::autoinc_failed: return "1467 Failed to read auto-increment value from storage engine";
    case Code::transaction_in_progress: return "1568 Transaction characteristics can't be changed";
    case Code::connection_timeout: return "connection timed out";
    case Code::serialization_failure: return "40001 could not serialize access";
    case Code::in_failed_transaction: return "25P02 current transaction is aborted";
    case Code::statement_timeout: return "57014 canceling statement due to statement timeout";
    case Code::no_conflict_index: return "42P10 no unique or exclusion constraint matching the ON CONFLICT specification";
    case Code::no_active_transaction: return "25P01 no active SQL transaction";
    case Code::no_such_savepoint: return "3B001 savepoint does not exist";
    case Code::cardinality_violation: return "21000 ON CONFLICT DO UPDATE command cannot affect row a second time";
  }
  return "?";
}

namespace {

using detail::Failure;
using detail::assign;
using detail::kInnoDbCosts;
using detail::matches;
using detail::now_if_running;
using detail::spend;
using detail::with_clock;
using detail::order_and_limit;
using detail::row_values;

using detail::Cell;

using TxnId = std::uint64_t;
constexpr int kPrimary = 0;  // the clustered index, keyed by id
constexpr int kKey = 1;      // the secondary index on the key column
// The table's AUTO-INC lock, in a queue of its own: one exclusive record lock on one entry, held
// by an insert from the id it takes to its statement's end (InnoDb::take_autoinc).
constexpr int kAutoInc = 2;
// The secondary indexes after the key index (TableSchema::indexes): kExtra + their place there.
constexpr int kExtra = 3;

// A key of an index: one value per column of the index, in its order (an id on the primary
// key). Keys compare column by column, and a key that is the first columns of another (a
// prefix a search gives) sorts before every key it begins.
using Key = boost::container::small_vector<Value, 1>;
bool is_prefix(const Key& prefix, const Key& key) {
  return prefix.size() <= key.size() && std::equal(prefix.begin(), prefix.end(), key.begin());
}
bool has_null(const Key& key) { return std::any_of(key.begin(), key.end(), [](const Value& v) { return is_null(v); }); }

// A position in an index. A secondary index's entries are (key, primary id), ordered by
// both, as InnoDB appends the primary key to every secondary entry; the primary index's
// are its ids (key holds the id as well, so one order serves both).
struct Entry {
  Key key{};
  std::int64_t id = 0;
  bool operator==(const Entry&) const = default;
  bool operator<(const Entry& o) const { return key != o.key ? key < o.key : id < o.id; }
};
// Search bounds around every entry with one key.
constexpr std::int64_t kBeforeAll = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kAfterAll = std::numeric_limits<std::int64_t>::max();
Entry primary_entry(std::int64_t id) { return {Key{Value{id}}, id}; }

// An entry as the secondary index stores it: its key in one 16-byte Cell (models/db/cell.hpp)
// and its id, 24 bytes where an Entry takes 72. It orders as the Entry it holds.
class StoredEntry {
 public:
  explicit StoredEntry(const Entry& e) : id(e.id), key_(e.key.size() == 1 ? Cell(e.key.front()) : Cell::several(e.key)) {}
  Entry entry() const {
    Entry out{{}, id};
    for (const Cell& c : key_.parts()) out.key.push_back(c.value());
    return out;
  }
  bool begins_with(const Key& prefix) const {
    const std::span<const Cell> parts = key_.parts();
    return prefix.size() <= parts.size() && detail::compare_parts(parts.first(prefix.size()), prefix) == 0;
  }
  int compare(const Entry& e) const {
    const int d = detail::compare_parts(key_.parts(), e.key);
    return d != 0 ? d : id < e.id ? -1 : id > e.id ? 1 : 0;
  }
  int compare(const StoredEntry& o) const {
    const int d = detail::compare_parts(key_.parts(), o.key_.parts());
    return d != 0 ? d : id < o.id ? -1 : id > o.id ? 1 : 0;
  }

  std::int64_t id;

 private:
  Cell key_;
};
struct EntryOrder {
  using is_transparent = void;  // looked up by an Entry as well
  bool operator()(const StoredEntry& a, const StoredEntry& b) const { return a.compare(b) < 0; }
  bool operator()(const StoredEntry& a, const Entry& b) const { return a.compare(b) < 0; }
  bool operator()(const Entry& a, const StoredEntry& b) const { return b.compare(a) > 0; }
};
static_assert(sizeof(StoredEntry) == 24);

struct Version {
  TxnId txn = 0;
  std::uint64_t commit : 63 = 0;  // 0 while uncommitted
  std::uint64_t deleted : 1 = 0;
  RowValues values;  // shared with the rows a SELECT returns
};
static_assert(sizeof(Version) == 24);

// A row: its versions, oldest first, and who wrote it, in 40 bytes. Most rows have one version,
// kept inline; a row with more keeps them all in a block of its own, of the next power of two.
class RowData {
 public:
  RowData() = default;
  RowData(const RowData&) = delete;
  RowData& operator=(const RowData&) = delete;
  ~RowData() {
    if (size_ > 1) release(many_, size_);
  }

  std::span<Version> versions() { return {size_ > 1 ? many_ : &one_, size_}; }
  std::span<const Version> versions() const { return {size_ > 1 ? many_ : &one_, size_}; }
  void push(Version v) {
    if (size_ == 0) {
      one_ = std::move(v);
    } else if (size_ == 1) {
      Version* block = allocate(2);
      new (block) Version(std::move(one_));
      new (block + 1) Version(std::move(v));
      one_ = Version{};
      many_ = block;
    } else {
      if (std::has_single_bit(size_)) {  // full: move to a block twice the size
        Version* block = allocate(2 * size_);
        for (std::uint32_t i = 0; i < size_; ++i) new (block + i) Version(std::move(many_[i]));
        release(many_, size_);
        many_ = block;
      }
      new (many_ + size_) Version(std::move(v));
    }
    ++size_;
  }
  Version pop() {
    if (size_ == 1) {
      size_ = 0;
      return std::exchange(one_, Version{});
    }
    Version last = std::move(many_[size_ - 1]);
    many_[size_ - 1].~Version();
    if (--size_ == 1) {  // back inline
      one_ = std::move(many_[0]);
      release(many_, 1);
      many_ = nullptr;
    }
    return last;
  }

 private:
  static Version* allocate(std::uint32_t n) { return static_cast<Version*>(::operator new(n * sizeof(Version))); }
  static void release(Version* block, std::uint32_t n) {
    for (std::uint32_t i = 0; i < n; ++i) block[i].~Version();
    ::operator delete(block);
  }
  Version one_{};              // the only version, while there is one
  Version* many_ = nullptr;    // all of them, while there are more
  std::uint32_t size_ = 0;

 public:
  detail::Origins::Stored origin;  // after the size, in what would be padding
};
static_assert(sizeof(RowData) == 40);

// One lock or lock request on one index of one table. A record part covers the entry `at`;
// a gap part covers the open range (lo, hi) between neighbouring entries (a next-key lock
// has both, with hi = at). An insert intention covers only the position `at` its new entry
// takes.
struct Lock {
  TxnId txn = 0;
  bool exclusive = false;
  bool record = false;
  bool gap = false;
  bool insert_intention = false;
  Entry at{};
  std::optional<Entry> lo{}, hi{};  // nullopt: the infimum (lo), the supremum (hi)
  bool granted = false;
  std::shared_ptr<const Entry> purged{};  // a gap lock the purge of this entry handed on (InnoDb::purge_race); rare, so a pointer
  std::optional<sim::Promise<Code>> wake{};  // while waiting: ok when granted, deadlock for a victim
  std::uint64_t seq = 0;  // its place in its queue: later requests have larger ones
};

// The locks and requests on one index of one table, first come first, as InnoDB's lock hash
// keeps them per page. Beside the queue, each entry's locks in the same order: a record request
// only ever waits for locks on its own entry, so a scan that locks a million rows looks at each
// row's few locks, not at every lock the table has (which made a locking scan quadratic).
class LockQueue {
 public:
  using List = std::list<Lock>;

  Lock& add(Lock lock) {
    lock.seq = ++last_seq_;
    Lock& added = list_.emplace_back(std::move(lock));
    by_entry_[added.at].push_back(&added);
    return added;
  }
  void remove(const Lock* lock) {
    unindex(*lock);
    list_.remove_if([&](const Lock& l) { return &l == lock; });
  }
  template <class Pred>
  std::size_t erase_if(Pred pred) {
    return std::erase_if(list_, [&](const Lock& l) {
      if (!pred(l)) return false;
      unindex(l);
      return true;
    });
  }
  /// The locks and requests on `entry` (a gap lock's entry is its `at`), in queue order.
  const std::vector<Lock*>& on(const Entry& entry) const {
    static const std::vector<Lock*> none;
    const auto it = by_entry_.find(entry);
    return it == by_entry_.end() ? none : it->second;
  }
  List::iterator begin() { return list_.begin(); }
  List::iterator end() { return list_.end(); }
  List::const_iterator begin() const { return list_.begin(); }
  List::const_iterator end() const { return list_.end(); }
  std::size_t size() const { return list_.size(); }

 private:
  void unindex(const Lock& lock) {
    auto it = by_entry_.find(lock.at);
    std::erase(it->second, &lock);
    if (it->second.empty()) by_entry_.erase(it);
  }
  List list_;
  std::map<Entry, std::vector<Lock*>> by_entry_;
  std::uint64_t last_seq_ = 0;
};

bool covers_gap(const Lock& l, const Entry& position) {
  return l.gap && (!l.lo || *l.lo < position) && (!l.hi || position < *l.hi);
}

// InnoDB's lock_rec_has_to_wait, for locks of two transactions.
bool has_to_wait(const Lock& req, const Lock& other) {
  if (req.insert_intention) return covers_gap(other, req.at);  // gaps block inserts, nothing else does
  if (other.insert_intention) return false;
  if (!req.exclusive && !other.exclusive) return false;
  return req.record && other.record && req.at == other.at;  // a gap request never waits
}

struct Table {
  TableSchema schema;
  // The rows by id, in a B-tree of pointers: a row stays where it is while others come and go.
  absl::btree_map<std::int64_t, std::unique_ptr<RowData>> rows;
  // The key index: (key, id) for every key a version of a row holds. Whether an entry is
  // there now is read from its row (InnoDb::live_entry).
  absl::btree_set<StoredEntry, EntryOrder> entries;
  // The further secondary indexes' entries, the same way, by their place in schema.indexes.
  std::vector<absl::btree_set<StoredEntry, EntryOrder>> more_entries;
  // The AUTO_INCREMENT counter. It stops at BIGINT's maximum: once an id has taken that value, an
  // insert that needs a new one fails with 167, as InnoDB's does (conformance:
  // auto-increment-exhausted).
  std::int64_t next_id = 1;
  bool ids_exhausted = false;
  void took_id(std::int64_t id) {
    if (id == std::numeric_limits<std::int64_t>::max())
      ids_exhausted = true;
    else
      next_id = std::max(next_id, id + 1);
  }
  std::int64_t new_id() {
    if (ids_exhausted) throw Failure{Code::out_of_range, "Out of range value for column 'id' at row 1"};
    const std::int64_t id = next_id;
    took_id(id);
    return id;
  }
  std::vector<LockQueue> locks = std::vector<LockQueue>(kExtra);  // kPrimary, kKey, kAutoInc, then one per further index
  // An online ADD INDEX in progress: the table's metadata lock is held, and a later ALTER
  // waits for it in `ddl_waiters`, in order.
  struct Build {
    bool unique = false;
    std::optional<Key> doomed_by{};  // the first key inserted twice during a unique build
  };
  std::optional<Build> build{};
  std::list<sim::Promise<bool>> ddl_waiters{};
  // A plain index on the key column that a unique one added over it covers: lookups and
  // locks go by the unique one, and a DROP INDEX of either leaves the other.
  std::string covered_plain{};
  // The column names its rows' values share.
  RowValues::Shape shape{};
  RowValues stored(const Values& values) { return RowValues(values, shape); }
};

struct Undo {
  Table* table;
  std::int64_t id;
};

struct SessionState;

// A locking read's index condition (InnoDb::pushed_condition): the WHERE's terms checked on a
// secondary index's entries, and the columns those entries hold, in order (the index's, then the
// primary key's).
struct IndexCondition {
  Statement terms;
  std::vector<std::string> columns;
};

struct Txn {
  TxnId id = 0;
  const SessionState* session = nullptr;
  bool explicit_ = false;
  Isolation isolation = Isolation::repeatable_read;
  std::optional<std::uint64_t> view;  // the commit counter when the read view was taken
  std::vector<Undo> undo;
  Lock* waiting = nullptr;  // the request it waits on, until granted or refused
  bool doomed = false;      // chosen as a deadlock victim, not yet rolled back
  Table* waiting_table = nullptr;
  int waiting_index = 0;
  std::vector<LockWait> waits;       // the current statement's
  std::vector<std::string> cycle{};  // set when another's request made it a deadlock victim
  // InnoDB's lock structs, which with the undo records make a transaction's weight when a
  // deadlock's victim is chosen: one per table lock (IS, IX) and one per kind of record
  // lock on an index (a table's records are taken as one page), and one per waiting request.
  // Kept inline, with no allocation: most transactions touch one or two tables and a few kinds
  // of lock; past kSmall, every further one counts as a struct of its own.
  static constexpr std::size_t kSmall = 8;
  struct Kind {
    const Table* table;
    int index_and_kind;
    bool operator==(const Kind&) const = default;
  };
  std::uint64_t lock_structs = 0;
  std::array<Kind, kSmall> record_kinds{};  // (table, index, kind) it has a struct for
  std::size_t record_kind_count = 0;
  std::array<std::pair<const Table*, int>, kSmall> table_locks{};  // 1: IS, 2: IX, 3: both
  std::size_t table_lock_count = 0;
  std::uint64_t weight() const { return undo.size() + lock_structs; }
  // Whether it already had a struct for this kind of record lock; notes it if not.
  bool had_kind(const Kind& k) {
    const auto end = record_kinds.begin() + static_cast<std::ptrdiff_t>(record_kind_count);
    if (std::find(record_kinds.begin(), end, k) != end) return true;
    if (record_kind_count < kSmall) record_kinds[record_kind_count++] = k;
    return false;
  }
  // The current statement's answer to a row lock it would wait for (NOWAIT, SKIP LOCKED), and
  // how many matching rows end its scan (a LIMIT read in index order).
  Statement::OnLocked on_locked = Statement::OnLocked::wait;
  std::optional<std::size_t> enough{};
  // The current locking read's index condition (pushed_condition): a visited entry of the
  // secondary index it searches whose key fails it is locked, and its row is not.
  std::optional<IndexCondition> pushed{};
  // The current statement's LAST_INSERT_ID() to be: the first AUTO_INCREMENT id it generated
  // for a row it inserted, or what a `c = LAST_INSERT_ID(expr)` of it gave.
  std::optional<std::int64_t> generated_id{};
  std::optional<std::int64_t> assigned_id{};
};

// The table lock a statement takes before it locks rows: IX to write, IS to read with locks.
void take_table_lock(Txn& txn, const Table* table, bool exclusive) {
  auto end = txn.table_locks.begin() + static_cast<std::ptrdiff_t>(txn.table_lock_count);
  auto it = std::find_if(txn.table_locks.begin(), end, [&](const auto& t) { return t.first == table; });
  if (it == end) {
    if (txn.table_lock_count == Txn::kSmall) {
      ++txn.lock_structs;  // past the inline ones: counted, not remembered
      return;
    }
    *it = {table, 0};
    ++txn.table_lock_count;
  }
  int& held = it->second;
  const int want = exclusive ? 2 : 1;
  if ((held & want) != 0 || (!exclusive && held != 0)) return;  // IX covers IS
  held |= want;
  ++txn.lock_structs;
}

struct SessionState {
  Isolation isolation;  // for the transactions it begins
  std::string who;
  std::unique_ptr<Txn> txn;
  std::optional<Isolation> next_isolation{};  // SET TRANSACTION: the next transaction's only
  std::optional<sim::Duration> lock_wait_timeout{};  // SET innodb_lock_wait_timeout: the session's own
  std::int64_t last_insert_id = 0;  // LAST_INSERT_ID(): set by a statement that succeeds, 0 before any
  Database::SessionId id = 0;       // CONNECTION_ID(), and the owner of its user locks
};

// What a statement's lock request came to: granted at once, granted after a wait, or left
// (SKIP LOCKED).
enum class Got { at_once, after_wait, skipped };

const char* const kDeadlockMessage = "Deadlock found when trying to get lock; try restarting transaction";
// A deadlock whose victim was waiting for the AUTO-INC lock: MariaDB's handler reports that it
// could not read the next id (1467), and the transaction is rolled back as for 1213.
const char* const kAutoIncMessage = "Failed to read auto-increment value from storage engine";
Failure deadlock_failure(int index, std::vector<std::string> cycle, std::int64_t changes) {
  if (index == kAutoInc) return Failure{Code::autoinc_failed, kAutoIncMessage, std::move(cycle), changes};
  return Failure{Code::deadlock, kDeadlockMessage, std::move(cycle), changes};
}
const char* const kLockWaitTimeoutMessage = "Lock wait timeout exceeded; try restarting transaction";

// MySQL's 1062 text: "Duplicate entry 'a' for key 'uk'" (numbers quoted as well); a key of
// several columns joins them with '-': "Duplicate entry '1-a' for key 'uk'".
std::string duplicate_message(const Key& key, const std::string& key_name) {
  std::string text;
  for (const Value& value : key) {
    if (&value != &key.front()) text += '-';
    text += std::holds_alternative<std::string>(value) ? std::get<std::string>(value) : std::to_string(std::get<std::int64_t>(value));
  }
  return "Duplicate entry '" + text + "' for key '" + key_name + "'";
}

// How lock waits name an entry: "('m', 2)" on a secondary index, "(2)" on the primary, "('m')"
// on a primary key of other columns (`keyed`: the row's number is not the server's).
std::string entry_text(int index, const Entry& e, bool keyed) {
  if (index == kPrimary) return "(" + std::to_string(e.id) + ")";
  std::string text = "(";
  for (const Value& v : e.key) text += to_string(v) + ", ";
  if (keyed) return text.substr(0, text.size() - 2) + ")";
  return text + std::to_string(e.id) + ")";
}
std::string gap_text(int index, const std::optional<Entry>& hi, bool keyed) {
  return hi ? "gap before " + entry_text(index, *hi, keyed) : "supremum";
}
std::string mode_text(const Lock& l) {
  std::string mode = l.exclusive ? "X" : "S";
  if (l.insert_intention) return mode + " insert intention";
  if (l.record && l.gap) return mode + " next-key";
  if (l.gap) return mode + " gap";
  return mode;
}

// Levels that lock gaps (REPEATABLE READ, SERIALIZABLE) and those that do not.
bool gap_locking(Isolation i) { return i == Isolation::repeatable_read || i == Isolation::serializable; }


}  // namespace

// InnoDB's model (the header's comment says what it imitates).
class InnoDb final : public Database::Model {
 public:
  using SessionId = Database::SessionId;
  using RowVisitor = Database::RowVisitor;
  explicit InnoDb(DatabaseConfig config) : config(config) {}
  DatabaseConfig config;
  DatabaseStats stats_;
  std::map<std::string, Table> tables;
  std::map<SessionId, SessionState> sessions;
  std::map<TxnId, Txn*> txns;
  UserLocks user_locks_;  // GET_LOCK() and its family: the server's, not InnoDB's
  SessionId next_session = 1;
  TxnId next_txn = 1;
  std::uint64_t bytes = 0;  // what the stored rows cost, as bytes_held counts them
  detail::Origins origins;  // who wrote them
  std::uint64_t commits = 0;  // the commit counter read views compare with

  Table& table(const std::string& name) {
    auto it = tables.find(name);
    if (it == tables.end()) throw sim::UsageError("models::db: no table '" + name + "'");
    return it->second;
  }

  // --- Rows and versions ---------------------------------------------------

  static const Version* current(const RowData& row) { return row.versions().empty() ? nullptr : &row.versions().back(); }
  static const Version* latest_committed(const RowData& row) {
    const auto versions = row.versions();
    for (auto it = versions.rbegin(); it != versions.rend(); ++it)
      if (it->commit != 0) return &*it;
    return nullptr;
  }
  // The version a list of committed rows shows of a row: its latest committed one (ever: its
  // first committed one), unless that one deletes it.
  static const Version* shown(const RowData& row, bool ever) {
    const Version* v = nullptr;
    if (!ever) {
      v = latest_committed(row);
    } else {
      const auto versions = row.versions();
      const auto first = std::find_if(versions.begin(), versions.end(), [](const Version& x) { return x.commit != 0; });
      if (first != versions.end()) v = &*first;
    }
    return v != nullptr && !v->deleted ? v : nullptr;
  }
  void visit_rows(const Table& t, bool ever, const RowVisitor& visit) const {
    for (const auto& [id, row] : t.rows)
      if (const Version* v = shown(*row, ever)) visit(id, v->values, origins(row->origin));
  }
  static const Version* visible(const RowData& row, const Txn& txn, std::uint64_t view) {
    if (txn.isolation == Isolation::read_uncommitted) return current(row);  // dirty reads
    const auto versions = row.versions();
    for (auto it = versions.rbegin(); it != versions.rend(); ++it)
      if (it->txn == txn.id || (it->commit != 0 && it->commit <= view)) return &*it;
    return nullptr;
  }
  // A row the indexes still have entries for: not deleted by a committed delete (purge is
  // not modelled: a committed delete takes the entries away at once).
  static bool live(const RowData& row) {
    const Version* v = current(row);
    return v != nullptr && !(v->deleted && v->commit != 0);
  }

  // A row's key in the key index: the values of its columns, in the index's order.
  template <class Row>  // Values, or a stored row's RowValues
  static std::optional<Key> key_of(const Table& t, const Row& v) {
    if (t.schema.key_column.empty()) return std::nullopt;
    Key key{v.at(t.schema.key_column)};
    for (const std::string& column : t.schema.key_tail) key.push_back(v.at(column));
    return key;
  }
  // A row's key in a secondary index: the key index's, or a further one's.
  // On a table whose primary key is the key index (clustered_key), a further index's entries end
  // with the primary key's columns, as InnoDB's do: they order the rows of one key, and a search
  // may hold them too (MariaDB's extended keys; conformance natural-key-second-index-*).
  template <class Row>
  static std::optional<Key> key_of(const Table& t, int index, const Row& v) {
    if (index == kKey) return key_of(t, v);
    Key key;
    for (const std::string& column : t.schema.indexes[static_cast<std::size_t>(index - kExtra)].columns) key.push_back(v.at(column));
    if (t.schema.clustered_key) {
      key.push_back(v.at(t.schema.key_column));
      for (const std::string& column : t.schema.key_tail) key.push_back(v.at(column));
    }
    return key;
  }
  // The part of a secondary index's key that a unique index holds unique: its own columns.
  static Key unique_part(const Table& t, int index, Key key) {
    key.resize(width(t, index));
    return key;
  }
  // The index whose entries are the rows' records: the primary key of ids, or the key index of a
  // table keyed by other columns (clustered_key).
  static int clustered(const Table& t) { return t.schema.clustered_key ? kKey : kPrimary; }
  // A row's record in the clustered index (its current version's key, on a clustered key).
  Entry record_of(const Table& t, std::int64_t id) const {
    if (!t.schema.clustered_key) return primary_entry(id);
    return Entry{*key_of(t, current(*t.rows.at(id))->values), id};
  }
  static const std::string& index_name(const Table& t) {
    return t.schema.index_name.empty() ? t.schema.key_column : t.schema.index_name;
  }
  static const std::string& index_name(const Table& t, int index) {
    return index == kKey ? index_name(t) : t.schema.indexes[static_cast<std::size_t>(index - kExtra)].name;
  }
  static bool indexed(const Table& t) { return !t.schema.key_column.empty() && t.schema.key_index != KeyIndex::none; }
  // The secondary indexes searches and inserts use, in the order MariaDB keeps a table's keys
  // (sort_keys): unique ones whose columns are all NOT NULL, other unique ones, then plain ones,
  // each kind in the order the table declares them. An insert checks for duplicates in this
  // order, and ON DUPLICATE KEY UPDATE updates the first row found (conformance
  // second-index-upsert-order).
  static boost::container::small_vector<int, 2> secondary(const Table& t) {
    boost::container::small_vector<int, 2> out;
    if (indexed(t)) out.push_back(kKey);
    if (t.schema.indexes.empty()) return out;
    for (std::size_t i = 0; i < t.schema.indexes.size(); ++i) out.push_back(kExtra + static_cast<int>(i));
    const auto kind = [&](int index) {
      if (!unique_index(t, index)) return 2;
      const std::vector<std::string> columns = columns_of(t, index);
      return std::any_of(columns.begin(), columns.end(), [&](const std::string& c) { return t.schema.may_be_null(c); }) ? 1 : 0;
    };
    std::stable_sort(out.begin(), out.end(), [&](int a, int b) { return kind(a) < kind(b); });
    return out;
  }
  // How many columns a secondary index has.
  static std::size_t width(const Table& t, int index) {
    return index == kKey ? 1 + t.schema.key_tail.size() : t.schema.indexes[static_cast<std::size_t>(index - kExtra)].columns.size();
  }
  // A secondary index's columns, in order (on a clustered key's table, a further index's end
  // with the primary key's: key_of).
  static std::vector<std::string> columns_of(const Table& t, int index) {
    if (index == kKey) return t.schema.key_columns();
    std::vector<std::string> columns = t.schema.indexes[static_cast<std::size_t>(index - kExtra)].columns;
    if (t.schema.clustered_key) {
      const std::vector<std::string> key = t.schema.key_columns();
      columns.insert(columns.end(), key.begin(), key.end());
    }
    return columns;
  }
  static bool unique_index(const Table& t, int index) {
    return index == kKey ? t.schema.key_index == KeyIndex::unique : t.schema.indexes[static_cast<std::size_t>(index - kExtra)].unique;
  }
  static const absl::btree_set<StoredEntry, EntryOrder>& entries_of(const Table& t, int index) {
    return index == kKey ? t.entries : t.more_entries[static_cast<std::size_t>(index - kExtra)];
  }
  static absl::btree_set<StoredEntry, EntryOrder>& entries_of(Table& t, int index) {
    return index == kKey ? t.entries : t.more_entries[static_cast<std::size_t>(index - kExtra)];
  }
  // Whether a row with `key` must be alone with it in a secondary index: the index is unique,
  // and the key holds no NULL (a unique index admits any number of NULLs, as both servers' do).
  static bool must_be_unique(const Table& t, int index, const std::optional<Key>& key) {
    if (!key || (index == kKey && !indexed(t)) || !unique_index(t, index)) return false;
    const auto own = key->begin() + static_cast<std::ptrdiff_t>(std::min(key->size(), width(t, index)));
    return std::none_of(key->begin(), own, [](const Value& v) { return is_null(v); });
  }
  static std::string duplicate_in(const Table& t, int index, const Key& key) {
    return duplicate_message(unique_part(t, index, key), index_name(t, index));
  }

  // Whether `index` has the entry `e` now: its row is live and, on a secondary index, its
  // current version holds that key.
  // An UPDATE that changed the key leaves the old entry there, delete-marked, until it commits
  // (purge is not modelled past that): every version from the latest committed one on holds
  // its entry.
  bool live_entry(const Table& t, int index, const Entry& e) const {
    auto it = t.rows.find(e.id);
    if (it == t.rows.end() || !live(*it->second)) return false;
    if (index == kPrimary || key_of(t, index, current(*it->second)->values) == e.key) return true;
    const auto versions = it->second->versions();
    for (auto v = versions.rbegin(); v != versions.rend(); ++v) {
      if (key_of(t, index, v->values) == e.key) return true;
      if (v->commit != 0) break;
    }
    return false;
  }
  // Whether the row of a secondary index's entry holds its key now (not only a delete-marked
  // entry an uncommitted UPDATE left).
  bool holds_key(const Table& t, int index, const Entry& e) const {
    const Version* v = current(*t.rows.at(e.id));
    return !v->deleted && key_of(t, index, v->values) == e.key;
  }

  // The live entry just below `position` in `index`, if any (nullopt: the infimum).
  std::optional<Entry> before(const Table& t, int index, const Entry& position) const {
    if (index == kPrimary) {
      for (auto it = t.rows.lower_bound(position.id); it != t.rows.begin();) {
        --it;
        if (live(*it->second)) return primary_entry(it->first);
      }
      return std::nullopt;
    }
    const auto& entries = entries_of(t, index);
    for (auto it = entries.lower_bound(position); it != entries.begin();) {
      --it;
      if (Entry e = it->entry(); live_entry(t, index, e)) return e;
    }
    return std::nullopt;
  }
  // The live entry just above `position` in `index`, if any (nullopt: the supremum).
  std::optional<Entry> after(const Table& t, int index, const Entry& position) const {
    if (index == kPrimary) {
      for (auto it = t.rows.upper_bound(position.id); it != t.rows.end(); ++it)
        if (live(*it->second)) return primary_entry(it->first);
      return std::nullopt;
    }
    const auto& entries = entries_of(t, index);
    for (auto it = entries.upper_bound(position); it != entries.end(); ++it)
      if (Entry e = it->entry(); live_entry(t, index, e)) return e;
    return std::nullopt;
  }

  // A secondary index's live entries whose key begins with `prefix` (all its columns: that
  // key's entries, in id order), in index order.
  std::vector<Entry> entries_with(const Table& t, int index, const Key& prefix) const {
    std::vector<Entry> out;
    const auto& entries = entries_of(t, index);
    for (auto it = entries.lower_bound(Entry{prefix, kBeforeAll}); it != entries.end() && it->begins_with(prefix); ++it)
      if (Entry e = it->entry(); live_entry(t, index, e)) out.push_back(std::move(e));
    return out;
  }
  // The first live entry of a secondary index past those whose key begins with `prefix`
  // (nullopt: the supremum).
  std::optional<Entry> after_prefix(const Table& t, int index, const Key& prefix) const {
    const auto& entries = entries_of(t, index);
    auto it = entries.lower_bound(Entry{prefix, kBeforeAll});
    while (it != entries.end() && it->begins_with(prefix)) ++it;
    for (; it != entries.end(); ++it)
      if (Entry e = it->entry(); live_entry(t, index, e)) return e;
    return std::nullopt;
  }

  // --- Locks ---------------------------------------------------------------

  bool holds(const Table& t, int index, const Lock& want) const {
    const auto covers = [&](const Lock& l) {
      if (l.txn != want.txn || !l.granted || l.insert_intention != want.insert_intention) return false;
      if (want.exclusive && !l.exclusive) return false;
      if (want.record && !(l.record && l.at == want.at)) return false;
      if (want.gap && !(l.gap && l.lo == want.lo && l.hi == want.hi)) return false;
      if (want.insert_intention && l.at != want.at) return false;
      return true;
    };
    if (want.record || want.insert_intention) {  // only a lock on the same entry can cover it
      const auto& here = t.locks[index].on(want.at);
      return std::any_of(here.begin(), here.end(), [&](const Lock* l) { return covers(*l); });
    }
    return std::any_of(t.locks[index].begin(), t.locks[index].end(), covers);
  }

  // Whether `req` must wait: a conflicting granted lock anywhere in its queue, or a
  // conflicting request waiting ahead of it (first come, first served).
  bool must_wait(const LockQueue& queue, const Lock& req) const { return !blockers(queue, req).empty(); }

  std::vector<TxnId> blockers(const LockQueue& queue, const Lock& req) const {
    std::set<TxnId> out;
    const auto consider = [&](const Lock& l) {
      const bool ahead = l.seq < req.seq;
      if (&l != &req && l.txn != req.txn && (l.granted || ahead) && has_to_wait(req, l)) out.insert(l.txn);
    };
    if (req.insert_intention) {  // any gap covering its position: look through them all
      for (const Lock& l : queue) consider(l);
    } else if (req.record) {  // only a record lock on its own entry (has_to_wait)
      for (const Lock* l : queue.on(req.at)) consider(*l);
    }  // a gap request never waits
    return {out.begin(), out.end()};
  }

  // A cycle through `start` in the wait-for graph: the transactions on it, start first.
  std::vector<Txn*> cycle_from(Txn& start) const {
    std::vector<Txn*> path;
    std::set<TxnId> seen;
    std::vector<Txn*> found;
    auto dfs = [&](auto&& self, Txn& t) -> bool {
      path.push_back(&t);
      for (TxnId b : blockers(t.waiting_table->locks[t.waiting_index], *t.waiting)) {
        if (b == start.id) {
          found = path;
          return true;
        }
        auto it = txns.find(b);
        if (it == txns.end() || it->second->waiting == nullptr || it->second->doomed || !seen.insert(b).second) continue;
        if (self(self, *it->second)) return true;
      }
      path.pop_back();
      return false;
    };
    dfs(dfs, start);
    return found;
  }

  void regrant(LockQueue& queue) {
    for (Lock& l : queue) {
      if (l.granted || must_wait(queue, l)) continue;
      l.granted = true;
      if (auto t = txns.find(l.txn); t != txns.end() && t->second->waiting == &l) t->second->waiting = nullptr;
      if (l.wake) {
        l.wake->set_value(Code::ok);
        l.wake.reset();
      }
    }
  }

  void release_locks(Txn& txn) {
    for (auto& [name, t] : tables)
      for (auto& queue : t.locks) {
        if (queue.erase_if([&](const Lock& l) { return l.txn == txn.id && l.granted; }) > 0) regrant(queue);
      }
  }

  const std::string& who(TxnId id) const { return txns.at(id)->session->who; }

  // Where a lock or request is and its mode, as Result::waits and the lock table show it.
  LockWait place_of(const Table& t, int index, const Lock& l) const {
    LockWait w;
    w.table = t.schema.name;
    if (index == kAutoInc) {
      w.entry = "table lock";
      w.mode = "AUTO-INC";
      return w;
    }
    w.index = index == kPrimary ? "PRIMARY" : index_name(t, index);
    const bool keyed = index == kKey && t.schema.clustered_key;
    if (l.insert_intention) w.entry = gap_text(index, after(t, index, l.at), keyed);
    else if (l.record) w.entry = entry_text(index, l.at, keyed);
    else w.entry = gap_text(index, l.hi, keyed);
    if (l.purged) w.entry += " (from its lock on the purged " + entry_text(index, *l.purged, keyed) + ")";
    w.mode = mode_text(l);
    return w;
  }

  // What a lock wait is shown as in Result::waits: its place, and whom it waits behind.
  LockWait describe(const Table& t, int index, const Lock& req) const {
    LockWait w = place_of(t, index, req);
    for (TxnId b : blockers(t.locks[index], req)) w.behind.push_back(who(b));
    return w;
  }

  std::vector<HeldLock> locks(std::size_t most) const override {
    std::vector<HeldLock> out;
    user_locks_.list(out, most);
    for (const auto& [name, t] : tables)
      for (std::size_t index = 0; index < t.locks.size(); ++index)
        for (const Lock& l : t.locks[index]) {
          if (!l.granted || l.insert_intention) continue;
          if (out.size() == most) return out;
          const LockWait w = place_of(t, static_cast<int>(index), l);
          out.push_back({who(l.txn), w.table, w.index, w.entry, w.mode});
        }
    return out;
  }

  // Requests `want`; blocks the calling process while it must wait, and records the wait
  // in txn.waits. Throws Failure (deadlock: the transaction is already rolled back; lock
  // wait timeout).
  Got lock(Txn& txn, Table& t, int index, Lock want) {
    want.txn = txn.id;
    if (holds(t, index, want)) return Got::at_once;
    const Txn::Kind kind{&t, index << 4 | int(want.exclusive) | int(want.record) << 1 | int(want.gap) << 2 |
                                 int(want.insert_intention) << 3};
    LockQueue& queue = t.locks[index];
    Lock& req = queue.add(std::move(want));
    if (!must_wait(queue, req)) {
      req.granted = true;
      if (req.insert_intention) {
        queue.remove(&req);  // it only had to get past the gaps, and leaves no struct
      } else if (!txn.had_kind(kind)) {
        ++txn.lock_structs;
      }
      return Got::at_once;
    }
    if (txn.on_locked != Statement::OnLocked::wait && req.record) {
      // NOWAIT fails with 1205 at once, as MariaDB 10.11 does; SKIP LOCKED leaves the row.
      queue.remove(&req);
      if (txn.on_locked == Statement::OnLocked::skip) return Got::skipped;
      throw Failure{Code::lock_wait_timeout, kLockWaitTimeoutMessage};
    }
    ++txn.lock_structs;  // a waiting request is a struct of its own
    if (!req.insert_intention) txn.had_kind(kind);
    ++stats_.lock_waits;
    txn.waiting = &req;
    txn.waiting_table = &t;
    txn.waiting_index = index;
    txn.waits.push_back(describe(t, index, req));
    const std::size_t wait = txn.waits.size() - 1;
    const sim::Time started = sim::now();
    if (std::vector<Txn*> cycle = cycle_from(txn); !cycle.empty()) {
      // The victim is the lightest transaction on the cycle, by undo records and lock
      // structs; on a tie the requester, which closed the cycle (MariaDB 10.11's choice:
      // conformance hermitage-g2-fekete-serializable, hermitage-pmp-write-predicates-serializable).
      std::size_t victim = 0;
      for (std::size_t i = 1; i < cycle.size(); ++i)
        if (cycle[i]->weight() < cycle[victim]->weight()) victim = i;
      std::vector<std::string> names;
      for (std::size_t i = 0; i < cycle.size(); ++i) names.push_back(who(cycle[(victim + i) % cycle.size()]->id));
      ++stats_.deadlocks;
      if (victim == 0) {
        drop_waiting(txn);
        const auto changes = static_cast<std::int64_t>(txn.undo.size());
        rollback(txn);
        throw deadlock_failure(index, std::move(names), changes);
      }
      Txn& other = *cycle[victim];
      other.doomed = true;
      other.cycle = std::move(names);
      other.waiting->wake->set_value(Code::deadlock);
      other.waiting->wake.reset();
    }
    sim::Promise<Code> promise("innodb lock wait");
    sim::Future<Code> granted = promise.get_future();
    req.wake.emplace(std::move(promise));
    Code outcome;
    try {
      outcome = granted.get_for(txn.session->lock_wait_timeout.value_or(config.lock_wait_timeout));
    } catch (const sim::Timeout&) {
      txn.waits[wait].waited = sim::now() - started;
      drop_waiting(txn);
      ++stats_.lock_wait_timeouts;
      throw Failure{Code::lock_wait_timeout, kLockWaitTimeoutMessage};
    }
    txn.waits[wait].waited = sim::now() - started;
    if (outcome == Code::deadlock) {
      drop_waiting(txn);
      const auto changes = static_cast<std::int64_t>(txn.undo.size());
      std::vector<std::string> cycle = std::move(txn.cycle);
      rollback(txn);
      throw deadlock_failure(index, std::move(cycle), changes);
    }
    txn.waiting = nullptr;
    if (req.insert_intention) {
      queue.remove(&req);
      regrant(queue);
    }
    return Got::after_wait;
  }

  void drop_waiting(Txn& txn) {
    if (txn.waiting == nullptr) return;
    LockQueue& queue = txn.waiting_table->locks[txn.waiting_index];
    queue.remove(txn.waiting);
    txn.waiting = nullptr;
    regrant(queue);
  }

  // When an entry goes (the insert that made it rolled back), the locks on it pass to the
  // gap it leaves and gaps that ended at it reach over it, as InnoDB's lock_rec_inherit_to_gap
  // gives them to the next entry. The owner's own record lock (its insert's) just goes.
  void inherit_to_gap(Table& t, int index, const Entry& gone, TxnId owner) {
    const std::optional<Entry> lo = before(t, index, gone), hi = after(t, index, gone);
    t.locks[index].erase_if([&](const Lock& l) { return l.txn == owner && l.granted && l.record && !l.gap && l.at == gone; });
    for (Lock& l : t.locks[index]) {
      if (l.insert_intention) continue;
      if (l.record && l.at == gone) {
        if (!l.gap) l.lo = lo;  // a next-key lock keeps the gap it had below
        l.record = false;
        l.gap = true;
        l.hi = hi;
      } else if (l.gap) {
        if (l.lo == gone) l.lo = lo;
        if (l.hi == gone) l.hi = hi;
      }
    }
    regrant(t.locks[index]);
  }

  // --- Transactions --------------------------------------------------------

  Txn& begin(SessionState& s, bool explicit_) {
    s.txn = std::make_unique<Txn>();
    s.txn->id = next_txn++;
    s.txn->explicit_ = explicit_;
    s.txn->session = &s;
    s.txn->isolation = s.next_isolation.value_or(s.isolation);
    s.next_isolation.reset();
    txns[s.txn->id] = s.txn.get();
    return *s.txn;
  }

  void undo_to(Txn& txn, std::size_t mark) {
    while (txn.undo.size() > mark) {
      const Undo u = txn.undo.back();
      txn.undo.pop_back();
      Table& t = *u.table;
      auto row = t.rows.find(u.id);
      RowData& data = *row->second;
      const Version undone = data.pop();
      bytes -= kInnoDbCosts.of_version(undone.values);
      // An entry no remaining version holds leaves its index.
      boost::container::small_vector<std::pair<int, Entry>, 1> gone;
      const auto drop_entry = [&](int index) {
        const std::optional<Key> key = key_of(t, index, undone.values);
        const auto versions = data.versions();
        if (!key || std::any_of(versions.begin(), versions.end(), [&](const Version& v) { return key_of(t, index, v.values) == key; }))
          return;
        gone.emplace_back(index, Entry{*key, u.id});
        entries_of(t, index).erase(gone.back().second);
      };
      drop_entry(kKey);
      for (std::size_t i = 0; i < t.more_entries.size(); ++i) drop_entry(kExtra + static_cast<int>(i));
      const bool row_gone = data.versions().empty();
      if (row_gone) {
        origins.drop(data.origin);
        t.rows.erase(row);
        bytes -= kInnoDbCosts.row;
      }
      for (const auto& [index, entry] : gone) inherit_to_gap(t, index, entry, txn.id);
      if (row_gone && !t.schema.clustered_key) inherit_to_gap(t, kPrimary, primary_entry(u.id), txn.id);
    }
  }

  void rollback(Txn& txn) {
    undo_to(txn, 0);
    finish(txn);
    ++stats_.rollbacks;
  }

  void commit(Txn& txn) {
    ++commits;
    // Only another open transaction can hold a lock the purge would hand on.
    std::vector<Purged> purged = txns.size() > 1 ? entries_going(txn) : std::vector<Purged>{};
    for (const Undo& u : txn.undo)
      for (Version& v : u.table->rows.at(u.id)->versions())
        if (v.txn == txn.id && v.commit == 0) v.commit = commits;
    finish(txn);
    purge_race(purged);
    ++stats_.commits;
  }

  // The index entries a committing transaction's deletes (and key changes) take away. The model
  // purges them at the commit; InnoDB leaves them delete-marked until its purge threads remove
  // them, and the purge hands each lock on a removed record to the gap it leaves
  // (lock_rec_inherit_to_gap).
  struct Purged {
    Table* table;
    int index;
    Entry entry;
  };
  std::vector<Purged> entries_going(const Txn& txn) const {
    std::vector<Purged> out;  // a row written twice is listed twice: purge_race hands a lock on once
    for (const Undo& u : txn.undo) {
      Table& t = *u.table;
      const RowData& row = *t.rows.at(u.id);
      const Version* now = current(row);
      const Version* was = latest_committed(row);
      if (now == nullptr || was == nullptr || was->deleted || now->txn != txn.id) continue;
      if (now->deleted && !t.schema.clustered_key) out.push_back({&t, kPrimary, primary_entry(u.id)});
      for (const int index : secondary(t)) {
        std::optional<Key> old = key_of(t, index, was->values);
        if (old && (now->deleted || key_of(t, index, now->values) != old)) out.push_back({&t, index, Entry{std::move(*old), u.id}});
      }
    }
    return out;
  }

  // Who goes first once a delete commits while other transactions wait on its entries: the
  // purge thread, which turns their locks on the removed entry into gap locks where it was (so two
  // waiters to insert the key each hold the gap the other inserts into, and one of them is a
  // deadlock's victim), or the woken waiters, which run before the entry goes (one inserts, the
  // other waits for it and meets a duplicate). MariaDB 10.11 gives both (conformance
  // delete-commit-unique, docs/conformance.md); so does the model, as a choice (kPurgeStream;
  // the waiters first is the default an explorer departs from).
  void purge_race(const std::vector<Purged>& purged) {
    struct Heir {
      Txn* txn;
      Purged where;
      bool exclusive;
    };
    std::vector<Heir> heirs;
    for (const Purged& p : purged)
      for (const Lock* l : p.table->locks[p.index].on(p.entry)) {
        auto t = txns.find(l->txn);
        if (!l->granted || l->insert_intention || t == txns.end()) continue;
        // Under READ COMMITTED an exclusive lock is not inherited (lock_rec_inherit_to_gap).
        if (l->exclusive && !gap_locking(t->second->isolation)) continue;
        heirs.push_back({t->second, p, l->exclusive});
      }
    sim::Engine* engine = sim::Engine::current();
    if (heirs.empty() || engine == nullptr || engine->stream(kPurgeStream).pick(2) == 0) return;
    for (const Heir& h : heirs) {
      Table& t = *h.where.table;
      Lock gap = gap_lock(h.exclusive, before(t, h.where.index, h.where.entry), after(t, h.where.index, h.where.entry));
      gap.txn = h.txn->id;
      gap.purged = std::make_shared<const Entry>(h.where.entry);
      if (holds(t, h.where.index, gap)) continue;
      gap.granted = true;
      t.locks[h.where.index].add(std::move(gap));
      ++h.txn->lock_structs;
    }
  }

  // Ends the transaction: its locks go and waiters are granted.
  void finish(Txn& txn) {
    drop_waiting(txn);
    release_locks(txn);
    txns.erase(txn.id);
    txn.id = 0;  // marks it ended; the session drops it
  }

  std::uint64_t read_view(Txn& txn) {
    if (!gap_locking(txn.isolation)) return commits;  // a fresh view per statement (READ UNCOMMITTED: none)
    if (!txn.view) txn.view = commits;
    return *txn.view;
  }

  // --- Statements ------------------------------------------------------------

  // One range of an index's keys: [lo, hi], each end open or closed, or absent (unbounded).
  struct Range {
    std::optional<Value> lo{}, hi{};
    bool lo_closed = true, hi_closed = true;
    bool contains_above_lo(const Value& v) const { return !lo || (lo_closed ? v >= *lo : v > *lo); }
    bool below_hi(const Value& v) const { return !hi || (hi_closed ? v <= *hi : v < *hi); }
    /// The one value of `[v, v]` (`k BETWEEN 'd' AND 'd'`), which the server reads as `k = v`.
    std::optional<Value> point() const {
      if (lo && hi && lo_closed && hi_closed && *lo == *hi) return lo;
      return std::nullopt;
    }
  };

  // The access path a WHERE clause gives, as docs/sql.md describes the model's choice:
  // `id = v`, then `key = v` (a point on the primary key, or the key index's first columns
  // fixed to one value each); `id IN (...)` (points on the primary key); `key IN (...)`
  // (points on the key index, each searched as `key = v`; `key = v OR key = w` is the same
  // list); `key = v OR id = w` (both indexes searched, the rows merged); a range of id, then of
  // the key's first column (from <, <=, >, >= and BETWEEN; one of a single value is a point);
  // else a scan of the clustered index.
  struct Path {
    int index = kPrimary;
    std::optional<Key> key{};       // a point: an id, or a prefix of the key index's keys
    enum class By { point_or_scan, points, ranges, merged } by = By::point_or_scan;
    std::vector<Value> points{};    // By::points: points of `index` (ids, or values of a secondary index's next column), in order, each once
    std::vector<Range> ranges{};    // By::ranges: ranges of `index`, in order
    // Points and ranges on a secondary index: its first columns held, each prefix followed by
    // every point or range of the next column, prefixes in order, never none (`merchant IN (1,
    // 2) AND request = 'a'`: prefixes (1), (2), point 'a').
    boost::container::small_vector<Key, 1> prefixes{Key{}};  // (inline: a path is made for every search)
    std::vector<Path> parts{};      // By::merged: the paths whose rows are merged, in the order they are read
  };
  Path path_for(const Table& t, const Statement& s) const {
    Path p = weighed_path(t, s);
    if (costs_more_than_scan(t, s, p)) {
      // A search after an equality on the index's first columns becomes the lookup of those
      // columns alone (MariaDB's ref access, which its optimizer weighs by another rule), the
      // rest of the search an index condition (pushed_condition); another, a scan.
      if (p.by != Path::By::point_or_scan && p.prefixes.size() == 1 && !p.prefixes.front().empty())
        p = Path{p.index, std::move(p.prefixes.front())};
      else
        p = Path{kPrimary, std::nullopt};
    }
    // A table keyed by other columns is scanned in its primary key's order (clustered_key).
    if (t.schema.clustered_key && p.index == kPrimary && p.by == Path::By::point_or_scan && !p.key)
      return Path{.index = kKey, .by = Path::By::ranges, .ranges = {Range{}}};
    return p;
  }
  Path weighed_path(const Table& t, const Statement& s) const {
    if (t.schema.indexes.empty()) return path_on(t, s, kKey);
    // Several secondary indexes: each weighed as if it were the only one. Those that beat the
    // primary key's paths are searched as MariaDB's optimizer weighs them by the rows it
    // counts in each (its index dives): a unique search of a whole key first, then the fewest
    // entries visited, then the first in MariaDB's order of keys (secondary; conformance
    // second-index-*). None: the
    // primary key's path, the same whichever index it was weighed against.
    std::optional<Path> best, primary;
    std::pair<int, std::size_t> best_cost{};
    for (const int index : secondary(t)) {
      Path p = path_on(t, s, index);
      if (p.index == kPrimary) {  // (an index merge of the key index and the primary key before the others)
        if (!primary || p.by == Path::By::merged) primary = std::move(p);
        continue;
      }
      const std::pair<int, std::size_t> cost = path_cost(t, p);
      if (!best || cost < best_cost) best = std::move(p), best_cost = cost;
    }
    return best ? std::move(*best) : std::move(*primary);
  }

  // How a search by `p` of a secondary index is weighed: 0 for a unique search of a whole key,
  // 1 otherwise, then the live entries it visits (counted up to kMostCounted).
  std::pair<int, std::size_t> path_cost(const Table& t, const Path& p) const {
    if (finds_one(t, p)) return {0, 1};
    return {1, entries_visited(t, p, kMostCounted + 1)};
  }
  static bool finds_one(const Table& t, const Path& p) {
    return p.by == Path::By::point_or_scan && p.key->size() >= width(t, p.index) && unique_index(t, p.index) && !has_null(*p.key);
  }
  static constexpr std::size_t kMostCounted = 1000;

  // Whether MariaDB scans the clustered index rather than search a secondary index by `p`, as
  // its range optimizer weighs them (sql/opt_range.cc, MariaDB 10.11): each entry the search
  // finds costs a lookup of its row and a comparison, 1.2, each range or point searched 0.125
  // more, and 0.01; the scan costs 0.2 a row and 3.1 (a table whose statistics count one page,
  // as a table just filled has). A search that costs no less than the scan is not made:
  // measured with EXPLAIN on tables of 4 to 3,000 rows, the server searched a range of r rows
  // of n exactly where 6r < n + 15.5 (conformance scan-instead-*). A search is kept whatever
  // it costs where a LIMIT asks for fewer rows than the table has, or where the index holds
  // every column a SELECT reads (its list, WHERE and ORDER BY: a covering index); and a lookup
  // of the index's first columns is kept where the WHERE also bounds the column after them,
  // which the optimizer weighs by another rule (conformance scan-instead-ref-*).
  bool costs_more_than_scan(const Table& t, const Statement& s, const Path& p) const {
    if (p.index == kPrimary || p.index == clustered(t) || p.by == Path::By::merged || finds_one(t, p)) return false;
    const std::size_t rows = t.rows.size();
    if (s.limit && static_cast<std::uint64_t>(s.offset) + static_cast<std::uint64_t>(*s.limit) < rows) return false;
    const std::vector<std::string> columns = extended_columns(t, p.index);
    if (covers(columns, s)) return false;
    std::size_t searches = 1;
    if (p.by == Path::By::points) searches = p.prefixes.size() * p.points.size();
    if (p.by == Path::By::ranges) searches = p.prefixes.size() * p.ranges.size();
    // A lookup of the index's first columns where the WHERE also bounds the next: the server
    // weighed the search of both (a range, which it may leave), then looks up the first alone.
    if (p.by == Path::By::point_or_scan && p.key->size() < columns.size() && bounds(s, columns[p.key->size()], holds_text(t, columns[p.key->size()])))
      return false;
    // In two-hundredths: the search costs 240 an entry, 25 a search and 2; the scan 40 a row
    // and 620. Entries are counted only as far as that decides.
    const std::uint64_t scan = 40 * static_cast<std::uint64_t>(rows) + 620;
    const std::uint64_t fixed = 25 * static_cast<std::uint64_t>(searches) + 2;
    if (fixed >= scan) return true;
    const std::size_t enough = static_cast<std::size_t>((scan - fixed + 239) / 240);  // entries that cost no less
    return entries_visited(t, p, enough) >= enough;
  }
  // A secondary index's columns, then the primary key's, which its entries end with (MariaDB's
  // extended keys).
  static std::vector<std::string> extended_columns(const Table& t, int index) {
    std::vector<std::string> columns = columns_of(t, index);
    if (!t.schema.clustered_key) columns.push_back("id");
    return columns;
  }
  // Whether the WHERE bounds `column`: holds it to values or to a range.
  static bool bounds(const Statement& s, const std::string& column, bool text) {
    return held_values(s, column) || range_of(s, column, text);
  }
  // Whether `columns` hold every column a SELECT reads (StatementExtra::reads_only, the WHERE,
  // ORDER BY), or a NOT EXISTS subquery's WHERE, so that the index alone answers it.
  static bool covers(const std::vector<std::string>& columns, const Statement& s) {
    const auto has = [&](const std::string& column) { return std::find(columns.begin(), columns.end(), column) != columns.end(); };
    if (s.kind == Statement::Kind::select) {
      if (!s.more().reads_only || !std::all_of(s.more().reads_only->begin(), s.more().reads_only->end(), has)) return false;
    } else if (s.kind != Statement::Kind::insert_if_absent) {  // (its NOT EXISTS subquery selects 1)
      return false;
    }
    if (!std::all_of(s.where.begin(), s.where.end(), [&](const Condition& c) { return has(c.column); })) return false;
    if (!std::all_of(s.more().order_by.begin(), s.more().order_by.end(), [&](const auto& o) { return has(o.first); })) return false;
    return std::all_of(s.more().filter.begin(), s.more().filter.end(), [&](const Expr& e) { return reads_only(e, has); });
  }
  template <class Has>
  static bool reads_only(const Expr& e, const Has& has) {
    if (e.kind == Expr::Kind::column && !has(e.column)) return false;
    return std::all_of(e.args.begin(), e.args.end(), [&](const Expr& a) { return reads_only(a, has); });
  }

  // The live entries a search by `p` of a secondary index visits, counted up to `most`.
  std::size_t entries_visited(const Table& t, const Path& p, std::size_t most) const {
    std::size_t counted = 0;
    const auto& entries = entries_of(t, p.index);
    const auto count = [&](const Key& prefix) {
      for (auto it = entries.lower_bound(Entry{prefix, kBeforeAll}); it != entries.end() && it->begins_with(prefix) && counted < most; ++it)
        if (live_entry(t, p.index, it->entry())) ++counted;
    };
    switch (p.by) {
      case Path::By::point_or_scan: count(*p.key); break;
      case Path::By::points:
        for (const Key& prefix : p.prefixes)
          for (const Value& point : p.points) {
            Key key = prefix;
            key.push_back(point);
            count(key);
          }
        break;
      case Path::By::ranges:
        for (const Key& prefix : p.prefixes)
          for (const Range& r : p.ranges) {
            Key from = prefix;
            if (r.lo) from.push_back(*r.lo);
            for (auto it = entries.lower_bound(Entry{from, kBeforeAll}); it != entries.end() && it->begins_with(prefix) && counted < most; ++it) {
              const Entry e = it->entry();
              if (!r.below_hi(e.key[prefix.size()])) break;
              if (r.contains_above_lo(e.key[prefix.size()]) && live_entry(t, p.index, e)) ++counted;
            }
          }
        break;
      case Path::By::merged: break;
    }
    return counted;
  }

  // The path a WHERE clause gives with one secondary index (`index`; kKey on a table without
  // one), in the order docs/sql.md lists.
  Path path_on(const Table& t, const Statement& s, int index) const {
    // `id = NULL` or `key = NULL` (a `?` bound to NULL) is never true: MySQL's "Impossible
    // WHERE" reads nothing and locks nothing.
    const bool has = index != kKey || indexed(t);
    const std::vector<std::string> key_columns = has ? columns_of(t, index) : std::vector<std::string>{};
    for (const Condition& c : s.where)
      if (c.op == Condition::Op::eq && is_null(c.value) &&
          (c.column == "id" || std::find(key_columns.begin(), key_columns.end(), c.column) != key_columns.end()))
        return {.index = kPrimary, .by = Path::By::points};
    for (const Condition& c : s.where)
      if (c.op == Condition::Op::eq && c.column == "id") return {kPrimary, Key{c.value}};
    if (has)
      if (auto prefix = key_prefix(key_columns, s, false)) return prefix_path(t, index, s, {std::move(*prefix)});
    if (auto id = folded_point(s, "id")) return {kPrimary, Key{*id}};
    if (has)
      if (auto prefix = key_prefix(key_columns, s, true)) return prefix_path(t, index, s, {std::move(*prefix)});
    if (has && is_null_term(s, key_columns.front())) return {index, Key{Value{Null{}}}};  // key IS NULL: the NULL entries
    if (auto in = in_list(s, "id")) {
      std::vector<Value> ids;
      for (const Value& v : *in)
        if (std::holds_alternative<std::int64_t>(v)) ids.push_back(v);  // another can match no id
      return {.index = kPrimary, .by = Path::By::points, .points = std::move(ids)};
    }
    if (has && in_list(s, key_columns.front()))  // each key a search of its own, as `key = v` is (conformance in-*-rr)
      return prefix_path(t, index, s, {Key{}});
    if (has && index == kKey)
      if (auto merged = index_merge(t, s)) return std::move(*merged);
    if (auto r = range_of(s, "id")) {
      if (auto v = r->point(); v && std::holds_alternative<std::int64_t>(*v)) return {kPrimary, Key{*v}};
      return {.index = kPrimary, .by = Path::By::ranges, .ranges = {*r}};
    }
    if (has)
      if (auto r = range_of(s, key_columns.front(), holds_text(t, key_columns.front()))) {
        if (auto v = r->point()) return {.index = index, .by = Path::By::points, .points = {*v}};
        // A comparison is never true of NULL: the range starts after the NULL entries, as
        // MySQL's range optimizer writes `k < 'm'` as NULL < k < 'm'.
        if (!r->lo) r->lo = Value{Null{}}, r->lo_closed = false;
        return {.index = index, .by = Path::By::ranges, .ranges = {*r}};
      }
    return {kPrimary, std::nullopt};
  }

  // The path of a secondary index's first columns, each held to one value or to a list of them
  // (every combination a prefix, in order), as MariaDB's range optimizer builds it: one point
  // of a single prefix that covers what the WHERE holds; where it lists a column's values
  // (`merchant = 1 AND request IN ('a', 'b')`, `merchant IN (1, 2) AND request = 'a'`), a
  // point of each after each prefix (conformance in-second-column-*-rr, composite-in-*-rr);
  // where it then bounds the next column (`merchant IN (1, 2) AND request > 'a'`), that range
  // among each prefix's entries. Past kMostPrefixes combinations, the further columns only
  // filter the rows.
  static Path prefix_path(const Table& t, int index, const Statement& s, boost::container::small_vector<Key, 1> prefixes) {
    const std::vector<std::string> columns = columns_of(t, index);
    std::size_t next = prefixes.front().size();
    std::optional<std::vector<Value>> last;  // the last column held, not yet joined to the prefixes
    for (; next < columns.size(); ++next) {
      std::optional<std::vector<Value>> values = held_values(s, columns[next]);
      if (!values) break;
      // `m IN (NULL)`: no value, nothing to search (and every prefix list stays non-empty).
      if (values->empty()) return {.index = index, .by = Path::By::points, .prefixes = std::move(prefixes)};
      if (last) {
        if (prefixes.size() * last->size() * values->size() > kMostPrefixes) break;
        prefixes = joined(prefixes, *last);
      }
      last = std::move(values);
    }
    if (next < columns.size())
      if (auto r = range_of(s, columns[next], holds_text(t, columns[next]))) {
        if (last) prefixes = joined(prefixes, *last);
        if (auto v = r->point()) return {.index = index, .by = Path::By::points, .points = {*v}, .prefixes = std::move(prefixes)};
        if (!r->lo) r->lo = Value{Null{}}, r->lo_closed = false;  // past the NULLs, as for the first column
        return {.index = index, .by = Path::By::ranges, .ranges = {*r}, .prefixes = std::move(prefixes)};
      }
    if (last) return {.index = index, .by = Path::By::points, .points = std::move(*last), .prefixes = std::move(prefixes)};
    return {index, std::move(prefixes.front())};
  }
  static constexpr std::size_t kMostPrefixes = 1024;
  // Each prefix followed by each value, in order.
  static boost::container::small_vector<Key, 1> joined(const boost::container::small_vector<Key, 1>& prefixes,
                                                       const std::vector<Value>& values) {
    boost::container::small_vector<Key, 1> out;
    out.reserve(prefixes.size() * values.size());
    for (const Key& prefix : prefixes)
      for (const Value& v : values) {
        out.push_back(prefix);
        out.back().push_back(v);
      }
    return out;
  }
  // The values the WHERE holds `column` to: one (`column = v`, an expression of constants, or
  // IS NULL) or a list (`column IN (...)`); none when it holds it to neither.
  static std::optional<std::vector<Value>> held_values(const Statement& s, const std::string& column) {
    for (const Condition& c : s.where)
      if (c.op == Condition::Op::eq && c.column == column) return std::vector<Value>{c.value};
    if (auto v = folded_point(s, column)) return std::vector<Value>{*v};
    if (is_null_term(s, column)) return std::vector<Value>{Value{Null{}}};
    return in_list(s, column);
  }

  // An index's first columns (`columns`) the WHERE fixes to one value each (`merchant = ? AND
  // request = ?`), a prefix of its keys; none when it does not fix the first. The first
  // column counts by `column = value` only, unless `folded_first` (then also by an expression
  // of constants, which the path weighs after `id`); a further one by either, or IS NULL.
  static std::optional<Key> key_prefix(const std::vector<std::string>& columns, const Statement& s, bool folded_first) {
    Key prefix;
    for (const std::string& column : columns) {
      std::optional<Value> v;
      for (const Condition& c : s.where)
        if (c.op == Condition::Op::eq && c.column == column) {
          v = c.value;
          break;
        }
      if (!v && (folded_first || !prefix.empty())) v = folded_point(s, column);
      if (!v && !prefix.empty() && is_null_term(s, column)) v = Value{Null{}};
      if (!v) break;
      prefix.push_back(std::move(*v));
    }
    if (prefix.empty()) return std::nullopt;
    return prefix;
  }

  // `column IS NULL` among the WHERE's terms.
  static bool is_null_term(const Statement& s, const std::string& column) {
    return std::any_of(s.more().filter.begin(), s.more().filter.end(), [&](const Expr& e) {
      return e.kind == Expr::Kind::is_null && !e.negated && e.args[0].kind == Expr::Kind::column && e.args[0].column == column;
    });
  }

  // `column IN (v, ...)`, or `column = v OR column = w ...`, among the WHERE's terms: its
  // values sorted and each once (a value of the other type than the column's never matches a
  // row the index could find). MariaDB's range optimizer makes the same list of both
  // (conformance in-or-equalities-rr).
  static std::optional<std::vector<Value>> in_list(const Statement& s, const std::string& column) {
    for (const Expr& e : s.more().filter) {
      std::optional<std::vector<Value>> values = listed(e, s, column);
      if (!values) continue;
      std::sort(values->begin(), values->end());
      values->erase(std::unique(values->begin(), values->end()), values->end());
      return values;
    }
    return std::nullopt;
  }
  // The constants `e` holds `column` to, or none when it is not such a list.
  static std::optional<std::vector<Value>> listed(const Expr& e, const Statement& s, const std::string& column) {
    const auto of_column = [&](const Expr& x) { return x.kind == Expr::Kind::column && x.column == column; };
    std::vector<Value> values;
    if (e.kind == Expr::Kind::in && !e.negated && of_column(e.args[0])) {
      for (std::size_t i = 1; i < e.args.size(); ++i) {
        if (e.args[i].kind == Expr::Kind::null) continue;  // NULL matches nothing
        auto v = constant_of(e.args[i], s);
        if (!v) return std::nullopt;
        values.push_back(*v);
      }
      return values;
    }
    if (e.kind == Expr::Kind::compare && e.op == Expr::Op::eq && of_column(e.args[0])) {
      auto v = constant_of(e.args[1], s);
      if (!v) return std::nullopt;
      if (!is_null(*v)) values.push_back(*v);  // `= NULL` matches nothing
      return values;
    }
    if (e.kind == Expr::Kind::logical_or) {
      for (const Expr& branch : e.args) {
        auto part = listed(branch, s, column);
        if (!part) return std::nullopt;
        values.insert(values.end(), part->begin(), part->end());
      }
      return values;
    }
    return std::nullopt;
  }

  // `key = v OR id = w` (each branch a list or a range of the key index's first column or of
  // id, and both indexes named): MariaDB's index merge, a search of the key index for its
  // values and ranges, then of the primary key for its ids and ranges, each as it alone would
  // be searched (but for a range of the key index, the row of the entry past it is locked too,
  // as the server does there for a locking read), their rows merged in id order (conformance
  // index-merge-*). The server weighs it against a scan by its statistics; measured on MariaDB
  // 10.11 (docs/sql.md), it merged 2 searches from 4 rows on, 3 from 6, 4 from 13 and 10 of
  // 100, and scanned past those, and a LIMIT made it scan in id order. The model merges where
  // the points and the rows of the ranges number at most 2 + (rows - 4) / 8, from 4 rows,
  // without LIMIT: never where the server scanned, so that past the rule it locks more than
  // the server, never less. None for another WHERE.
  std::optional<Path> index_merge(const Table& t, const Statement& s) const {
    if (s.limit) return std::nullopt;
    const std::string& key_column = t.schema.key_column;
    for (const Expr& e : s.more().filter) {
      if (e.kind != Expr::Kind::logical_or) continue;
      Merge m;
      if (!merge_branches(e, s, key_column, holds_text(t, key_column), m)) continue;
      if ((m.ids.empty() && m.id_ranges.empty()) || (m.keys.empty() && m.key_ranges.empty())) continue;
      for (auto* list : {&m.ids, &m.keys}) {
        std::sort(list->begin(), list->end());
        list->erase(std::unique(list->begin(), list->end()), list->end());
      }
      for (Range& r : m.key_ranges)  // past the NULLs, as a range of the index alone starts
        if (!r.lo) r.lo = Value{Null{}}, r.lo_closed = false;
      const std::size_t rows = t.rows.size();
      if (rows < 4) return std::nullopt;
      const std::size_t most = 2 + (rows - 4) / 8;
      std::size_t searched = m.ids.size() + m.keys.size();
      for (const Range& r : m.key_ranges) searched += rows_in(t, kKey, r, most);
      for (const Range& r : m.id_ranges) searched += rows_in(t, kPrimary, r, most);
      if (searched > most) return std::nullopt;
      Path merged{.index = kPrimary, .by = Path::By::merged};
      if (!m.keys.empty()) merged.parts.push_back({.index = kKey, .by = Path::By::points, .points = std::move(m.keys)});
      if (!m.key_ranges.empty()) merged.parts.push_back({.index = kKey, .by = Path::By::ranges, .ranges = std::move(m.key_ranges)});
      if (!m.ids.empty()) merged.parts.push_back({.index = kPrimary, .by = Path::By::points, .points = std::move(m.ids)});
      if (!m.id_ranges.empty())
        merged.parts.push_back({.index = kPrimary, .by = Path::By::ranges, .ranges = std::move(m.id_ranges)});
      return merged;
    }
    return std::nullopt;
  }
  // What an index merge searches: each index's points and ranges.
  struct Merge {
    std::vector<Value> ids, keys;
    std::vector<Range> id_ranges, key_ranges;
  };
  // Sorts the OR's branches into what they search; false when one searches neither index.
  static bool merge_branches(const Expr& e, const Statement& s, const std::string& key_column, bool text, Merge& m) {
    if (e.kind == Expr::Kind::logical_or)
      return std::all_of(e.args.begin(), e.args.end(),
                         [&](const Expr& branch) { return merge_branches(branch, s, key_column, text, m); });
    if (auto listed_ids = listed(e, s, "id")) {
      for (Value& v : *listed_ids)
        if (std::holds_alternative<std::int64_t>(v)) m.ids.push_back(std::move(v));  // another can match no id
      return true;
    }
    if (auto listed_keys = listed(e, s, key_column)) {
      m.keys.insert(m.keys.end(), listed_keys->begin(), listed_keys->end());
      return true;
    }
    if (auto r = branch_range(e, s, "id", false)) {
      if (!r->lo || std::holds_alternative<std::int64_t>(*r->lo)) m.id_ranges.push_back(std::move(*r));
      return true;  // (a string's bound matches no id)
    }
    if (auto r = branch_range(e, s, key_column, text)) {
      m.key_ranges.push_back(std::move(*r));
      return true;
    }
    return false;
  }
  // The range a branch of an OR gives `column`: a bound, or an AND of bounds of it alone.
  static std::optional<Range> branch_range(const Expr& e, const Statement& s, const std::string& column, bool text) {
    Range r;
    if (e.kind != Expr::Kind::logical_and) return bound_by(e, s, column, text, r) ? std::optional<Range>(r) : std::nullopt;
    for (const Expr& term : e.args)
      if (!bound_by(term, s, column, text, r)) return std::nullopt;
    return r;
  }
  // How many rows a range of `index` holds (its live entries), for the merge's cost: past
  // `most`, most + 1.
  std::size_t rows_in(const Table& t, int index, const Range& r, std::size_t most) const {
    std::optional<Entry> at;
    if (index == kKey) {
      at = after(t, kKey, Entry{Key{r.lo.value_or(Value{Null{}})}, kBeforeAll});
    } else if (!r.lo) {
      at = first_entry(t, kPrimary);
    } else {
      const Entry start = primary_entry(std::get<std::int64_t>(*r.lo));
      at = live_entry(t, kPrimary, start) ? std::optional<Entry>(start) : after(t, kPrimary, start);
    }
    std::size_t n = 0;
    for (; at && n <= most; at = after(t, index, *at)) {
      if (!r.contains_above_lo(at->key.front())) continue;
      if (!r.below_hi(at->key.front())) break;
      ++n;
    }
    return n;
  }

  // `column = (an expression of constants)` among the WHERE's terms: `id = ? + 1`.
  static std::optional<Value> folded_point(const Statement& s, const std::string& column) {
    if (column.empty()) return std::nullopt;
    for (const Expr& e : s.more().filter)
      if (e.kind == Expr::Kind::compare && e.op == Expr::Op::eq && e.args[0].kind == Expr::Kind::column && e.args[0].column == column)
        if (auto v = constant_of(e.args[1], s); v && (column != "id" || std::holds_alternative<std::int64_t>(*v))) return v;
    return std::nullopt;
  }

  // The value of an expression of constants (literals, `?`s, arithmetic), as the optimizer
  // folds it; none when it reads a column, is NULL or fails.
  static std::optional<Value> constant_of(const Expr& e, const Statement& s) {
    std::vector<const Expr*> todo{&e};
    while (!todo.empty()) {
      const Expr* x = todo.back();
      todo.pop_back();
      if (x->kind == Expr::Kind::column || x->kind == Expr::Kind::inserted) return std::nullopt;
      for (const Expr& a : x->args) todo.push_back(&a);
    }
    static const Values kNoRow;
    try {
      return evaluate(e, Scope{kNoRow, s.more().args});
    } catch (const ExprError&) {
      return std::nullopt;  // the statement reports it when it evaluates the term
    }
  }

  // The range `column`'s comparisons and BETWEENs give, if any.
  // Whether `column` holds strings (its default's type; the key column's, key_text).
  static bool holds_text(const Table& t, const std::string& column) {
    if (column == t.schema.key_column) return t.schema.key_text;
    const auto it = t.schema.columns.find(column);
    return it == t.schema.columns.end() || std::holds_alternative<std::string>(it->second);
  }

  // The range `column LIKE 'abc%'` bounds a string column to: its pattern's text before the
  // first wildcard, up to every string that begins with it ([abc, abc\xff), bytes compared),
  // the range MariaDB's optimizer reads (conformance range-like-prefix-rr); a pattern with no
  // wildcard, that one string. None where the pattern begins with a wildcard.
  static std::optional<std::pair<std::string, bool>> like_prefix(const std::string& pattern) {
    std::string prefix;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
      if (pattern[i] == '%' || pattern[i] == '_') return prefix.empty() ? std::nullopt : std::optional(std::pair{prefix, false});
      if (pattern[i] == '\\' && i + 1 < pattern.size()) ++i;
      prefix += pattern[i];
    }
    return std::pair{prefix, true};
  }

  // Narrows `r` by the bound the term `e` puts on `column`, if it is one: a comparison with an
  // expression of constants (`id <= ? + 5`), BETWEEN, or on a string column LIKE 'abc%' (the
  // keys beginning with abc; LIKE 'abc' the point). Returns whether it was.
  static bool bound_by(const Expr& e, const Statement& s, const std::string& column, bool text, Range& r) {
    const auto lower = [&](const Value& v, bool closed) {
      if (!r.lo || v > *r.lo || (v == *r.lo && !closed)) r.lo = v, r.lo_closed = closed;
    };
    const auto upper = [&](const Value& v, bool closed) {
      if (!r.hi || v < *r.hi || (v == *r.hi && !closed)) r.hi = v, r.hi_closed = closed;
    };
    const auto constant = [&](const Expr& a) { return constant_of(a, s); };
    if (e.args.empty() || e.args[0].kind != Expr::Kind::column || e.args[0].column != column) return false;
    if (e.kind == Expr::Kind::compare) {
      const auto v = constant(e.args[1]);
      if (!v) return false;
      switch (e.op) {
        case Expr::Op::gt: lower(*v, false); return true;
        case Expr::Op::ge: lower(*v, true); return true;
        case Expr::Op::lt: upper(*v, false); return true;
        case Expr::Op::le: upper(*v, true); return true;
        default: return false;
      }
    }
    if (e.kind == Expr::Kind::between && !e.negated) {
      const auto lo = constant(e.args[1]), hi = constant(e.args[2]);
      if (!lo || !hi) return false;
      lower(*lo, true);
      upper(*hi, true);
      return true;
    }
    if (e.kind == Expr::Kind::like && !e.negated && text) {
      const auto pattern = constant(e.args[1]);
      if (!pattern || !std::holds_alternative<std::string>(*pattern)) return false;
      const auto prefix = like_prefix(std::get<std::string>(*pattern));
      if (!prefix) return false;
      lower(Value{prefix->first}, true);
      if (prefix->second) upper(Value{prefix->first}, true);
      else upper(Value{prefix->first + '\xff'}, false);  // no UTF-8 text has the byte 0xff
      return true;
    }
    return false;
  }

  static std::optional<Range> range_of(const Statement& s, const std::string& column, bool text = false) {
    Range r;
    bool any = false;
    const auto lower = [&](const Value& v, bool closed) {
      if (!r.lo || v > *r.lo || (v == *r.lo && !closed)) r.lo = v, r.lo_closed = closed;
      any = true;
    };
    const auto upper = [&](const Value& v, bool closed) {
      if (!r.hi || v < *r.hi || (v == *r.hi && !closed)) r.hi = v, r.hi_closed = closed;
      any = true;
    };
    for (const Condition& c : s.where) {
      if (c.column != column) continue;
      switch (c.op) {
        case Condition::Op::gt: lower(c.value, false); break;
        case Condition::Op::ge: lower(c.value, true); break;
        case Condition::Op::lt: upper(c.value, false); break;
        case Condition::Op::le: upper(c.value, true); break;
        default: break;
      }
    }
    for (const Expr& e : s.more().filter) any |= bound_by(e, s, column, text, r);
    if (!any) return std::nullopt;
    return r;
  }

  // The entries a search by `p` visits, in index order.
  std::vector<Entry> visited(const Table& t, const Path& p) const {
    if (p.index != kPrimary) return entries_with(t, p.index, *p.key);
    std::vector<Entry> out;
    if (p.key) {
      const std::int64_t id = std::get<std::int64_t>(p.key->front());
      if (live_entry(t, kPrimary, primary_entry(id))) out.push_back(primary_entry(id));
      return out;
    }
    sim::work(t.rows.size());  // a full scan: every row, counted against the trial's event budget
    for (const auto& [id, row] : t.rows)
      if (live(*row)) out.push_back(primary_entry(id));
    return out;
  }

  static Lock record_lock(const Entry& at, bool exclusive, bool next_key = false, std::optional<Entry> lo = {}) {
    Lock l;
    l.exclusive = exclusive;
    l.record = true;
    l.at = at;
    if (next_key) {
      l.gap = true;
      l.lo = std::move(lo);
      l.hi = at;
    }
    return l;
  }
  static Lock gap_lock(bool exclusive, std::optional<Entry> lo, std::optional<Entry> hi) {
    Lock l;
    l.exclusive = exclusive;
    l.gap = true;
    l.lo = std::move(lo);
    l.hi = std::move(hi);
    return l;
  }
  static Lock insert_intention(const Entry& at) {
    Lock l;
    l.exclusive = true;
    l.insert_intention = true;
    l.at = at;
    return l;
  }

  // Drops this transaction's record lock on `at` (READ COMMITTED lets go of rows that do
  // not match).
  void unlock_record(Txn& txn, Table& t, int index, const Entry& at) {
    t.locks[index].erase_if([&](const Lock& l) { return l.txn == txn.id && l.granted && l.record && !l.gap && l.at == at; });
    regrant(t.locks[index]);
  }

  // Locks what a locking read or DML finds by its WHERE, as InnoDB's row_search_mvcc does,
  // then returns the rows whose latest version matches:
  // - a unique search (id, or the key on a unique index) that finds a row that is not
  //   delete-marked locks no gap after it: on the primary key its record only, on the
  //   secondary index its entry next-key (MariaDB 10.11 locks the gap below it too);
  //   `id IN (...)`, and `key IN (...)` on a unique index, is such a search for each value;
  // - otherwise, under REPEATABLE READ, each entry visited gets a next-key lock and the gap
  //   after the last one a gap lock (an absent key: the gap it would go in; a scan: the gap
  //   before the supremum); a row found on the secondary index is locked on the primary too;
  //   `key IN (...)` on a plain index is such a search for each value (the entry past each
  //   value's keys keeps its record unlocked: conformance in-nonunique-rr, in-second-column-plain-rr);
  // - a range locks its entries next-key, except an id
  //   equal to a closed lower bound (its record only), and the first entry past its end
  //   next-key too (on the secondary index that entry, and for UPDATE and DELETE its row), or
  //   the gap before the supremum when nothing is past it (conformance range-*-rr);
  // - READ COMMITTED takes record locks only, lets go of rows that do not match (but not of
  //   the entry past a secondary range, scan_range) and, for a DML statement, skips a row
  //   another transaction has locked when its latest committed version does not match
  //   (semi-consistent read).
  std::vector<std::int64_t> locate_locked(Txn& txn, Table& t, const Statement& where, bool exclusive, bool dml) {
    take_table_lock(txn, &t, exclusive);
    const Path p = path_for(t, where);
    txn.enough.reset();
    txn.pushed = dml ? std::nullopt : pushed_condition(t, p, where);  // (UPDATE and DELETE check the whole WHERE on the row)
    if (where.limit && reads_in_order(t, p, where)) txn.enough = static_cast<std::size_t>(where.offset + *where.limit);
    for (;;) {
      std::vector<std::int64_t> kept;
      bool waited = false;
      switch (p.by) {
        case Path::By::ranges:
          for (const Key& prefix : p.prefixes) {
            for (const Range& r : p.ranges)
              if ((waited = scan_range(txn, t, p.index, prefix, r, where, exclusive, dml, kept)) || enough(txn, kept)) break;
            if (waited || enough(txn, kept)) break;
          }
          break;
        case Path::By::points:
          for (const Key& prefix : p.prefixes) {
            for (const Value& point : p.points) {
              Key key = prefix;
              key.push_back(point);
              if ((waited = search(txn, t, Path{p.index, std::move(key)}, where, exclusive, dml, kept)) || enough(txn, kept)) break;
            }
            if (waited || enough(txn, kept)) break;
          }
          break;
        case Path::By::point_or_scan: waited = search(txn, t, p, where, exclusive, dml, kept); break;
        case Path::By::merged:
          for (const Path& part : p.parts) {
            for (const Value& point : part.points)
              if ((waited = search(txn, t, Path{part.index, Key{point}}, where, exclusive, dml, kept))) break;
            for (const Range& r : part.ranges)
              if (!waited && (waited = scan_range(txn, t, part.index, {}, r, where, exclusive, dml, kept, true))) break;
            if (waited) break;
          }
          // A row both indexes find is kept once, and the rows come in id order.
          std::sort(kept.begin(), kept.end());
          kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
          break;
      }
      if (waited) continue;  // the rows may have changed while we waited: look again
      txn.enough.reset();  // (the points and ranges of a path are disjoint: no row is kept twice)
      return kept;
    }
  }

  // Whether a LIMIT read in index order has its rows: the searches after this one are not made
  // (conformance composite-in-limit-rr).
  static bool enough(const Txn& txn, const std::vector<std::int64_t>& kept) { return txn.enough && kept.size() >= *txn.enough; }

  // Whether the path reads rows in the statement's ORDER BY (none: any order), so that a
  // LIMIT ends the scan; otherwise every row the path finds is read and locked, then sorted.
  static bool reads_in_order(const Table& t, const Path& p, const Statement& s) {
    if (p.by == Path::By::merged) return false;  // its rows are sorted once both searches are done
    std::vector<std::string> order{"id"};
    std::vector<std::string> fixed;  // the key columns a point holds to one value: any order of them is the same
    if (p.index != kPrimary) {
      const std::vector<std::string> columns = columns_of(t, p.index);
      // The columns every search holds to the same value: the rows come in the rest's order.
      std::size_t held = p.by == Path::By::point_or_scan ? p.key->size() : p.prefixes.front().size();
      if (p.by != Path::By::point_or_scan)
        for (const Key& prefix : p.prefixes)  // (all of one length)
          held = std::min<std::size_t>(held, std::mismatch(prefix.begin(), prefix.begin() + static_cast<std::ptrdiff_t>(held),
                                                           p.prefixes.front().begin()).first - prefix.begin());
      fixed.assign(columns.begin(), columns.begin() + static_cast<std::ptrdiff_t>(held));
      order.insert(order.begin(), columns.begin() + static_cast<std::ptrdiff_t>(held), columns.end());
    }
    if (s.more().order_by.size() > order.size()) return false;
    for (std::size_t i = 0; i < s.more().order_by.size(); ++i) {
      const auto& [column, descending] = s.more().order_by[i];
      const bool is_fixed = std::find(fixed.begin(), fixed.end(), column) != fixed.end();
      if (descending || (column != order[i] && !is_fixed)) return false;
    }
    return true;
  }

  // Locks the visited entry `e` of `index` (and, on the secondary index, its row) for a
  // locking read or DML, record only or next-key; keeps its id when its latest version
  // matches. Returns whether a lock was waited for (the caller looks again).
  bool visit(Txn& txn, Table& t, int index, const Entry& e, bool record_only, const Statement& where, bool exclusive, bool dml,
             std::vector<std::int64_t>& kept) {
    const bool rr = gap_locking(txn.isolation);
    const std::int64_t id = e.id;
    const RowData& row = *t.rows.at(id);
    const int cx = clustered(t);
    const Entry row_entry = index == cx ? e : record_of(t, id);
    if (!rr && dml) {
      const Version* committed = latest_committed(row);
      Lock probe = record_lock(row_entry, exclusive);
      probe.txn = txn.id;
      const auto& here = t.locks[cx].on(row_entry);  // a record probe waits only for its own entry's locks
      const bool busy = std::any_of(here.begin(), here.end(), [&](const Lock* l) { return l->txn != txn.id && has_to_wait(probe, *l); });
      if (busy && (committed == nullptr || committed->deleted || !matches(committed->values, where))) return false;
    }
    Lock mine = record_lock(row_entry, exclusive);
    mine.txn = txn.id;
    const bool held_before = holds(t, cx, mine);
    Lock on_key = record_lock(e, exclusive);
    on_key.txn = txn.id;
    const bool key_held_before = index != cx && holds(t, index, on_key);
    Got got;
    bool pushed_out = false;  // the entry fails the index condition (pushed_condition)
    if (index != cx) {
      got = lock(txn, t, index, record_lock(e, exclusive, rr && !record_only, before(t, index, e)));
      pushed_out = got == Got::at_once && txn.pushed && !matches(entry_row(txn.pushed->columns, e), txn.pushed->terms);
      if (got == Got::at_once && !pushed_out) got = lock(txn, t, cx, record_lock(row_entry, exclusive));
    } else {
      got = lock(txn, t, cx, record_lock(e, exclusive, rr && !record_only, before(t, cx, e)));
    }
    if (got == Got::after_wait) return true;
    if (got == Got::skipped) return false;  // SKIP LOCKED: another transaction's row
    if (pushed_out) {  // (its row was not locked)
      if (!rr && !key_held_before) unlock_record(txn, t, index, e);
      return false;
    }
    const Version* v = t.rows.count(id) ? current(*t.rows.at(id)) : nullptr;
    const bool match = v != nullptr && !v->deleted && matches(v->values, where);
    if (match) {
      kept.push_back(id);
    } else if (!rr) {
      if (!held_before) unlock_record(txn, t, cx, row_entry);
      if (index != cx && !key_held_before) unlock_record(txn, t, index, e);
    }
    return false;
  }

  // MariaDB's index condition pushdown: the WHERE's terms that read only columns a secondary
  // index's entries hold (its own, then the primary key's) and some column the search by `p`
  // does not fix or bound (`a = 0 AND c = 5` on KEY (a, b, c); `u = 1 AND id >= 3`). InnoDB
  // checks them on each entry a locking read visits, after locking the entry and before
  // locking its row, and goes on without the row where they fail (conformance
  // index-condition-*); UPDATE and DELETE lock the row first. None: no such term, or a search
  // of the clustered index.
  static std::optional<IndexCondition> pushed_condition(const Table& t, const Path& p, const Statement& where) {
    if (p.index == kPrimary || p.index == clustered(t) || p.by == Path::By::merged) return std::nullopt;
    if (where.where.size() + where.more().filter.size() < 2) return std::nullopt;  // the one term is the search's
    std::vector<std::string> columns = extended_columns(t, p.index);
    const std::size_t used = p.by == Path::By::point_or_scan ? p.key->size() : p.prefixes.front().size() + 1;
    const auto in_index = [&](const std::string& column) { return std::find(columns.begin(), columns.end(), column) != columns.end(); };
    const auto beyond = [&](const std::string& column) {
      const auto at = std::find(columns.begin(), columns.end(), column);
      return at != columns.end() && static_cast<std::size_t>(at - columns.begin()) >= used;
    };
    Statement pushed;
    for (const Condition& c : where.where)
      if (beyond(c.column)) pushed.where.push_back(c);
    for (const Expr& e : where.more().filter)
      if (reads_only(e, in_index) && reads_any(e, beyond)) pushed.edit().filter.push_back(e);
    if (pushed.where.empty() && pushed.more().filter.empty()) return std::nullopt;
    if (!pushed.more().filter.empty()) pushed.edit().args = where.more().args;
    return IndexCondition{std::move(pushed), std::move(columns)};
  }
  template <class Pred>
  static bool reads_any(const Expr& e, const Pred& pred) {
    if (e.kind == Expr::Kind::column && pred(e.column)) return true;
    return std::any_of(e.args.begin(), e.args.end(), [&](const Expr& a) { return reads_any(a, pred); });
  }
  // A secondary index's entry as a row of the columns it holds (`columns`: extended_columns);
  // on a table of ids, its last column is id, which the entry holds beside its key.
  static Values entry_row(const std::vector<std::string>& columns, const Entry& e) {
    Values row;
    for (std::size_t i = 0; i < e.key.size() && i < columns.size(); ++i) row.emplace(columns[i], e.key[i]);
    if (e.key.size() < columns.size()) row.emplace(columns.back(), Value{e.id});
    return row;
  }

  // A point search or a scan (Path without ranges).
  bool search(Txn& txn, Table& t, const Path& p, const Statement& where, bool exclusive, bool dml, std::vector<std::int64_t>& kept) {
    const bool rr = gap_locking(txn.isolation);
    // A search for NULL on a unique index is not unique: NULL keys may repeat.
    const bool unique_search =
        p.key && (p.index == kPrimary ||
                  (unique_index(t, p.index) && p.key->size() >= width(t, p.index) && !has_null(*p.key)));
    bool found_unique = false;  // a unique search found its row: no gap to lock
    const std::vector<Entry> entries = visited(t, p);
    for (const Entry& e : entries) {
      const bool delete_marked = current(*t.rows.at(e.id))->deleted;
      const bool unique_hit = unique_search && (p.index == kPrimary || !delete_marked);
      // Found on the primary key (of ids or of other columns): its record only. Found on a unique secondary index: that
      // entry next-key, the gap below it as well (MariaDB 10.11 does: an insert just below the
      // key waits, one just above it does not; conformance unique-key-found-locks-gap-below-rr).
      if (visit(txn, t, p.index, e, unique_hit && p.index == clustered(t), where, exclusive, dml, kept)) return true;
      found_unique |= unique_hit;
      if (enough(txn, kept)) return false;  // LIMIT: the scan ends here
    }
    if (rr && !found_unique) lock(txn, t, p.index, gap_after(t, p, entries, exclusive));  // never waits
    return false;
  }

  // A range of `index`: its entries, then the first past its end (or the gap before the supremum).
  // On the key index, the range is of the column after `prefix` among the entries that
  // begin with it (`merchant = 1 AND request > 'a'`); with no prefix, of its first column.
  // `past_row`: the row of the entry past a range of the key index is locked for a locking read
  // too, as MariaDB does in an index merge (conformance index-merge-range-rr).
  bool scan_range(Txn& txn, Table& t, int index, const Key& prefix, const Range& r, const Statement& where, bool exclusive,
                  bool dml, std::vector<std::int64_t>& kept, bool past_row = false) {
    const bool rr = gap_locking(txn.isolation);
    const auto key_of_entry = [&](const Entry& e) -> const Value& { return e.key[prefix.size()]; };
    const auto inside = [&](const Entry& e) { return index == kPrimary || is_prefix(prefix, e.key); };
    if (r.lo && r.hi && (*r.hi < *r.lo || (*r.lo == *r.hi && !(r.lo_closed && r.hi_closed))))
      return false;  // an empty range reads nothing, as MySQL's "Impossible WHERE"
    // The first live entry at or after the range's start.
    std::optional<Entry> at;
    if (!r.lo && prefix.empty()) {
      at = first_entry(t, index);
    } else if (index == kPrimary) {
      if (!std::holds_alternative<std::int64_t>(*r.lo)) return false;  // no id is a string
      const std::int64_t lo = std::get<std::int64_t>(*r.lo);
      const Entry start = primary_entry(lo);
      at = r.lo_closed && live_entry(t, kPrimary, start) ? std::optional<Entry>(start) : after(t, kPrimary, start);
    } else {
      Key start = prefix;
      if (r.lo) start.push_back(*r.lo);
      at = after(t, index, Entry{std::move(start), !r.lo || r.lo_closed ? kBeforeAll : kAfterAll});
    }
    std::optional<Entry> last = at ? before(t, index, *at) : last_entry(t, index);
    for (; at; at = after(t, index, *at)) {
      sim::work(1);  // each entry of the range, counted against the trial's event budget
      if (inside(*at) && !r.contains_above_lo(key_of_entry(*at))) {  // `k > lo` on an index of several columns starts at lo's keys
        last = at;
        continue;
      }
      if (!inside(*at) || !r.below_hi(key_of_entry(*at))) {
        // The first entry past the range, as MariaDB 10.11 locks it: on the primary key next-key
        // under REPEATABLE READ, read and let go under READ COMMITTED; on the secondary index
        // next-key under REPEATABLE READ and its record under READ COMMITTED, kept, and for
        // UPDATE and DELETE its row's record as well (conformance range-nonunique-rr, -rc,
        // update-range-secondary-rr, -rc, delete-like-prefix-rr).
        if (index == clustered(t)) return rr && lock(txn, t, index, record_lock(*at, exclusive, true, last)) == Got::after_wait;
        if (lock(txn, t, index, record_lock(*at, exclusive, rr, last)) == Got::after_wait) return true;
        return (dml || past_row) && lock(txn, t, clustered(t), record_lock(record_of(t, at->id), exclusive)) == Got::after_wait;
      }
      // A closed start on a whole primary key that finds its row locks the record only.
      const bool exact_start = (index == kPrimary || (index == clustered(t) && prefix.size() + 1 >= width(t, index))) && r.lo &&
                               r.lo_closed && key_of_entry(*at) == *r.lo;
      if (visit(txn, t, index, *at, exact_start, where, exclusive, dml, kept)) return true;
      if (enough(txn, kept)) return false;  // LIMIT: the scan ends here
      last = at;
    }
    if (rr) lock(txn, t, index, gap_lock(exclusive, last, std::nullopt));  // up to the supremum; never waits
    return false;
  }

  std::optional<Entry> last_entry(const Table& t, int index) const {
    if (index == kPrimary) {
      for (auto it = t.rows.rbegin(); it != t.rows.rend(); ++it)
        if (live(*it->second)) return primary_entry(it->first);
      return std::nullopt;
    }
    const auto& entries = entries_of(t, index);
    for (auto it = entries.rbegin(); it != entries.rend(); ++it)
      if (Entry e = it->entry(); live_entry(t, index, e)) return e;
    return std::nullopt;
  }

  std::optional<Entry> first_entry(const Table& t, int index) const {
    if (index == kPrimary) {
      for (const auto& [id, row] : t.rows)
        if (live(*row)) return primary_entry(id);
      return std::nullopt;
    }
    for (const StoredEntry& stored : entries_of(t, index))
      if (Entry e = stored.entry(); live_entry(t, index, e)) return e;
    return std::nullopt;
  }

  // The gap a search by `p` ends in, after the entries it visited: for an absent key, the
  // gap it would go in; for a scan, the gap before the supremum.
  Lock gap_after(const Table& t, const Path& p, const std::vector<Entry>& visited, bool exclusive) const {
    const std::optional<Entry> last = visited.empty() ? std::nullopt : std::optional<Entry>(visited.back());
    if (p.index != kPrimary) {
      const Entry below{*p.key, kBeforeAll};
      return gap_lock(exclusive, last ? last : before(t, p.index, below), after_prefix(t, p.index, *p.key));
    }
    if (p.key) {
      const Entry position = primary_entry(std::get<std::int64_t>(p.key->front()));
      return gap_lock(exclusive, before(t, kPrimary, position), after(t, kPrimary, position));
    }
    return gap_lock(exclusive, last, std::nullopt);
  }

  // The row as a result shows it, sharing the version's columns (which hold its id).
  static Row row_of(std::int64_t id, const RowValues& values) {
    Row r{id, values};
    if (values.find("id") != Value{id}) r.values.set("id", Value{id});
    return r;
  }

  std::vector<Row> select(Txn& txn, Table& t, const Statement& s) {
    std::vector<Row> out;
    // SERIALIZABLE reads with shared locks inside an explicit transaction; an autocommit
    // SELECT stays a consistent read, as InnoDB's does.
    const ReadLock lock = s.lock == ReadLock::none && txn.isolation == Isolation::serializable && txn.explicit_
                              ? ReadLock::share
                              : s.lock;
    if (lock != ReadLock::none) {
      for (std::int64_t id : locate_locked(txn, t, s, lock == ReadLock::update, false))
        out.push_back(row_of(id, current(*t.rows.at(id))->values));
      order_and_limit(s, Engine::mariadb, out);
      return out;
    }
    const std::uint64_t view = read_view(txn);
    const auto read = [&](std::int64_t id, const RowData& row) {
      const Version* v = visible(row, txn, view);
      if (v != nullptr && !v->deleted && matches(v->values, s)) out.push_back(row_of(id, v->values));
    };
    // A key the statement names: only its rows can match, and every version holding a key has
    // its entry (kept until no version holds it), in id order as the scan would find them.
    if (!t.schema.indexes.empty()) {  // several indexes: the rows in the order of the one chosen
      const Path p = path_for(t, s);
      if (p.index != kPrimary && p.by == Path::By::point_or_scan) {
        const auto& entries = entries_of(t, p.index);
        for (auto it = entries.lower_bound(Entry{*p.key, kBeforeAll}); it != entries.end() && it->begins_with(*p.key); ++it)
          read(it->id, *t.rows.at(it->id));
      } else {
        sim::work(t.rows.size());
        for (const auto& [id, row] : t.rows) read(id, *row);
        if (p.index != kPrimary)
          std::stable_sort(out.begin(), out.end(),
                           [&](const Row& a, const Row& b) { return key_of(t, p.index, a.values) < key_of(t, p.index, b.values); });
      }
    } else if (const auto named = key_prefix(t.schema.key_columns(), s, false);
               named && (!indexed(t) || t.schema.clustered_key || (named->size() >= width(t, kKey) && must_be_unique(t, kKey, named)) ||
                         path_for(t, s).index == kKey)) {  // (unless the server scans instead: costs_more_than_scan)
      for (auto it = t.entries.lower_bound(Entry{*named, kBeforeAll}); it != t.entries.end() && it->begins_with(*named); ++it)
        read(it->id, *t.rows.at(it->id));
    } else {
      sim::work(t.rows.size());
      for (const auto& [id, row] : t.rows) read(id, *row);
      // A path on the key index returns its rows in the index's order.
      if (path_for(t, s).index == kKey)
        std::stable_sort(out.begin(), out.end(), [&](const Row& a, const Row& b) { return key_of(t, a.values) < key_of(t, b.values); });
    }
    order_and_limit(s, Engine::mariadb, out);
    return out;
  }

  void add_version(Txn& txn, Table& t, std::int64_t id, Version v) {
    if (auto key = key_of(t, v.values)) t.entries.insert(StoredEntry(Entry{*key, id}));
    for (std::size_t i = 0; i < t.more_entries.size(); ++i)
      t.more_entries[i].insert(StoredEntry(Entry{*key_of(t, kExtra + static_cast<int>(i), v.values), id}));
    auto [row, fresh] = t.rows.try_emplace(id);
    if (fresh) row->second = std::make_unique<RowData>();
    bytes += kInnoDbCosts.of_version(v.values) + (fresh ? kInnoDbCosts.row : 0);
    row->second->push(std::move(v));
    txn.undo.push_back({&t, id});
  }

  // A row this transaction deleted is no duplicate of what it inserts.
  static bool deleted_by(const Txn& txn, const RowData& row) {
    const Version* v = current(row);
    return v->deleted && v->txn == txn.id;
  }

  std::int64_t load_row_values(const std::string& name, const Values& given, std::string who) {
    Table& t = table(name);
    std::optional<std::int64_t> explicit_id;
    Values values;
    try {
      values = row_values(t.schema, Engine::mariadb, given, explicit_id);
    } catch (const Failure& e) {
      throw sim::UsageError(e.message);
    }
    if (!explicit_id && t.ids_exhausted) throw sim::UsageError("Out of range value for column 'id' at row 1");
    if (!explicit_id && !t.schema.auto_increment && !t.schema.clustered_key) throw sim::UsageError("Field 'id' doesn't have a default value");
    const std::int64_t id = explicit_id.value_or(t.next_id);
    if (t.rows.count(id)) throw sim::UsageError(duplicate_message(Key{Value{id}}, "PRIMARY"));
    const std::optional<Key> key = key_of(t, values);
    for (const int index : secondary(t))
      if (auto k = key_of(t, index, values); must_be_unique(t, index, k) && !entries_with(t, index, unique_part(t, index, *k)).empty())
        throw sim::UsageError(duplicate_in(t, index, *k));
    t.took_id(id);
    values["id"] = Value{id};
    bytes += Database::row_bytes(values);
    RowData& row = *(t.rows[id] = std::make_unique<RowData>());
    row.push(Version{0, ++commits, false, t.stored(values)});
    const sim::Engine* engine = sim::Engine::current();
    origins.keep(row.origin, std::move(who), 0, engine != nullptr ? engine->now() : sim::Time{});
    if (key) t.entries.insert(StoredEntry(Entry{*key, id}));
    for (std::size_t i = 0; i < t.more_entries.size(); ++i)
      t.more_entries[i].insert(StoredEntry(Entry{*key_of(t, kExtra + static_cast<int>(i), values), id}));
    return id;
  }

  // InnoDB's duplicate check of a new entry `key` in a unique index (row_ins_scan_sec_index_for_duplicate):
  // S next-key (X for `exclusive`) on each entry of the key and on its row, waiting for its
  // writer; the first whose row holds the key is the duplicate. Passed over: the row `own` (an
  // UPDATE's), a row this transaction deleted, and an entry an UPDATE left delete-marked.
  // `waited`: a lock was waited for, and the rows may have changed: look again.
  struct Duplicate {
    bool waited = false;
    std::optional<std::int64_t> id{};
  };
  Duplicate duplicate_of(Txn& txn, Table& t, int index, const Key& key, std::optional<std::int64_t> own, bool exclusive) {
    // On a primary key of other columns, the record only, as on one of ids (row_ins_duplicate_error_in_clust;
    // conformance natural-key-duplicate-check-rr).
    const bool primary = index == clustered(t);
    const bool extended = key.size() > width(t, index);  // a further index's entries of a clustered key's table
    for (const Entry& e : entries_with(t, index, extended ? unique_part(t, index, key) : key)) {
      if (e.id == own || deleted_by(txn, *t.rows.at(e.id))) continue;
      if (lock(txn, t, index, record_lock(e, exclusive, !primary, before(t, index, e))) == Got::after_wait) return {.waited = true};
      if (!primary && lock(txn, t, clustered(t), record_lock(record_of(t, e.id), exclusive)) == Got::after_wait) return {.waited = true};
      if (holds_key(t, index, e)) return {.id = e.id};
    }
    return {};
  }

  // INSERT and its variants, taking InnoDB's locks (row_ins_*):
  // - an explicit id is checked on the primary key: S on the record (X to update or replace
  //   it), waiting for a transaction that wrote it and has not ended (row_ins_duplicate_error_in_clust);
  // - a duplicate check on a unique secondary index takes S on the duplicate (X to update
  //   or replace it), next-key at every isolation level (row_ins_scan_sec_index_for_duplicate
  //   locks LOCK_ORDINARY: under READ COMMITTED too an insert just below the duplicate waits;
  //   conformance duplicate-check-lock-rc), and waits the same way;
  //   after a wait the check runs again, as the duplicate may be gone;
  // - REPLACE deletes each duplicate it finds and goes on inserting;
  // - insert intentions at the new entry's position in each index wait for other
  //   transactions' gap locks covering it;
  // - an explicit id whose record is still there, delete-marked, is rewritten in place,
  //   which takes X on it;
  // - the new entries are X-locked by the inserter (InnoDB's implicit lock).
  Result insert(Txn& txn, Table& t, const Statement& s, const Values& given, const std::string& who,
                std::optional<std::int64_t> auto_id = std::nullopt) {
    Result out;
    std::optional<std::int64_t> explicit_id;
    Values values = row_values(t.schema, Engine::mariadb, given, explicit_id);
    if (!explicit_id && !t.schema.auto_increment && !t.schema.clustered_key)
      throw Failure{Code::no_default, "Field 'id' doesn't have a default value"};
    take_table_lock(txn, &t, true);
    if (!explicit_id && !auto_id && t.schema.auto_increment) take_autoinc(txn, t, s.kind == Statement::Kind::insert_if_absent || s.bulk);
    // The counter's next value is taken now, and lost if the insert fails.
    const std::int64_t id = explicit_id ? *explicit_id : auto_id ? *auto_id : t.new_id();
    if (explicit_id) t.took_id(id);
    out.insert_id = t.schema.auto_increment ? id : 0;  // MySQL reports no id for a table without AUTO_INCREMENT
    const bool exclusive = s.on_duplicate == OnDuplicate::update || s.on_duplicate == OnDuplicate::replace;
    const auto indexes = secondary(t);
    boost::container::small_vector<std::optional<Key>, 2> keys;  // the new row's key in each
    for (const int index : indexes) keys.push_back(key_of(t, index, values));
    for (;;) {
      if (explicit_id) {
        auto row = t.rows.find(id);
        if (row != t.rows.end() && live(*row->second) && !deleted_by(txn, *row->second)) {
          if (lock(txn, t, kPrimary, record_lock(primary_entry(id), exclusive)) == Got::after_wait) continue;
          if (auto done = on_duplicate(txn, t, s, id, duplicate_message(Key{Value{id}}, "PRIMARY"), out, values)) return *done;
          continue;  // replaced
        }
      }
      // Each unique secondary index in turn: the first duplicate found decides.
      bool again = false;  // after a wait, or once REPLACE deleted the duplicate
      for (std::size_t i = 0; i < indexes.size() && !again; ++i) {
        if (!must_be_unique(t, indexes[i], keys[i])) continue;
        const Duplicate d = duplicate_of(txn, t, indexes[i], *keys[i], std::nullopt, exclusive);
        if (d.waited) {
          again = true;
        } else if (d.id) {
          if (auto done = on_duplicate(txn, t, s, *d.id, duplicate_in(t, indexes[i], *keys[i]), out, values))
            return *done;
          again = true;
        }
      }
      if (again) continue;
      bool waited = false;
      for (std::size_t i = 0; i < indexes.size(); ++i)
        if (keys[i]) waited |= lock(txn, t, indexes[i], insert_intention(Entry{*keys[i], id})) == Got::after_wait;
      if (!t.schema.clustered_key) waited |= lock(txn, t, kPrimary, insert_intention(primary_entry(id))) == Got::after_wait;
      if (waited) continue;
      if (t.rows.count(id) && lock(txn, t, kPrimary, record_lock(primary_entry(id), true)) == Got::after_wait) continue;
      put_row(txn, t, id, std::move(values), who);
      out.affected += 1;  // REPLACE: 1 + the rows it deleted
      if (!explicit_id && !txn.generated_id && t.schema.auto_increment) txn.generated_id = id;
      return out;
    }
  }

  // INSERT of one row or several: each in turn, one statement's result (a failure on any
  // row undoes them all, as the statement's).
  // Ids as InnoDB's "consecutive" AUTO_INCREMENT mode (MariaDB's default) hands them to a
  // multi-row INSERT: the statement reserves one per row without an id at its start, those it
  // does not use are lost, and a row INSERT IGNORE skips, or ON DUPLICATE KEY UPDATE turns into
  // an update, gives its id to the next row (conformance multi-row-insert, multi-row-upsert).
  // ON DUPLICATE KEY UPDATE's insert id is then the first id a row was inserted with, or, where
  // none was and a row changed, the last row's (MySQL's write_record and its OK packet).
  Result insert_rows(Txn& txn, Table& t, const Statement& s, const std::string& who) {
    if (s.more().more_rows.empty()) return insert(txn, t, s, s.values, who);
    std::int64_t wanted = s.values.count("id") ? 0 : 1;
    for (const Values& row : s.more().more_rows) wanted += row.count("id") ? 0 : 1;
    if (wanted > 0 && t.schema.auto_increment) take_autoinc(txn, t, false);
    const bool reserve = t.schema.auto_increment && !t.ids_exhausted && t.next_id <= std::numeric_limits<std::int64_t>::max() - wanted;
    std::int64_t next_id = t.next_id;
    const std::int64_t reserved_end = next_id + wanted;
    std::optional<std::int64_t> spare;  // the id of the row IGNORE skipped or an upsert updated
    const bool upsert = s.on_duplicate == OnDuplicate::update;
    std::optional<std::int64_t> first_generated;  // the first id a row was inserted with (upsert)
    Result out;
    const auto one = [&](const Values& row, bool first) {
      std::optional<std::int64_t> auto_id;
      if (reserve && !row.count("id")) auto_id = spare ? *spare : next_id++;
      if (auto_id) spare.reset();
      const Result r = insert(txn, t, s, row, who, auto_id);
      const bool inserted = r.warnings == 0 && (upsert ? r.affected == 1 : r.affected > 0);
      if (auto_id && !inserted) spare = auto_id;
      if (upsert && inserted && !row.count("id") && !first_generated) first_generated = r.insert_id;
      if (first) {
        out = r;
        return;
      }
      out.affected += r.affected;
      out.warnings += r.warnings;
      if (upsert) out.insert_id = r.insert_id;  // the last row's, unless a row was inserted (below)
      else if (out.insert_id == 0) out.insert_id = r.insert_id;
    };
    try {
      one(s.values, true);
      for (const Values& row : s.more().more_rows) one(row, false);
    } catch (const Failure&) {
      if (reserve) t.took_id(reserved_end - 1);
      throw;
    }
    if (reserve) t.took_id(reserved_end - 1);
    if (first_generated) out.insert_id = *first_generated;
    else if (upsert && out.affected == 0) out.insert_id = 0;
    return out;
  }

  void put_row(Txn& txn, Table& t, std::int64_t id, Values values, const std::string& who) {
    // The new entries are X-locked by their inserter (InnoDB's implicit lock).
    Lock x = record_lock(primary_entry(id), true);
    x.txn = txn.id;
    x.granted = true;
    if (!t.schema.clustered_key) t.locks[kPrimary].add(x);  // (a clustered key's entry is its record: below)
    for (const int index : secondary(t))
      if (auto key = key_of(t, index, values)) {
        x.at = Entry{std::move(*key), id};
        t.locks[static_cast<std::size_t>(index)].add(x);
      }
    values["id"] = Value{id};  // stored with the row, so a WHERE on id reads it like any column
    const std::optional<Key> key = key_of(t, values);
    add_version(txn, t, id, Version{txn.id, 0, false, t.stored(values)});
    origins.keep(t.rows.at(id)->origin, who, txn.id, sim::now());
    // An online unique build takes the insert without a check, and logs it: a key another
    // live row holds dooms the build, even if it goes again before the build ends.
    if (t.build && t.build->unique && !t.build->doomed_by && key && !has_null(*key) &&
        entries_with(t, kKey, *key).size() > 1) t.build->doomed_by = key;
  }

  // --- Online DDL --------------------------------------------------------------

  // The smallest key two live rows of `t` hold, as a unique build's scan finds it first.
  std::optional<Key> smallest_duplicate(const Table& t) const {
    sim::work(t.entries.size());  // an index build reads every entry
    std::optional<Key> last;
    for (const StoredEntry& stored : t.entries) {
      const Entry e = stored.entry();
      if (!live_entry(t, kKey, e) || has_null(e.key)) continue;  // a key holding a NULL is never a duplicate
      if (last && *last == e.key) return e.key;
      last = e.key;
    }
    return std::nullopt;
  }

  std::int64_t live_rows(const Table& t) const {
    return std::count_if(t.rows.begin(), t.rows.end(), [](const auto& r) { return live(*r.second); });
  }

  // ALTER TABLE ... ADD [UNIQUE] INDEX / DROP INDEX, as MariaDB 10.11 runs them online
  // (ALGORITHM=INPLACE, LOCK=NONE; docs/sql.md, Online ALTER): one ALTER on a table at a time
  // (the metadata lock; the waits behind open transactions are not modelled); a unique build
  // on a table holding a duplicate fails at once with the smallest; otherwise the build takes
  // index_build_per_row per row while other sessions write without waiting, and fails at its
  // end if one of them inserted a key another row held.
  Result alter(Table& t, const Statement& st) {
    if (t.schema.clustered_key)
      throw sim::UsageError("models::db: ALTER TABLE of " + t.schema.name + " is not modelled: its primary key is not id");
    if (!t.schema.indexes.empty())
      throw sim::UsageError("models::db: ALTER TABLE of " + t.schema.name + " is not modelled: it has more than one secondary index");
    if (t.build) {
      sim::Promise<bool> turn("metadata lock on " + t.schema.name);
      sim::Future<bool> mine = turn.get_future();
      t.ddl_waiters.push_back(std::move(turn));
      mine.get();
    }
    if (st.kind == Statement::Kind::drop_index) {
      const Result out = drop_index(t, st);
      t.build.reset();
      next_alter(t);
      return out;
    }
    t.build = Table::Build{.unique = st.unique};
    Result out;
    try {
      out = add_index(t, st);
    } catch (...) {
      t.build.reset();
      next_alter(t);
      throw;
    }
    t.build.reset();
    next_alter(t);
    return out;
  }

  // The metadata lock passes to the next ALTER waiting on the table.
  void next_alter(Table& t) {
    if (t.ddl_waiters.empty()) return;
    t.build = Table::Build{};  // held for it until it starts
    sim::Promise<bool> next = std::move(t.ddl_waiters.front());
    t.ddl_waiters.pop_front();
    next.set_value(true);
  }

  // A table created without an index gets its key columns from its first ADD INDEX: every
  // version of every row gets its entry. The columns keep their defaults in `columns`.
  void become_key_columns(Table& t, const std::vector<std::string>& columns) {
    for (const std::string& column : columns)
      if (!t.schema.columns.count(column))
        throw sim::UsageError("models::db: Key column '" + column + "' doesn't exist in table");
    t.schema.key_column = columns.front();
    t.schema.key_text = std::holds_alternative<std::string>(t.schema.columns.at(columns.front()));
    t.schema.key_tail.assign(columns.begin() + 1, columns.end());
    sim::work(t.rows.size());
    for (const auto& [id, row] : t.rows)
      for (const Version& v : row->versions()) t.entries.insert(StoredEntry(Entry{*key_of(t, v.values), id}));
  }

  Result drop_index(Table& t, const Statement& st) {
    if (!t.covered_plain.empty() && st.index == t.covered_plain) {
      t.covered_plain.clear();
      return {};
    }
    if (!t.covered_plain.empty() && indexed(t) && index_name(t) == st.index) {  // the plain one is back in use
      t.schema.key_index = KeyIndex::non_unique;
      t.schema.index_name = std::exchange(t.covered_plain, {});
      return {};
    }
    if (!indexed(t) || index_name(t) != st.index)
      return Result{.code = Code::no_such_index, .message = "Can't DROP INDEX `" + st.index + "`; check that it exists"};
    // The entries stay (the model keeps them for every key column) and so do the locks on
    // them, until their transactions end.
    t.schema.key_index = KeyIndex::none;
    return {};
  }

  Result add_index(Table& t, const Statement& st) {
    if ((indexed(t) && index_name(t) == st.index) || st.index == t.covered_plain)
      return Result{.code = Code::duplicate_key_name, .message = "Duplicate key name '" + st.index + "'"};
    const std::vector<std::string> columns = st.more().index_def ? st.more().index_def->columns : std::vector<std::string>{st.column};
    // A unique index over a plain one on the same columns (the fix of a legacy table) is
    // modelled as the unique one taking the plain one's place once built.
    const bool over_plain = st.unique && t.covered_plain.empty() && t.schema.key_index == KeyIndex::non_unique &&
                            columns == t.schema.key_columns();
    if ((indexed(t) && !over_plain) || (!t.schema.key_column.empty() && columns != t.schema.key_columns()))
      throw sim::UsageError("models::db: an index on " + t.schema.name + "." + st.column +
                            " is not modelled: a table has at most one secondary index, on its key columns (" +
                            (indexed(t) ? "it has " + index_name(t) : t.schema.key_column) + ")");
    const bool new_key_column = t.schema.key_column.empty();
    if (new_key_column) become_key_columns(t, columns);
    // A failed build leaves the table as it was.
    const auto fail = [&](const Key& dup) {
      if (new_key_column) {
        t.schema.key_column.clear();
        t.schema.key_tail.clear();
        t.entries.clear();
      }
      ++stats_.duplicate_keys;
      return Result{.code = Code::duplicate_key, .message = duplicate_message(dup, st.index)};
    };
    if (st.unique)
      if (auto dup = smallest_duplicate(t)) return fail(*dup);
    spend(config.index_build_per_row * live_rows(t));
    if (st.unique) {
      std::optional<Key> dup = t.build->doomed_by;
      if (!dup) dup = smallest_duplicate(t);
      if (dup) return fail(*dup);
    }
    if (over_plain) t.covered_plain = index_name(t);
    t.schema.key_index = st.unique ? KeyIndex::unique : KeyIndex::non_unique;
    t.schema.index_name = st.index;
    return {};
  }

  // What an insert does with the duplicate row `dup`: the statement's result, or nothing
  // when REPLACE deleted it and the insert goes on. `out` counts REPLACE's deletions.
  std::optional<Result> on_duplicate(Txn& txn, Table& t, const Statement& s, std::int64_t dup, std::string message,
                                     Result& out, const Values& inserted) {
    const Values old = current(*t.rows.at(dup))->values.to_values();
    switch (s.on_duplicate) {
      case OnDuplicate::error:
        ++stats_.duplicate_keys;
        throw Failure{Code::duplicate_key, std::move(message)};
      case OnDuplicate::ignore:
        out.warnings = 1;  // 0 rows, a warning
        return out;
      case OnDuplicate::update: {
        Values updated = old;
        for (const auto& [column, value] : s.on_update) updated[column] = value;
        assign(s, updated, &inserted, Engine::mariadb);
        detail::check_row(t.schema, Engine::mariadb, updated);
        assigned_id(txn, s, updated);
        // MySQL's OK packet: the duplicate's id when the update changed it, 0 when not or when
        // the table has no AUTO_INCREMENT (conformance upsert-id-without-auto-increment); what
        // LAST_INSERT_ID(expr) gave, when the update has one (`id = LAST_INSERT_ID(id)`).
        if (updated != old) {
          move_entries(txn, t, dup, old, updated);
          add_version(txn, t, dup, Version{txn.id, 0, false, t.stored(updated)});
          out.affected = 2;
          out.insert_id = t.schema.auto_increment ? dup : 0;
        } else {
          out.insert_id = 0;
        }
        if (txn.assigned_id) out.insert_id = *txn.assigned_id;
        return out;
      }
      case OnDuplicate::replace: {
        add_version(txn, t, dup, Version{txn.id, 0, true, current(*t.rows.at(dup))->values});
        out.affected += 1;
        return std::nullopt;  // the insert goes on; unlisted columns get their defaults
      }
    }
    return out;
  }

  Result insert_if_absent(Txn& txn, Table& t, const Statement& s, const std::string& who, const StatementTiming& timing) {
    bool present;
    if (gap_locking(txn.isolation)) {
      present = !locate_locked(txn, t, s, false, false).empty();  // shared next-key locks
    } else {
      Statement read{.kind = Statement::Kind::select, .table = s.table, .where = s.where, .extra = s.extra};
      present = !select(txn, t, read).empty();  // a consistent read
    }
    if (present) return Result{};
    // InnoDB works row by row: another statement can run between the read and the write.
    spend(timing.read_to_write);
    return insert(txn, t, s, s.values, who);
  }

  // The table's AUTO-INC lock, taken before an insert takes an id (InnoDB's innobase_lock_autoinc
  // in lock mode 1, MariaDB's default): an INSERT ... SELECT, a bulk insert, always takes it; a
  // simple INSERT only while another statement holds it or waits for it, and otherwise takes its
  // ids under a mutex. Held to the statement's end. A deadlock whose victim waits for it ends
  // in 1467 (conformance autoinc-lock-deadlock-1467, autoinc-lock-simple-insert).
  void take_autoinc(Txn& txn, Table& t, bool bulk) {
    if (bulk || t.locks[kAutoInc].size() > 0) lock(txn, t, kAutoInc, Lock{.exclusive = true, .record = true});
  }
  void release_autoinc(const Txn& txn, Table& t) {
    if (t.locks[kAutoInc].erase_if([&](const Lock& l) { return l.txn == txn.id && l.granted; }) > 0) regrant(t.locks[kAutoInc]);
  }

  Result update(Txn& txn, Table& t, const Statement& s, bool remove) {
    if (!remove && (s.values.count("id") ||
                    std::any_of(s.more().assign.begin(), s.more().assign.end(), [](const auto& a) { return a.first == "id"; })))
      throw sim::UsageError("models::db: updating id is not modelled");
    Result out;
    // Whether it assigns a column of a secondary index (then each row's entries may move).
    const auto assigns = [&](const std::string& column) {
      return s.values.count(column) ||
             std::any_of(s.more().assign.begin(), s.more().assign.end(), [&](const auto& a) { return a.first == column; });
    };
    bool moves = !remove && !t.schema.key_column.empty() && assigns(t.schema.key_column);
    for (const std::string& column : t.schema.key_tail) moves |= !remove && assigns(column);
    for (const IndexDef& index : t.schema.indexes)
      for (const std::string& column : index.columns) moves |= !remove && assigns(column);
    std::vector<std::int64_t> found = locate_locked(txn, t, s, true, true);
    if (s.limit || !s.more().order_by.empty()) {
      std::vector<Row> rows;
      for (std::int64_t id : found) rows.push_back(row_of(id, current(*t.rows.at(id))->values));
      order_and_limit(s, Engine::mariadb, rows);
      found.clear();
      for (const Row& r : rows) found.push_back(r.id);
    }
    for (std::int64_t id : found) {
      const RowValues& old = current(*t.rows.at(id))->values;
      if (remove) {  // the delete-marked version keeps the row's columns, shared
        add_version(txn, t, id, Version{txn.id, 0, true, old});
        ++out.affected;
        continue;
      }
      Values next = old.to_values();
      for (const auto& [column, value] : s.values) {
        if (!next.count(column)) throw sim::UsageError("Unknown column '" + column + "' in 'field list'");
        next[column] = value;
      }
      assign(s, next, nullptr, Engine::mariadb);
      detail::check_row(t.schema, Engine::mariadb, next);
      assigned_id(txn, s, next);
      if (txn.assigned_id) out.insert_id = *txn.assigned_id;
      if (next == old.to_values()) continue;  // matched but unchanged: not counted
      if (moves) move_entries(txn, t, id, old, next);
      add_version(txn, t, id, Version{txn.id, 0, false, t.stored(next)});
      ++out.affected;
      if (moves && t.build && t.build->unique && !t.build->doomed_by)  // an online unique build meets the new key as an insert's
        if (auto key = key_of(t, next); key && !has_null(*key) && key != key_of(t, old) && entries_with(t, kKey, *key).size() > 1)
          t.build->doomed_by = key;
    }
    return out;
  }

  // An UPDATE of an indexed column, as InnoDB's row_upd_sec_index_entry: in each index whose
  // key changes, the old entry is delete-marked (it stays until the commit: live_entry) and the
  // new one inserted as an INSERT's is: a unique index is checked for a duplicate (S next-key on
  // it, waiting for its writer, then 1062), an insert intention taken at its place, and the new
  // entry X-locked by the updater (conformance update-indexed-*).
  template <class Old>  // Values, or a stored row's RowValues
  void move_entries(Txn& txn, Table& t, std::int64_t id, const Old& old, const Values& next) {
    for (const int index : secondary(t)) {
      std::optional<Key> key = key_of(t, index, next);
      if (!key || key == key_of(t, index, old)) continue;
      if (must_be_unique(t, index, key))
        for (Duplicate d{.waited = true}; d.waited;) {
          d = duplicate_of(txn, t, index, *key, id, false);
          if (d.id) {
            ++stats_.duplicate_keys;
            throw Failure{Code::duplicate_key, duplicate_in(t, index, *key)};
          }
        }
      lock(txn, t, index, insert_intention(Entry{*key, id}));
      Lock x = record_lock(Entry{std::move(*key), id}, true);
      x.txn = txn.id;
      x.granted = true;
      t.locks[static_cast<std::size_t>(index)].add(std::move(x));
    }
  }

  // `c = LAST_INSERT_ID(expr)` in an UPDATE or ON DUPLICATE KEY UPDATE: the row's new `c`
  // becomes the session's LAST_INSERT_ID() (when the statement succeeds) and the statement's
  // insert id; the last row's, for an UPDATE of several.
  static void assigned_id(Txn& txn, const Statement& s, const Values& row) {
    const std::string& column = s.more().sets_last_insert_id;
    if (column.empty()) return;
    const Value& v = row.at(column);
    txn.assigned_id = is_null(v) ? 0 : as_number(v);
  }

  // SET [SESSION] TRANSACTION ISOLATION LEVEL: SESSION sets the level of the session's
  // later transactions, plain SET TRANSACTION the next one's only, which MySQL refuses
  // inside an open transaction (1568).
  Result set_isolation(SessionState& s, const Statement& st) {
    if (!st.next_transaction_only) {
      s.isolation = st.isolation;
      s.next_isolation.reset();
      return {};
    }
    if (s.txn) {
      return Result{.code = Code::transaction_in_progress,
                    .message = "Transaction characteristics can't be changed while a transaction is in progress"};
    }
    s.next_isolation = st.isolation;
    return {};
  }

  // Runs each of the expression's calls to the server (GET_LOCK(), CONNECTION_ID()), depth
  // first and left to right as MariaDB evaluates a select list, and puts each answer in its
  // place: a literal, or NULL.
  void answer_calls(SessionState& s, Expr& e, const std::vector<Value>& params, std::vector<LockWait>& waits) {
    for (Expr& a : e.args) answer_calls(s, a, params, waits);
    if (e.kind != Expr::Kind::session_call) return;
    static const Values kNoRow;
    const auto arg = [&](std::size_t i) {
      std::optional<Value> v;
      try {
        v = evaluate(e.args.at(i), Scope{.row = kNoRow, .args = params});
      } catch (const ExprError& error) {
        throw Failure{Code(error.code), error.message};
      }
      return v.value_or(Value{});
    };
    std::optional<std::int64_t> answer;
    using C = Expr::Call;
    switch (e.call) {
      case C::get_lock: answer = user_locks_.get(s.id, s.who, arg(0), arg(1), waits); break;
      case C::release_lock: answer = user_locks_.release(s.id, arg(0)); break;
      case C::release_all_locks: answer = user_locks_.release_all(s.id); break;
      case C::is_free_lock: answer = user_locks_.is_free(arg(0)); break;
      case C::is_used_lock: answer = user_locks_.is_used(arg(0)); break;
      case C::connection_id: answer = static_cast<std::int64_t>(s.id); break;
    }
    e = answer ? Expr{.kind = Expr::Kind::literal, .value = *answer} : Expr{.kind = Expr::Kind::null};
  }

  Result run(SessionState& s, const Statement& st, const StatementTiming& timing) {
    Result out = run_unstamped(s, st, timing);
    if (out.ok() && out.applied == sim::kNever) out.applied = now_if_running();
    return out;
  }

  // run(), but for when a statement's changes were made: set only where they come before its end.
  Result run_unstamped(SessionState& s, const Statement& st, const StatementTiming& timing) {
    using K = Statement::Kind;
    ++stats_.statements;
    spend(timing.before);
    if (st.kind == K::begin) {
      if (s.txn) commit(*s.txn);  // BEGIN commits an open transaction implicitly
      Txn& txn = begin(s, true);
      if (st.consistent_snapshot) read_view(txn);  // the view is taken now, not at the first read
      return {};
    }
    if (st.kind == K::set_isolation) return set_isolation(s, st);
    if (st.kind == K::set_lock_wait_timeout) {
      s.lock_wait_timeout = std::chrono::seconds(st.seconds);
      return {};
    }
    if (st.kind == K::add_index || st.kind == K::drop_index) {
      Table& t = table(st.table);
      if (s.txn) commit(*s.txn);  // DDL commits an open transaction implicitly, as MySQL's does
      s.txn.reset();
      return alter(t, st);
    }
    if (st.kind == K::commit || st.kind == K::rollback) {
      if (st.kind == K::commit) spend(timing.before_commit);
      if (s.txn) (st.kind == K::commit) ? commit(*s.txn) : rollback(*s.txn);
      s.txn.reset();
      return {};
    }
    // SELECT LAST_INSERT_ID(), SELECT 1 + 1: no table is read, so no transaction starts and
    // no read view is taken, as InnoDB takes one at a statement's first read of a table.
    if (st.kind == K::select && st.table.empty()) {
      Result out;
      try {
        if (st.more().session_calls) {
          Statement answered = st;
          StatementExtra& extra = answered.edit();
          for (auto& [name, e] : extra.computed) answer_calls(s, e, extra.args, out.waits);
          out.rows = {detail::computed_row(answered)};
        } else {
          out.rows = {detail::computed_row(st)};
        }
        out.applied = now_if_running();
      } catch (Failure& f) {
        out.code = f.code;
        out.message = std::move(f.message);
      }
      return out;
    }
    Table& t = table(st.table);
    const bool autocommit = !s.txn;
    Txn& txn = autocommit ? begin(s, false) : *s.txn;
    const std::size_t mark = txn.undo.size();
    txn.waits.clear();
    txn.on_locked = st.on_locked;
    txn.generated_id.reset();
    txn.assigned_id.reset();
    Result out;
    try {
      detail::refuse_id(t.schema, Engine::mariadb, st);
      switch (st.kind) {
        case K::select:
          out.rows = select(txn, t, st);
          if (st.count_rows) detail::aggregate_rows(st, Engine::mariadb, out.rows);
          else if (!st.more().computed.empty()) detail::add_computed(st, out.rows);
          break;
        case K::insert: out = insert_rows(txn, t, st, s.who); break;
        case K::insert_if_absent: out = insert_if_absent(txn, t, st, s.who, timing); break;
        case K::update: out = update(txn, t, st, false); break;
        case K::remove: out = update(txn, t, st, true); break;
        default: break;
      }
    } catch (Failure& f) {
      out = Result{};
      out.code = f.code;
      out.message = std::move(f.message);
      out.waits = std::move(txn.waits);
      if (deadlock_victim(f.code)) {
        out.deadlock_cycle = std::move(f.cycle);
        out.undone = Undone::transaction;  // rolled back whole
        out.undone_rows = f.undone_rows;
        s.txn.reset();
        return out;
      }
      release_autoinc(txn, t);
      out.undone = Undone::statement;  // 1062 and 1205 roll back the statement only
      out.undone_rows = static_cast<std::int64_t>(txn.undo.size() - mark);
      undo_to(txn, mark);
      if (autocommit) {
        rollback(txn);
        s.txn.reset();
      }
      return out;
    }
    release_autoinc(txn, t);
    out.waits = std::move(txn.waits);
    out.applied = now_if_running();
    if (txn.assigned_id) s.last_insert_id = *txn.assigned_id;
    else if (txn.generated_id) s.last_insert_id = *txn.generated_id;
    if (autocommit) {
      spend(timing.before_commit);
      commit(txn);
      s.txn.reset();
    }
    return out;
  }
  // --- The engine's side of Database's calls ---------------------------------

  void create_table(TableSchema schema) override {
    if (tables.count(schema.name)) throw sim::UsageError("models::db: table '" + schema.name + "' exists");
    for (const IndexDef& index : schema.indexes)
      if (index.where)
        throw sim::UsageError("models::db: the partial index " + index.name + " on " + schema.name +
                              " is modelled on PostgreSQL only (docs/sql.md)");
    Table& t = tables[schema.name];
    t.schema = std::move(schema);
    t.more_entries.resize(t.schema.indexes.size());
    t.locks.resize(kExtra + t.schema.indexes.size());
  }

  std::int64_t load_row(const std::string& table, const Values& values, std::string who) override {
    return load_row_values(table, values, std::move(who));
  }

  const TableSchema* schema(const std::string& name) const override {
    const auto it = tables.find(name);
    return it == tables.end() ? nullptr : &it->second.schema;
  }

  SessionId open_session(Isolation isolation, std::string who) override {
    const SessionId id = next_session++;
    SessionState& s = sessions[id] = SessionState{isolation, std::move(who), nullptr};
    s.id = id;
    return id;
  }

  void set_origin(SessionId session, std::string who) override { sessions.at(session).who = std::move(who); }

  Result execute(SessionId session, const Statement& statement, const StatementTiming& timing) override {
    auto it = sessions.find(session);
    if (it == sessions.end()) throw sim::UsageError("models::db: no session " + std::to_string(session));
    // The slots the engine fills as the statement runs: UNIX_TIMESTAMP(), the statement's start on
    // the database's clock; LAST_INSERT_ID(), the session's, as it is now.
    const StatementExtra& extra = statement.more();
    if (extra.clock_args.empty() && !extra.last_insert_id_arg) return run(it->second, statement, timing);
    Statement now = with_clock(statement, timing.wall, timing.wall);
    if (const auto slot = extra.last_insert_id_arg) now.edit().args.at(*slot) = Value{it->second.last_insert_id};
    return run(it->second, now, timing);
  }

  void close(SessionId session) override {
    auto it = sessions.find(session);
    if (it == sessions.end()) return;
    if (it->second.txn) rollback(*it->second.txn);
    user_locks_.release_all(session);  // the connection's user locks go with it
    sessions.erase(it);
  }

  bool holds_user_lock(SessionId session, const std::string& name) const override { return user_locks_.holds(session, name); }

  bool in_transaction(SessionId session) const override {
    auto it = sessions.find(session);
    return it != sessions.end() && it->second.txn != nullptr;
  }

  void for_each(const std::string& name, bool ever, const RowVisitor& visit) const override {
    visit_rows(const_table(name), ever, visit);
  }

  const Table& const_table(const std::string& name) const {
    auto it = tables.find(name);
    if (it == tables.end()) throw sim::UsageError("models::db: no table '" + name + "'");
    return it->second;
  }

  std::vector<RowRecord> rows_sharing(const std::string& name, const std::string& column, bool ever) const override {
    const Table& t = const_table(name);
    if (column != t.schema.key_column || column.empty()) return rows_sharing_by_count(*this, name, column, ever);
    std::vector<RowRecord> out;
    // Every (key, id) entry a version held is in the index until none holds it: an entry counts
    // where the shown version holds its key.
    std::vector<std::pair<std::int64_t, const RowData*>> group;
    const auto end_group = [&] {
      if (group.size() > 1)
        for (const auto& [id, row] : group) out.push_back(RowRecord{Row{id, shown(*row, ever)->values}, origins(row->origin)});
      group.clear();
    };
    std::optional<Value> key;
    for (const StoredEntry& stored : t.entries) {
      const auto row = t.rows.find(stored.id);
      if (row == t.rows.end()) continue;
      const Version* v = shown(*row->second, ever);
      const Entry e = stored.entry();
      // The index's entries of one value of its first column are side by side.
      if (v == nullptr || v->values.at(column) != e.key.front() || is_null(e.key.front())) continue;  // NULLs share nothing
      if (!key || *key != e.key.front()) {
        end_group();
        key = e.key.front();
      }
      group.emplace_back(e.id, row->second.get());
    }
    end_group();
    std::sort(out.begin(), out.end(), [](const RowRecord& a, const RowRecord& b) { return a.row.id < b.row.id; });
    return out;
  }

  const DatabaseStats& stats() const override { return stats_; }
  std::uint64_t bytes_held() const override { return bytes + origins.bytes(); }
};

std::unique_ptr<Database::Model> innodb_model(const DatabaseConfig& config) { return std::make_unique<InnoDb>(config); }

std::vector<RowRecord> rows_sharing_by_count(const Database::Model& model, const std::string& table, const std::string& column,
                                             bool ever) {
  std::vector<RowRecord> out;
  std::map<Value, std::uint32_t> rows_per_value;
  // NULL is no value another row can share, as a unique index sees it.
  model.for_each(table, ever, [&](std::int64_t, const RowValues& values, const RowOrigin&) {
    if (!is_null(values.at(column))) ++rows_per_value[values.at(column)];
  });
  model.for_each(table, ever, [&](std::int64_t id, const RowValues& values, const RowOrigin& origin) {
    if (!is_null(values.at(column)) && rows_per_value.at(values.at(column)) > 1) out.push_back(RowRecord{Row{id, values}, origin});
  });
  return out;
}

// --- Database: the calls, on the engine's model -----------------------------

Database::Database(DatabaseConfig config)
    : model_(config.engine == Engine::postgresql ? postgres_model(config) : innodb_model(config)), config_(config) {}
Database::~Database() = default;

void Database::create_table(TableSchema schema) {
  if (!schema.key_column.empty()) schema.columns.erase(schema.key_column);
  model_->create_table(std::move(schema));
}

std::int64_t Database::load_row(const std::string& table, Values values, std::string who) {
  return model_->load_row(table, values, std::move(who));
}

bool Database::has_table(const std::string& table) const { return model_->schema(table) != nullptr; }

std::vector<std::string> Database::columns(const std::string& table) const {
  const TableSchema* schema = model_->schema(table);
  if (schema == nullptr) throw sim::UsageError("models::db: no table '" + table + "'");
  if (!schema->column_order.empty()) return schema->column_order;
  std::vector<std::string> out{"id"};
  if (!schema->key_column.empty()) out.push_back(schema->key_column);
  for (const auto& [column, value] : schema->columns) out.push_back(column);
  return out;
}

Database::SessionId Database::open_session(Isolation isolation, std::string who) { return model_->open_session(isolation, std::move(who)); }

void Database::set_origin(SessionId session, std::string who) { model_->set_origin(session, std::move(who)); }

Result Database::execute(SessionId session, const Statement& statement) { return execute(session, statement, {}); }

Result Database::execute(SessionId session, const Statement& statement, const StatementTiming& timing) {
  return model_->execute(session, statement, timing);
}

void Database::close(SessionId session) { model_->close(session); }

bool Database::in_transaction(SessionId session) const { return model_->in_transaction(session); }

bool Database::holds_advisory(SessionId session, std::int64_t key) const { return model_->holds_advisory(session, key); }
bool Database::holds_user_lock(SessionId session, const std::string& name) const { return model_->holds_user_lock(session, name); }

std::vector<HeldLock> Database::locks(std::size_t most) const { return model_->locks(most); }

void Database::for_each_committed(const std::string& table, const RowVisitor& visit) const { model_->for_each(table, false, visit); }

void Database::for_each_ever_committed(const std::string& table, const RowVisitor& visit) const { model_->for_each(table, true, visit); }

std::vector<RowRecord> Database::rows_sharing(const std::string& table, const std::string& column, bool ever) const {
  return model_->rows_sharing(table, column, ever);
}

std::vector<RowRecord> Database::committed_rows(const std::string& table) const {
  std::vector<RowRecord> out;
  for_each_committed(table, [&](std::int64_t id, const RowValues& values, const RowOrigin& origin) {
    out.push_back(RowRecord{Row{id, values}, origin});  // sharing the stored columns
  });
  return out;
}

std::vector<RowRecord> Database::rows_ever_committed(const std::string& table) const {
  std::vector<RowRecord> out;
  for_each_ever_committed(table, [&](std::int64_t id, const RowValues& values, const RowOrigin& origin) {
    out.push_back(RowRecord{Row{id, values}, origin});
  });
  return out;
}

const DatabaseStats& Database::stats() const { return model_->stats(); }

std::uint64_t Database::bytes_held() const { return model_->bytes_held(); }

std::uint64_t Database::row_bytes(const Values& values) { return kInnoDbCosts.row + kInnoDbCosts.of_version(RowValues(values)); }

}  // namespace models::db
