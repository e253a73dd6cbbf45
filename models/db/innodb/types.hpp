#pragma once
// The InnoDB model's data (models/db/innodb/innodb.hpp): index keys and entries, rows and their
// versions, lock requests and their queues, tables, transactions and sessions. Internal to
// models/db/innodb.

#include <absl/container/btree_map.h>
#include <absl/container/btree_set.h>
#include <boost/container/small_vector.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "models/db/cell.hpp"
#include "models/db/database.hpp"
#include "models/db/rows.hpp"

namespace models::db::innodb {

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
// A table's indexes, by number: where index entries, their lock queues and lock requests are.
constexpr int kPrimary = 0;  // the clustered index, keyed by id
constexpr int kKey = 1;      // the secondary index on the key column
// The secondary indexes after the key index (TableSchema::indexes): kExtra + their place there.
constexpr int kExtra = 2;
// Not an index: where a lock request on the table's AUTO-INC lock is (Table::autoinc_lock).
constexpr int kAutoInc = -1;

// A key of an index: one value per column of the index, in its order (an id on the primary
// key). Keys compare column by column, and a key that is the first columns of another (a
// prefix a search gives) sorts before every key it begins.
using Key = boost::container::small_vector<Value, 1>;
inline bool is_prefix(const Key& prefix, const Key& key) {
  return prefix.size() <= key.size() && std::equal(prefix.begin(), prefix.end(), key.begin());
}
inline bool has_null(const Key& key) { return std::any_of(key.begin(), key.end(), [](const Value& v) { return is_null(v); }); }

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
inline Entry primary_entry(std::int64_t id) { return {Key{Value{id}}, id}; }

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
  // While waiting: the one transaction the deadlock search follows from it (InnoDB's
  // lock.wait_trx), the holder of the first conflicting lock in its queue (first_blocker).
  TxnId blocker = 0;
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

inline bool covers_gap(const Lock& l, const Entry& position) {
  return l.gap && (!l.lo || *l.lo < position) && (!l.hi || position < *l.hi);
}

// InnoDB's lock_rec_has_to_wait, for locks of two transactions.
inline bool has_to_wait(const Lock& req, const Lock& other) {
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
  // The lock queues of its indexes (kPrimary, kKey, then one per further index), and its table
  // lock: the AUTO-INC lock, one exclusive record lock on one entry, held by an insert from the
  // id it takes to its statement's end (InnoDb::take_autoinc).
  std::vector<LockQueue> locks = std::vector<LockQueue>(kExtra);
  LockQueue autoinc_lock{};
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

// What a statement carries while it runs, from its start (InnoDb::run_on_table, which owns it)
// and its searches (InnoDb::locate_locked); its transaction points at it meanwhile.
struct StatementState {
  // Its answer to a row lock it would wait for (NOWAIT, SKIP LOCKED), and how many matching
  // rows end its scan (a LIMIT read in index order).
  Statement::OnLocked on_locked = Statement::OnLocked::wait;
  std::optional<std::size_t> enough{};
  // The current locking read's index condition (pushed_condition): a visited entry of the
  // secondary index it searches whose key fails it is locked, and its row is not.
  std::optional<IndexCondition> pushed{};
  // Its LAST_INSERT_ID() to be: the first AUTO_INCREMENT id it generated for a row it
  // inserted, or what a `c = LAST_INSERT_ID(expr)` of it gave.
  std::optional<std::int64_t> generated_id{};
  std::optional<std::int64_t> assigned_id{};
  std::vector<LockWait> waits{};  // its lock waits, as Result::waits shows them
  // Its reading of the table in the trial's history (History::predicate), where one is kept.
  std::optional<std::uint32_t> predicate{};
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
  StatementState* statement = nullptr;  // the statement it runs, while it runs
};

// The table lock a statement takes before it locks rows: IX to write, IS to read with locks.
inline void take_table_lock(Txn& txn, const Table* table, bool exclusive) {
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
inline Failure deadlock_failure(int index, std::vector<std::string> cycle, std::int64_t changes) {
  if (index == kAutoInc) return Failure{Code::autoinc_failed, kAutoIncMessage, std::move(cycle), changes};
  return Failure{Code::deadlock, kDeadlockMessage, std::move(cycle), changes};
}
const char* const kLockWaitTimeoutMessage = "Lock wait timeout exceeded; try restarting transaction";

// MySQL's 1062 text: "Duplicate entry 'a' for key 'uk'" (numbers quoted as well); a key of
// several columns joins them with '-': "Duplicate entry '1-a' for key 'uk'".
inline std::string duplicate_message(const Key& key, const std::string& key_name) {
  std::string text;
  for (const Value& value : key) {
    if (&value != &key.front()) text += '-';
    text += std::holds_alternative<std::string>(value) ? std::get<std::string>(value) : std::to_string(std::get<std::int64_t>(value));
  }
  return "Duplicate entry '" + text + "' for key '" + key_name + "'";
}

// How lock waits name an entry: "('m', 2)" on a secondary index, "(2)" on the primary, "('m')"
// on a primary key of other columns (`keyed`: the row's number is not the server's).
inline std::string entry_text(int index, const Entry& e, bool keyed) {
  if (index == kPrimary) return "(" + std::to_string(e.id) + ")";
  std::string text = "(";
  for (const Value& v : e.key) text += to_string(v) + ", ";
  if (keyed) return text.substr(0, text.size() - 2) + ")";
  return text + std::to_string(e.id) + ")";
}
inline std::string gap_text(int index, const std::optional<Entry>& hi, bool keyed) {
  return hi ? "gap before " + entry_text(index, *hi, keyed) : "supremum";
}
inline std::string mode_text(const Lock& l) {
  std::string mode = l.exclusive ? "X" : "S";
  if (l.insert_intention) return mode + " insert intention";
  if (l.record && l.gap) return mode + " next-key";
  if (l.gap) return mode + " gap";
  return mode;
}

// Levels that lock gaps (REPEATABLE READ, SERIALIZABLE) and those that do not.
inline bool gap_locking(Isolation i) { return i == Isolation::repeatable_read || i == Isolation::serializable; }

}  // namespace models::db::innodb
