#pragma once
// `locksim sweep`: a scenario run at every point of a grid of parameter values, one metric
// per strategy per point. Points are saved as they finish, so --resume continues an
// interrupted sweep from the points already written.

#include <functional>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "reports/sweep_report.hpp"

namespace locksim {

/// One varied path: "clients.timeout_ms=100:1000:100" (from, to, step; `to` included),
/// "redlock.ttl_ms=1000:30000:log6" (6 points spaced evenly on a log scale, both ends
/// included), or "redlock.ttl_ms=1000,2000,5000" (the values listed).
struct Vary {
  std::string path;
  double from = 0, to = 0, step = 1;
  int log_points = 0;          // from:to:logN
  std::vector<double> list{};  // a,b,c
  std::string spec{};          // the text after '=', as given
  std::vector<double> values() const;
};
/// Throws InputError for a malformed --vary.
Vary parse_vary(const std::string& text);
/// The folder name of a sweep over `varies` of `metric`: "sweep-<path>_<spec>[+...][-<metric>]",
/// so sweeps of other grids never replace each other's reports.
std::string sweep_folder_name(const std::vector<Vary>& varies, const std::string& metric);

struct SweepOptions {
  std::string scenario;
  std::vector<std::string> sets;
  std::vector<std::string> strategies;
  std::vector<Vary> varies;
  std::string metric = "duplicate_rows";
  std::optional<int> trials;
  std::optional<std::uint64_t> seed;
  int jobs = 1;
  bool resume = false;
  std::string folder;  // where points.json and the report go
  /// The sweep's deadline (--time), as RunControl::stop: a point it cuts short is not kept,
  /// and it and the points after it are reported as not run (--resume runs them).
  std::function<bool()> stop = {};
  /// The same deadline for the trials under way, as RunControl::interrupt_at: each ends there,
  /// unfinished, and its point is one cut short.
  std::optional<std::chrono::steady_clock::time_point> interrupt_at{};
};

/// Runs every point not already saved (with `resume`), saving each as it finishes;
/// `progress(done, total)` after each. Throws InputError for bad input.
reports::SweepResults run_sweep(const SweepOptions& options,
                                const std::function<void(std::size_t, std::size_t)>& progress = {});

}  // namespace locksim
