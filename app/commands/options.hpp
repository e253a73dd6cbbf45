#pragma once
// What the commands share: the option groups several of them declare (the scenario and its
// overrides, --jobs, --time, --trials and --seed), their checks, and the pieces of output
// more than one prints (the progress line, a trial's history).

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/scenario.hpp"
#include "reports/history.hpp"

namespace locksim::commands {

/// The scenario file the command runs, which the one line of an allocation failure names.
inline std::string running_file;

/// Threads by default: every core.
int default_jobs();

/// The positional scenario: a file, or a name from scenarios/.
void add_scenario(CLI::App& command, std::string& scenario);

/// What a command runs besides, or instead of, the scenario's own: --set overrides, strategies
/// written in Lua (--strategy-file) and a workload written in Lua (--workload-file).
struct ScenarioInputs {
  std::vector<std::string> sets, strategy_files;
  std::string workload_file;
  /// Every one as an override of the scenario, so that tokens carry them: the workload file
  /// first, then the scripts that are its strategies, then the --set ones.
  std::vector<std::string> overrides() const;
};
/// --set, --strategy-file and --workload-file, with the help of --set and --strategy-file.
void add_inputs(CLI::App& command, ScenarioInputs& inputs, const std::string& set_help, const std::string& strategy_file_help);
/// --strategy-file's help where a file adds to the scenario's strategies.
inline constexpr const char* kStrategyFileHelp = "also run this strategy written in Lua (repeatable; docs/writing-strategies.md)";

/// --trials and --seed, with their help.
void add_trials_and_seed(CLI::App& command, std::optional<int>& trials, std::optional<std::uint64_t>& seed,
                         const std::string& trials_help, const std::string& seed_help);
/// --jobs: threads, 1 to 1024.
void add_jobs(CLI::App& command, int& jobs, const std::string& help);
/// --time: wall seconds at most.
void add_time(CLI::App& command, std::optional<double>& seconds, const std::string& help);
void add_time(CLI::App& command, double& seconds, const std::string& help);

/// --history FILE: the format its name ends in.
reports::HistoryFormat history_format(const std::string& file);
/// run's: one strategy's trial only.
reports::HistoryFormat history_format(const std::string& file, const Scenario& s);
/// Writes a trial's history where --history asked, and says so unless `quiet` (stdout is JSON).
void write_history(const std::string& file, reports::HistoryFormat format, const reports::Timeline& t, const std::string& strategy,
                   bool quiet = false);

/// A progress line on stderr, redrawn in place, only when stderr is a terminal.
class Progress {
 public:
  explicit Progress(std::string what);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void operator()(std::size_t done, std::size_t total);

 private:
  std::string what_;
  bool on_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace locksim::commands
