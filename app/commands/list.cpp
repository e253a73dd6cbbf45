// `locksim list`: the strategies (built in, and written in Lua), the workloads written in Lua
// and the scenario catalogue; `--metrics`, every metric (docs/metrics.md).

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "app/commands/commands.hpp"
#include "app/metrics.hpp"
#include "app/scenario.hpp"
#include "models/strategies/script.hpp"

namespace locksim::commands {

namespace {

void list_strategies() {
  std::string shown;
  for (const auto& e : models::strategies::registry()) {
    if (shown != e.workload) fmt::print("strategies of the {} workload:\n", shown = e.workload);
    fmt::print("  {:<30} {}\n", e.info.name, e.info.description);
    fmt::print("  {:<30} source: {}; risks: {}\n", "", e.info.source, e.info.risks);
    for (const auto& p : e.info.params)
      fmt::print("  {:<30} --set {}.{}={:g}  ({})\n", "", e.info.name, p.name, p.value, p.meaning);
  }
  const auto scripts = script_catalogue();
  if (!scripts.empty()) fmt::print("strategies written in Lua, in strategies/ (run one with --strategy-file NAME):\n");
  for (const auto& file : scripts) {
    const std::string name = std::filesystem::path(file).filename().string();
    try {
      fmt::print("  {:<30} {}\n", name, load_script_file(file).script->info.description);
    } catch (const std::exception& e) {
      fmt::print("  {:<30} (does not load: {})\n", name, e.what());
    }
  }
}

// The files of `folder` ending in .lua, in order.
std::vector<std::filesystem::path> lua_files(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
    if (entry.path().extension() == ".lua") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

// A workload written in Lua: its description and metrics.
void list_workload(const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  try {
    // Its tables in MariaDB's dialect, or else in PostgreSQL's: a scenario's engine picks one.
    const std::string text = read_script(file.string());
    std::shared_ptr<const models::workloads::Workload> w;
    try {
      w = models::workloads::load_workload(file.string(), text);
    } catch (const models::lua::ScriptError&) {
      w = models::workloads::load_workload(file.string(), text, {}, models::db::Engine::postgresql);
    }
    std::string metrics;
    for (const auto& m : w->metrics) metrics += (metrics.empty() ? "" : ", ") + m.name;
    fmt::print("  {:<30} {}\n  {:<30} metrics: {}\n", name, w->description, "", metrics);
  } catch (const std::exception& e) {
    fmt::print("  {:<30} (does not load: {})\n", name, e.what());
  }
}

// The workloads written in Lua, and the strategies in the folder of each one's name.
void list_workloads() {
  const std::filesystem::path workloads = std::filesystem::path(LOCKSIM_STRATEGY_DIR).parent_path() / "workloads";
  const std::vector<std::filesystem::path> files = lua_files(workloads);
  if (!files.empty()) fmt::print("workloads written in Lua, in workloads/ (run one with \"workload\": {{\"script\": ...}} or --workload-file):\n");
  for (const auto& file : files) {
    list_workload(file);
    for (const auto& strategy : lua_files(workloads / file.stem())) {
      try {
        fmt::print("    {:<28} {}\n", strategy.filename().string(), load_script_file(strategy.string()).script->info.description);
      } catch (const std::exception& e) {
        fmt::print("    {:<28} (does not load: {})\n", strategy.filename().string(), e.what());
      }
    }
  }
}

int list(bool metrics_page) {
  if (metrics_page) {  // docs/metrics.md
    fmt::print("{}", metrics_markdown());
    return 0;
  }
  list_strategies();
  list_workloads();
  fmt::print("scenarios:\n");
  for (const auto& file : catalogue()) {
    const auto s = load_scenario(file);
    fmt::print("  {:<30} {}\n", s.name, s.description);
  }
  return 0;
}

}  // namespace

Command list_command(CLI::App& app) {
  auto* cli = app.add_subcommand("list", "list the strategies and the scenario catalogue");
  auto metrics = std::make_shared<bool>(false);
  cli->add_flag("--metrics", *metrics, "print every metric, its kind, unit and meaning (docs/metrics.md)");
  return {cli, [metrics] { return list(*metrics); }};
}

}  // namespace locksim::commands
