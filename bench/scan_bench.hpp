#pragma once
// A locking scan over many rows, as a user runs it: `locksim run` of a sessions scenario that
// deletes every one of N seeded rows in one transaction, whole command timed, median of 3. A
// locking scan once looked through every lock of the table for each row (quadratic).

#include <optional>

namespace bench {

struct ScanFigures {
  std::optional<double> delete_10k_s, delete_100k_s;  // none: the command failed
};

ScanFigures scan_bench(int repeats);

/// What a seeded row costs where the database stores it: the resident bytes a Database gains
/// loading `rows` legacy rows of t_account (vivo-rollout's table, its key column indexed) by
/// the rule of `database.legacy` (3% of keys duplicated), a row; and what bytes_held counts a
/// row. Run it in a process of its own: it reads the process's resident size.
struct RowBytes {
  double resident = 0, counted = 0;
};
RowBytes bytes_per_seeded_row(int rows);

}  // namespace bench
