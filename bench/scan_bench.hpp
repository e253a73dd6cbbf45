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

}  // namespace bench
