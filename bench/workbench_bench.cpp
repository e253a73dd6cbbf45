#include "bench/workbench_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <vector>

#include "app/scenario.hpp"
#include "app/serve.hpp"
#include "app/workbench.hpp"
#include "bench/commands.hpp"

namespace bench {

namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }
}  // namespace

WorkbenchFigures measure_workbench() {
  WorkbenchFigures out;
  std::vector<double> first;
  for (int i = 0; i < 3; ++i)
    if (auto s = timed_command(fmt::format("python3 {}/bench/serve_first_page.py {}", LOCKSIM_SOURCE_DIR, LOCKSIM_BIN))) first.push_back(*s);
  out.first_page_s = median_of(first);
  out.page_bytes = static_cast<double>(locksim::workbench_page().size());

  const auto drafts = std::filesystem::temp_directory_path() / "locksim-bench-drafts";
  std::filesystem::create_directories(drafts);
  const auto started = Clock::now();
  locksim::workbench::Workbench bench({"", drafts.string()});
  out.start_s = ms_since(started) / 1000;
  std::vector<std::pair<double, std::string>> branch_ms;
  for (const std::string& path : locksim::catalogue()) {
    const std::string id = std::filesystem::path(path).stem().string();
    nlohmann::json t;
    try {
      t = bench.call("trial", {{"scenario", id}});
    } catch (const std::exception&) {
      continue;  // a scenario whose default trial the workbench cannot open: not a click's figure
    }
    std::uint64_t last = 0;  // the last choice with another option: the click that reruns the most
    for (const auto& c : t.at("choices"))
      if (c.at("options").get<int>() > 1) last = c.at("index");
    std::vector<double> times;
    for (int i = 0; i < 3; ++i) {
      const auto clicked = Clock::now();
      bench.call("branch", {{"token", t.at("token")}, {"choice", last}, {"option", 1}});
      times.push_back(ms_since(clicked));
    }
    branch_ms.emplace_back(*median_of(times), id);
  }
  std::filesystem::remove_all(drafts);
  std::sort(branch_ms.begin(), branch_ms.end());
  out.scenarios = static_cast<int>(branch_ms.size());
  if (!branch_ms.empty()) {
    out.branch_ms_median = branch_ms[branch_ms.size() / 2].first;
    out.branch_ms_worst = branch_ms.back().first;
    out.worst = branch_ms.back().second;
  }
  out.under_200_ms = static_cast<int>(std::count_if(branch_ms.begin(), branch_ms.end(), [](const auto& b) { return b.first <= 200; }));
  return out;
}

}  // namespace bench
