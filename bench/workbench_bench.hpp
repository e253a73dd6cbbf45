#pragma once
// The workbench's figures (`locksim serve`, docs/workbench.md): how long the server takes to
// answer its first page, how long a click at a choice point takes to answer with the new trial
// for each catalogue scenario, and what the page weighs.

#include <optional>
#include <string>

namespace bench {

struct WorkbenchFigures {
  std::optional<double> first_page_s;  // `locksim serve` started -> its page fetched, whole command
  double start_s = 0;                  // the workbench made: every scenario loaded once
  double branch_ms_median = 0;         // over the catalogue's scenarios: the median one's branch
  double branch_ms_worst = 0;
  std::string worst;                   // the scenario of the worst
  int scenarios = 0;                   // the scenarios measured
  int under_200_ms = 0;                // of them, those that answered within 200 ms
  double page_bytes = 0;
};

WorkbenchFigures measure_workbench();

}  // namespace bench
