// InnoDB's model: INSERT and its variants, the duplicate check, and the AUTO-INC lock (InnoDB's
// row0ins).

#include "models/db/innodb/innodb.hpp"

namespace models::db::innodb {

void InnoDb::add_version(Txn& txn, Table& t, std::int64_t id, Version v) {
  if (auto key = key_of(t, v.values)) t.entries.insert(StoredEntry(Entry{*key, id}));
  for (std::size_t i = 0; i < t.more_entries.size(); ++i)
    t.more_entries[i].insert(StoredEntry(Entry{*key_of(t, kExtra + static_cast<int>(i), v.values), id}));
  auto [row, fresh] = t.rows.try_emplace(id);
  if (fresh) row->second = std::make_unique<RowData>();
  bytes += kInnoDbCosts.of_version(v.values) + (fresh ? kInnoDbCosts.row : 0);
  if (recorder) recorder->wrote(txn.id, t.schema.name, id, v.values, v.deleted);
  row->second->push(std::move(v));
  txn.undo.push_back({&t, id});
}

// A row this transaction deleted is no duplicate of what it inserts.
bool InnoDb::deleted_by(const Txn& txn, const RowData& row) {
  const Version* v = current(row);
  return v->deleted && v->txn == txn.id;
}

std::int64_t InnoDb::load_row_values(const std::string& name, const Values& given, std::string who) {
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
  if (recorder) recorder->wrote(History::kSeed, t.schema.name, id, row.versions().back().values, false);
  const sim::Engine* engine = sim::Engine::current();
  origins.keep(row.origin, std::move(who), 0, engine != nullptr ? engine->now() : sim::Time{});
  if (key) t.entries.insert(StoredEntry(Entry{*key, id}));
  for (std::size_t i = 0; i < t.more_entries.size(); ++i)
    t.more_entries[i].insert(StoredEntry(Entry{*key_of(t, kExtra + static_cast<int>(i), values), id}));
  return id;
}

InnoDb::Duplicate InnoDb::duplicate_of(Txn& txn, Table& t, int index, const Key& key, std::optional<std::int64_t> own, bool exclusive) {
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
Result InnoDb::insert(Txn& txn, Table& t, const Statement& s, const Values& given, const std::string& who,
              std::optional<std::int64_t> auto_id) {
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
    if (!explicit_id && !txn.statement->generated_id && t.schema.auto_increment) txn.statement->generated_id = id;
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
Result InnoDb::insert_rows(Txn& txn, Table& t, const Statement& s, const std::string& who) {
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

void InnoDb::put_row(Txn& txn, Table& t, std::int64_t id, Values values, const std::string& who) {
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

namespace {

// How many unique keys the table has: its primary key of ids, and each unique index.
int unique_keys(const Table& t) {
  const auto indexes = secondary(t);
  return (t.schema.clustered_key ? 0 : 1) +
         static_cast<int>(std::count_if(indexes.begin(), indexes.end(), [&](int index) { return unique_index(t, index); }));
}

// Whether two rows hold the same values in every column but the model's own id.
bool same_columns(Values a, Values b) {
  a.erase("id");
  b.erase("id");
  return a == b;
}

}  // namespace

// What an insert does with the duplicate row `dup`: the statement's result, or nothing
// when REPLACE deleted it and the insert goes on. `out` counts REPLACE's deletions.
std::optional<Result> InnoDb::on_duplicate(Txn& txn, Table& t, const Statement& s, std::int64_t dup, std::string message,
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
      if (txn.statement->assigned_id) out.insert_id = *txn.statement->assigned_id;
      return out;
    }
    case OnDuplicate::replace: {
      // A duplicate of the table's one unique key MariaDB replaces in place (write_record's
      // update on the last unique key), and a row the same in every column then counts no
      // deletion (HA_ERR_RECORD_IS_THE_SAME; conformance mtr-insert-into-empty-mdev29545-replace).
      const bool same = unique_keys(t) == 1 && same_columns(old, inserted);
      add_version(txn, t, dup, Version{txn.id, 0, true, current(*t.rows.at(dup))->values});
      if (!same) out.affected += 1;
      return std::nullopt;  // the insert goes on; unlisted columns get their defaults
    }
  }
  return out;
}

Result InnoDb::insert_if_absent(Txn& txn, Table& t, const Statement& s, const std::string& who, const StatementTiming& timing) {
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

}  // namespace models::db::innodb
