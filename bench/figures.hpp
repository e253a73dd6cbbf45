#pragma once
// The benchmark's figures: printed as a Markdown table and as `name: value` lines, and written
// to reports/out/bench/ (bench.md, figures.json, and a gnuplot bar chart of the RPC workload
// across locksim, its callback-loop baseline and the peers).

#include <optional>
#include <string>
#include <vector>

namespace bench {

struct Figure {
  std::string name;             // `name: value` on stdout, the key in figures.json
  std::string what;             // the table's description
  std::optional<double> value;  // none: not measured (a missing peer), `note` says why
  std::string note;
  std::string target;           // ">= 0.75", "<= 12 GiB" ...: empty when the issue sets none
  std::optional<bool> met;
};

/// A figure with a target: met when `value op bound` holds.
Figure figure(std::string name, std::string what, std::optional<double> value, const char* op = nullptr,
              double bound = 0, std::string note = "");

/// The table on stdout, then each figure as `name: value`; and reports/out/bench/.
void report(const std::vector<Figure>& figures, const std::string& machine);

}  // namespace bench
