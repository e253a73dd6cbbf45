#include "app/commands/options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string_view>
#include <thread>

#include <unistd.h>

#include "app/input.hpp"

namespace locksim::commands {

namespace {

// A wall-clock limit in seconds: a finite number in range (CLI::Range lets NaN through).
CLI::Validator seconds_limit() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::string expected = "expected a number of seconds from 0.001 to 1e7, got " + quote_value(text);
        double v = 0;
        try {
          std::size_t used = 0;
          v = std::stod(text, &used);
          if (used != text.size()) return expected;
        } catch (const std::exception&) {
          return expected;
        }
        return std::isfinite(v) && v >= 0.001 && v <= 1e7 ? "" : expected;
      },
      "SECONDS");
}

// A seed: a decimal number from 0 to 2^63 - 1, as in a scenario file (CLI11 reads "-1" into
// an unsigned as 2^64 - 1).
CLI::Validator seed_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto v = parse_u64(text);
        if (v && *v <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return "";
        return "expected a seed from 0 to 9223372036854775807, got " + quote_value(text);
      },
      "SEED");
}

}  // namespace

int default_jobs() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

void add_scenario(CLI::App& command, std::string& scenario) {
  command.add_option("scenario", scenario, "a scenario file, or a name from scenarios/")->required();
}

std::vector<std::string> ScenarioInputs::overrides() const {
  std::vector<std::string> out;
  if (!workload_file.empty()) out.push_back(std::string(kWorkloadOverride) + workload_file);
  for (const auto& f : strategy_files) out.push_back(std::string(kScriptOverride) + f);
  out.insert(out.end(), sets.begin(), sets.end());
  return out;
}

void add_inputs(CLI::App& command, ScenarioInputs& inputs, const std::string& set_help, const std::string& strategy_file_help) {
  command.add_option("--set", inputs.sets, set_help);
  command.add_option("--strategy-file", inputs.strategy_files, strategy_file_help);
  command.add_option("--workload-file", inputs.workload_file,
                     "run the scenario's world and traffic with this workload written in Lua instead of its own; its strategies "
                     "are the --strategy-file ones (docs/writing-workloads.md)");
}

void add_trials_and_seed(CLI::App& command, std::optional<int>& trials, std::optional<std::uint64_t>& seed,
                         const std::string& trials_help, const std::string& seed_help) {
  command.add_option("--trials", trials, trials_help)->check(CLI::Range(1, 10'000'000));
  command.add_option("--seed", seed, seed_help)->check(seed_number());
}

void add_jobs(CLI::App& command, int& jobs, const std::string& help) {
  command.add_option("--jobs", jobs, help)->check(CLI::Range(1, 1024));
}

void add_time(CLI::App& command, std::optional<double>& seconds, const std::string& help) {
  command.add_option("--time", seconds, help)->check(seconds_limit());
}
void add_time(CLI::App& command, double& seconds, const std::string& help) {
  command.add_option("--time", seconds, help)->check(seconds_limit());
}

reports::HistoryFormat history_format(const std::string& file) {
  const auto ends = [&](std::string_view tail) { return file.size() > tail.size() && file.ends_with(tail); };
  if (!ends(".edn") && !ends(".json"))
    throw InputError(fmt::format("--history {}: expected a file name ending in .edn or .json", shown(file)));
  return ends(".edn") ? reports::HistoryFormat::edn : reports::HistoryFormat::json;
}

reports::HistoryFormat history_format(const std::string& file, const Scenario& s) {
  const reports::HistoryFormat format = history_format(file);
  if (s.strategies.size() != 1) {
    std::vector<std::string> names;
    for (const auto& st : s.strategies) names.push_back(st.shown());
    throw InputError(fmt::format("--history writes one strategy's trial: name it with --strategy ({} runs {})", s.name,
                                 fmt::join(names, ", ")));
  }
  return format;
}

void write_history(const std::string& file, reports::HistoryFormat format, const reports::Timeline& t, const std::string& strategy,
                   bool quiet) {
  reports::write_atomically(file, reports::history_text(t, format));
  if (!quiet)
    fmt::print("history of {} (seed {}): {} operations{} in {}\n", strategy, t.seed, t.history.size(),
               t.history_left_out > 0 ? fmt::format(", the first of {}", t.history.size() + t.history_left_out) : "", file);
}

Progress::Progress(std::string what) : what_(std::move(what)), on_(::isatty(2) == 1), start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() {
  if (on_ && drawn_) fmt::print(stderr, "\r\033[K");
}

void Progress::operator()(std::size_t done, std::size_t total) {
  if (!on_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = static_cast<double>(done) / std::max(elapsed, 1e-9);
  fmt::print(stderr, "\r\033[K{} {}/{} done, {:.2f}/s, about {:.0f} s left", what_, done, total, rate,
             static_cast<double>(total - done) / std::max(rate, 1e-9));
  drawn_ = true;
}

}  // namespace locksim::commands
