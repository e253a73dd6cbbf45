#pragma once
// A parameter sweep's results, and its report: a table, a plot of the metric against the
// varied parameter with its 95% interval band (one line per strategy), or a heat map per
// strategy when two parameters vary.

#include <string>
#include <vector>

#include "reports/results.hpp"

namespace locksim::reports {

struct SweepPoint {
  std::vector<double> at;  // one value per varied path
  struct Value {
    std::string strategy;
    double value = 0, low = 0, high = 0;  // a share of trials with its interval, or a figure (low = high = value)
  };
  std::vector<Value> values;
};

struct SweepResults {
  std::string scenario;
  std::vector<std::string> varied;  // the paths, e.g. "clients.timeout_ms"
  std::string metric;
  bool is_share = true;  // the metric is a count, shown as the share of trials in which it fired
  std::vector<SweepPoint> points;  // in grid order
  std::vector<std::vector<double>> not_run = {};  // grid points a deadline left unmeasured, in grid order
  std::string stopped = {};  // "time": --time ended the sweep before every point was measured
  double stopped_after_s = 0;  // a timing field
};

std::string sweep_table(const SweepResults& sweep);
/// Writes sweep.md, sweep.dat, sweep.gp and the pictures into `folder`; returns a note when
/// there are no pictures.
std::string write_sweep_report(const SweepResults& sweep, const std::string& folder);

}  // namespace locksim::reports
