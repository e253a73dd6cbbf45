#include "models/db/history.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/db/rows.hpp"

namespace models::db {

bool History::room() {
  if (writes_.size() + predicates_.size() + reads_.size() < kMostEvents) return true;
  overflowed_ = true;
  return false;
}

std::uint32_t History::table_number(const std::string& table) {
  const auto at = std::find(tables_.begin(), tables_.end(), table);
  if (at != tables_.end()) return static_cast<std::uint32_t>(at - tables_.begin());
  tables_.push_back(table);
  return static_cast<std::uint32_t>(tables_.size() - 1);
}

void History::began(Txn txn, const std::string& who) {
  if (room()) who_[txn] = who;
}

void History::wrote(Txn txn, const std::string& table, std::int64_t row, const RowValues& values, bool deleted) {
  if (!room()) return;
  const std::uint32_t t = table_number(table);
  writes_.push_back(Write{txn, t, row, values, deleted});
  standing_[{t, row}].push_back(writes_.size() - 1);
}

void History::undone(Txn txn, const std::string& table, std::int64_t row) {
  if (overflowed_) return;
  auto it = standing_.find({table_number(table), row});
  if (it == standing_.end()) return;
  auto& list = it->second;
  for (auto w = list.rbegin(); w != list.rend(); ++w)
    if (writes_[*w].txn == txn) {
      writes_[*w].undone = true;
      list.erase(std::next(w).base());
      return;
    }
}

void History::committed(Txn txn, std::uint64_t commit) {
  if (!overflowed_) commits_[txn] = commit;
}

std::optional<std::uint32_t> History::predicate(Txn txn, const std::string& table, const Statement& where, std::uint64_t view) {
  if (!room()) return std::nullopt;
  predicates_.push_back(Predicate{txn, table_number(table), std::make_shared<const Statement>(where), view, rows_only(where)});
  return static_cast<std::uint32_t>(predicates_.size() - 1);
}

void History::read(std::uint32_t predicate, std::int64_t row, Txn writer, std::size_t ordinal) {
  if (!room()) return;
  const Predicate& p = predicates_[predicate];
  const auto it = standing_.find({p.table, row});
  if (it == standing_.end()) return;
  for (const std::size_t w : it->second) {
    const Write& write = writes_[w];
    if (write.txn != writer || write.deleted) continue;
    if (ordinal-- == 0) {
      reads_.push_back(Read{p.txn, predicate, row, w});
      return;
    }
  }
}

bool History::rows_only(const Statement& s) { return s.limit.has_value() || s.on_locked == Statement::OnLocked::skip; }

bool History::matches(const Predicate& predicate, const RowValues& values) { return detail::matches(values, *predicate.where); }

std::string History::text(const Predicate& predicate) { return to_string(*predicate.where); }

std::string History::who(Txn txn) const {
  const auto it = who_.find(txn);
  return it == who_.end() ? std::string() : it->second;
}

std::string History::name(Txn txn) const {
  if (txn == kSeed) return "the seeded rows";
  const std::string by = who(txn);
  return by.empty() ? fmt::format("transaction {}", txn) : fmt::format("{}'s transaction {}", by, txn);
}

}  // namespace models::db
