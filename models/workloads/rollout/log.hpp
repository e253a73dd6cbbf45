#pragma once
// What a rollout (rollout.hpp) records as it plays its plan, for its checkers (below): where its
// phases begin, the duplicates left in the table at each phase's end, every row the table ever
// held, each DDL statement and each cleanup run.

#include <cstdint>
#include <string>
#include <vector>

#include "models/checkers/checker.hpp"
#include "models/db/database.hpp"
#include "sim/sim.hpp"

namespace models::rollout {

struct RolloutLog {
  /// Where phase k (from 1) begins: boundaries[k - 1]; the last boundary is the plan's end.
  /// boundaries[0] is the start of the trial.
  std::vector<sim::Time> boundaries{};
  /// Duplicate rows in the table (rows beyond the first of a key) at each boundary, taken as
  /// the trial reached it (fewer than the boundaries when the trial ended before its plan).
  std::vector<std::uint64_t> duplicates_at{};
  /// Duplicate rows in the table at kSamples + 1 evenly spaced times from the start to the
  /// plan's end (as the trial reached them): the rollout picture's lines, between phase ends.
  static constexpr std::size_t kSamples = 30;
  std::vector<std::uint64_t> duplicates_sampled{};
  /// Every row whose insert committed, deleted since or not, of a key that more than one such
  /// row had, in id order (filled at the end; the others are no duplicate, and a legacy table
  /// may hold millions).
  std::vector<db::RowRecord> rows_ever{};
  std::string key_column{};
  struct Ddl {
    sim::Time start{}, end{};
    std::string sql;
    db::Code code = db::Code::ok;
  };
  std::vector<Ddl> ddl{};
  /// When a unique index on the key column was built; never: the trial's end is not reached.
  bool indexed = false;
  sim::Time indexed_at{};
  std::uint64_t cleanup_runs = 0, cleanup_deleted = 0;
  /// The phase (from 1) a time falls in: the last boundary at or before it.
  std::size_t phase_of(sim::Time t) const;
  std::size_t phases() const { return boundaries.empty() ? 0 : boundaries.size() - 1; }
};

/// A rollout's checkers: its phases as they went (duplicates created and left, operations,
/// latency, DDL, cleanup). A rollout is account-bind over time: account-bind's checkers apply
/// to its trials too.
const checkers::WorkloadCheckers<RolloutLog>& rollout_checkers();

}  // namespace models::rollout
