#pragma once
// Duplicate rows: committed rows sharing a business key, explained from each row's origin.

#include <string>
#include <vector>

#include "models/db/database.hpp"

namespace models::checkers {

struct Duplicates {
  std::uint64_t duplicate_rows = 0;   // rows beyond the first, per key
  std::uint64_t duplicated_keys = 0;  // keys with more than one row
  std::vector<std::string> examples;  // the first few: rows, who inserted them, how far apart
};

/// The rows that share a value of `key_column` with another (NULL shares with none, as a unique
/// index sees it).
Duplicates find_duplicates(const std::vector<db::RowRecord>& rows, const std::string& key_column, std::size_t examples = 3);

/// The duplicates among a table's committed rows, as find_duplicates of committed_rows finds
/// them, without a copy of the table (Database::rows_sharing).
Duplicates find_duplicates(const db::Database& database, const std::string& table, const std::string& key_column,
                           std::size_t examples = 3);

}  // namespace models::checkers
