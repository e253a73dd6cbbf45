#pragma once
// Isolation anomalies found from a trial's history of transactions (models/db/history.hpp):
// what the anomalies.* metrics count (anomalies.cpp, docs/anomalies.md).

#include "models/checkers/checker.hpp"
#include "models/db/history.hpp"

namespace models::checkers {

/// The first anomaly of a class, explained: its metric, the steps of its cycle in words, and who
/// ran its transactions (their sessions, in the cycle's order, each once).
struct Anomaly {
  std::string metric;
  std::string text;
  std::vector<std::string> who;
};

/// The first anomaly of each class `history` holds (none where it is too long to check).
std::vector<Anomaly> explain_anomalies(const db::History& history);

/// Counts in `out` the anomalies of `history`'s committed transactions (anomalies.g0, .g1a,
/// .g1b, .g1c, .g_single, .g2_item, .g2; anomalies.unchecked where it is too long to check) and
/// explains the first of each class in `out.examples`.
void find_anomalies(const db::History& history, Findings& out);

}  // namespace models::checkers
