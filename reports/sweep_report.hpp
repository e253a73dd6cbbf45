#pragma once
// A parameter sweep's results, and its report: a table, a plot of the metric against the
// varied parameter with its 95% interval band (one line per strategy), or a heat map per
// strategy when two parameters vary. The report folder (<scenario folder>/sweep) is replaced
// whole at the end (reports/report_folder.hpp); the points of a sweep in progress are saved
// apart, in <scenario folder>/sweep.partial/, so that the report of the last finished sweep
// never shows beside the points of another.

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
  std::string points_json;  // the saved points (points.json), which --resume reads; "" for none
  std::vector<std::vector<double>> not_run = {};  // grid points a deadline left unmeasured, in grid order
  std::string stopped = {};  // "time": --time ended the sweep before every point was measured
  double stopped_after_s = 0;  // a timing field
};

std::string sweep_table(const SweepResults& sweep);
/// Replaces `folder` (<scenario folder>/sweep) with sweep.md, report.html, sweep.dat, sweep.gp, the
/// pictures and points.json, then drops the saved progress of this sweep; returns a note when
/// there are no pictures.
std::string write_sweep_report(const SweepResults& sweep, const std::string& folder);

/// Saves the points of the sweep in progress whose report goes to `folder`, as
/// <folder>.partial/points.json.
void save_sweep_progress(const std::string& folder, const std::string& points_json);
/// The saved points a resumed sweep of `folder` may continue from, in the order to try them:
/// the sweep in progress, then the last finished one.
std::vector<std::string> saved_sweep_points(const std::string& folder);

}  // namespace locksim::reports
