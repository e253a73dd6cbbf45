// PostgreSQL's model: serializable snapshot isolation (predicate.c): read-write dependencies
// between concurrent serializable transactions and the dangerous structure that fails one
// with 40001 (models/db/postgres/predicate.hpp, postgres.hpp).

#include <algorithm>

#include "models/db/postgres/predicate.hpp"

namespace models::db::postgres {

// --- Serializable snapshot isolation -------------------------------------------

// Whether two serializable transactions overlapped: neither committed before the other's
// snapshot.
bool concurrent(const Serializable& a, const Serializable& b) {
  return (a.commit == 0 || a.commit > b.snapshot) && (b.commit == 0 || b.commit > a.snapshot);
}

bool covers(const ReadKey& r, const Table* table, std::int64_t id, const std::vector<Value>& keys) {
  if (r.table != table) return false;
  switch (r.by) {
    case ReadKey::By::table: return true;
    case ReadKey::By::id: return r.value == Value{id};
    case ReadKey::By::key: return std::find(keys.begin(), keys.end(), r.value) != keys.end();
  }
  return false;
}

// Records that `reader` read what `writer` wrote (or will write) in a version it cannot see,
// then looks for a dangerous structure through either. The current statement's transaction
// `self` fails where it is the structure's pivot or its T_in; otherwise the pivot is doomed:
// its next statement or its COMMIT fails.
void Ssi::depends(Xid reader, Xid writer, Xid self) {
  if (reader == writer) return;
  if (!ssi_.at(reader).out.insert(writer).second) return;
  ssi_.at(writer).in.insert(reader);
  for (Xid pivot : {reader, writer}) {
    if (!dangerous(pivot)) continue;
    if (pivot == self || dangerous(pivot, self)) throw Failure{Code::serialization_failure, kSerialization};
    if (ssi_.at(pivot).commit == 0) ssi_.at(pivot).doomed = true;
  }
}

// T_in -> pivot -> T_out with T_out committed first (before the pivot and T_in commit; for a
// read-only T_in, before its snapshot). `only_in`: with that T_in.
bool Ssi::dangerous(Xid pivot, std::optional<Xid> only_in) const {
  const Serializable& p = ssi_.at(pivot);
  for (Xid o : p.out) {
    const auto out = ssi_.find(o);
    if (out == ssi_.end() || out->second.commit == 0) continue;
    const std::uint64_t first = out->second.commit;
    if (p.commit != 0 && p.commit < first) continue;
    for (Xid i : p.in) {
      if (only_in && i != *only_in) continue;
      const auto in = ssi_.find(i);
      if (in == ssi_.end()) continue;
      if (in->second.commit != 0 && in->second.commit < first) continue;
      if (!in->second.wrote && in->second.snapshot < first) continue;  // a read-only T_in that could not see T_out
      return true;
    }
  }
  return false;
}

// Whether committing `xid` now would complete a dangerous structure whose other members
// have all committed: it is then the only one left to fail.
bool Ssi::would_endanger(Xid xid, std::uint64_t commits) {
  Serializable& me = ssi_.at(xid);
  me.commit = commits + 1;  // as if committed now
  bool found = false;
  for (Xid pivot : me.in)
    if (const auto p = ssi_.find(pivot); p != ssi_.end() && p->second.commit != 0 && dangerous(pivot)) found = true;
  me.commit = 0;
  return found;
}

void Ssi::read(Xid reader, ReadKey key) {
  Serializable& me = ssi_.at(reader);
  if (!me.reads.insert(key).second) return;
  for (auto& [xid, other] : ssi_) {
    if (xid == reader || !concurrent(me, other)) continue;
    for (std::size_t i = 0; i < other.writes.size(); ++i)
      if (covers(key, other.writes[i].first, other.writes[i].second, {other.written_keys[i]})) {
        depends(reader, xid, reader);
        break;
      }
  }
}

void Ssi::write(Xid writer, const Table& t, std::int64_t id, const Value& key) {
  Serializable& me = ssi_.at(writer);
  me.wrote = true;
  me.writes.emplace_back(&t, id);
  me.written_keys.push_back(key);
  std::vector<Xid> readers;
  for (const auto& [xid, other] : ssi_) {
    if (xid == writer || !concurrent(me, other)) continue;
    if (std::any_of(other.reads.begin(), other.reads.end(), [&](const ReadKey& r) { return covers(r, &t, id, {key}); }))
      readers.push_back(xid);
  }
  for (Xid r : readers) depends(r, writer, writer);
}

bool Ssi::fails_commit(Xid xid, std::uint64_t commits) {
  return ssi_.at(xid).doomed || dangerous(xid) || would_endanger(xid, commits);
}

// Forgets committed transactions no running serializable one overlaps.
void Ssi::prune() {
  std::optional<std::uint64_t> oldest;
  for (const auto& [xid, t] : ssi_)
    if (t.commit == 0) oldest = std::min(oldest.value_or(t.snapshot), t.snapshot);
  std::erase_if(ssi_, [&](const auto& e) { return e.second.commit != 0 && (!oldest || e.second.commit <= *oldest); });
}

}  // namespace models::db::postgres
