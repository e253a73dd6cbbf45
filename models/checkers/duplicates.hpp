#pragma once
// Duplicate rows: committed rows sharing a business key, explained from each row's origin.

#include <functional>
#include <string>
#include <vector>

#include "models/db/database.hpp"

namespace models::checkers {

struct Duplicates {
  std::uint64_t duplicate_rows = 0;   // rows beyond the first, per key
  std::uint64_t duplicated_keys = 0;  // keys with more than one row
  std::vector<std::string> examples;  // the first few: rows, who inserted them, how far apart
};

Duplicates find_duplicates(const std::vector<db::RowRecord>& rows, const std::string& key_column, std::size_t examples = 3);

/// Reads rows one at a time: Database::for_each_committed or for_each_ever_committed of a table.
using RowSource = std::function<void(const db::Database::RowVisitor&)>;
/// The rows `source` gives whose key another of them has, in the order given. It reads the
/// rows twice, a count per key first, so a table of millions of rows is never copied whole.
std::vector<db::RowRecord> rows_sharing_a_key(const RowSource& source, const std::string& key_column);
/// How many duplicates the rows `source` gives hold (no examples), reading them once.
Duplicates count_duplicates(const RowSource& source, const std::string& key_column);
/// The duplicates among a table's committed rows, as find_duplicates of committed_rows finds
/// them, without a copy of the table (with no examples asked, only counted).
Duplicates find_duplicates(const db::Database& database, const std::string& table, const std::string& key_column,
                           std::size_t examples = 3);

}  // namespace models::checkers
