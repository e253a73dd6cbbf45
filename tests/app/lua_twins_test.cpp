// The Lua twins (strategies/*.lua): each a port of the C++ catalogue strategy of its name
// (strategies/select-for-update.lua of select-for-update), added to a scenario as a script
// ("+script=PATH", labelled by its file name). A twin loads with its original's parameters and
// defaults, and gives the same results as its original on the same seeds: the same metric
// totals, operations and figures on every catalogue scenario that runs the original.

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "app/runner.hpp"
#include "app/scenario.hpp"

namespace {

namespace fs = std::filesystem;

// Trials per comparison at most: enough for the races, pauses and faults of the catalogue to
// happen (a trial runs every event of its world, and a twin must match each one). Under
// AddressSanitizer, where it is the slowest test, one trial each still runs every twin through
// every scenario's paths; the normal build compares three.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kTrials = 1;
#else
constexpr int kTrials = 3;
#endif

// Every twin, sorted.
std::vector<fs::path> twins() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(LOCKSIM_SOURCE_DIR) / "strategies"))
    if (e.is_regular_file() && e.path().extension() == ".lua") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// How a scenario names the twin: its file name. What it ports: the C++ strategy of its stem.
std::string label_of(const fs::path& twin) { return twin.filename().string(); }
std::string original_of(const fs::path& twin) { return twin.stem().string(); }
std::string with_script(const fs::path& twin) { return "+script=" + twin.string(); }

// The scenario's choice shown as `label`, or -1.
long index_of(const locksim::Scenario& s, const std::string& label) {
  for (std::size_t i = 0; i < s.strategies.size(); ++i)
    if (s.strategies[i].shown() == label) return static_cast<long>(i);
  return -1;
}

// A metric's total over the run; a metric a strategy's trials never counted is 0.
double total(const locksim::reports::StrategyResult& r, const std::string& metric) {
  auto it = r.counts.find(metric);
  return it == r.counts.end() ? 0 : it->second.total;
}
double figure(const locksim::reports::StrategyResult& r, const std::string& name) {
  auto it = r.figures.find(name);
  return it == r.figures.end() ? 0 : it->second;
}

// The original's defaults less `index`, which a twin has not: its tables declare the index.
models::strategies::Params twin_defaults(const models::strategies::Entry& entry) {
  models::strategies::Params params;
  for (const auto& p : entry.info.params)
    if (p.kind != models::strategies::ParamKind::index) params[p.name] = p.value;
  return params;
}

// "name=value, ..." in name order, for messages.
std::string text(const models::strategies::Params& params) {
  std::string out;
  for (const auto& [name, value] : params) out += fmt::format("{}{}={:g}", out.empty() ? "" : ", ", name, value);
  return out;
}

// The original's design index (its `index` parameter's default), where it has the parameter.
std::optional<double> design_index(const models::strategies::Entry& entry) {
  for (const auto& p : entry.info.params)
    if (p.kind == models::strategies::ParamKind::index) return p.value;
  return std::nullopt;
}

void check_same_results(const locksim::reports::StrategyResult& cpp, const locksim::reports::StrategyResult& lua) {
  CHECK(lua.trials == cpp.trials);
  CHECK(lua.operations == cpp.operations);
  std::set<std::string> metrics;
  for (const auto& [name, m] : cpp.counts) metrics.insert(name);
  for (const auto& [name, m] : lua.counts) metrics.insert(name);
  for (const std::string& name : metrics) {
    INFO("metric " << name);
    CHECK(total(lua, name) == total(cpp, name));
  }
  // Event for event the same run: the same statements, commands and latencies too.
  std::set<std::string> figures;
  for (const auto& [name, v] : cpp.figures) figures.insert(name);
  for (const auto& [name, v] : lua.figures) figures.insert(name);
  for (const std::string& name : figures) {
    INFO("figure " << name);
    CHECK(figure(lua, name) == figure(cpp, name));
  }
}

}  // namespace

TEST_CASE("every Lua twin in strategies/ loads as a strategy of account-bind, with its original's parameters and defaults") {
  const auto files = twins();
  REQUIRE_FALSE(files.empty());
  for (const fs::path& twin : files) {
    INFO("twin " << twin.string());
    const models::strategies::Entry* entry = models::strategies::find(original_of(twin));
    REQUIRE(entry != nullptr);  // a twin is named after the C++ strategy it ports
    CHECK(entry->workload == "account-bind");
    locksim::Scenario s;
    try {
      s = locksim::load_scenario(locksim::scenario_path("account-bind"), {with_script(twin)}, {label_of(twin)});
    } catch (const locksim::InputError& e) {
      FAIL("the twin does not load: " << e.what());
    }
    REQUIRE(s.strategies.size() == 1);
    const locksim::StrategyChoice& lua = s.strategies.front();
    CHECK(lua.shown() == label_of(twin));
    CHECK(text(lua.params) == text(twin_defaults(*entry)));
  }
}

TEST_CASE("a Lua twin gives the same metric totals as its C++ original on every catalogue scenario that runs it") {
  const auto files = twins();
  REQUIRE_FALSE(files.empty());
  std::set<std::string> compared;  // twins compared on at least one scenario
  for (const std::string& path : locksim::catalogue()) {
    const locksim::Scenario plain = locksim::load_scenario(path);
    if (plain.workload != "account-bind") continue;
    // A twin's SQL is MySQL's, as its original's: compared where the database speaks it.
    if (plain.deployment.database.server.database.engine != models::db::Engine::mariadb) continue;
    for (const fs::path& twin : files) {
      const std::string original = original_of(twin);
      if (std::none_of(plain.strategies.begin(), plain.strategies.end(), [&](const auto& c) { return c.name == original; }))
        continue;
      INFO("scenario " << plain.name << ", twin " << label_of(twin));
      const models::strategies::Entry* entry = models::strategies::find(original);
      REQUIRE(entry != nullptr);
      const locksim::Scenario with = locksim::load_scenario(path, {with_script(twin)});
      const long lua_at = index_of(with, label_of(twin));
      REQUIRE(lua_at >= 0);
      for (std::size_t i = 0; i < with.strategies.size(); ++i) {
        const locksim::StrategyChoice& cpp = with.strategies[i];
        if (static_cast<long>(i) == lua_at || cpp.name != original) continue;
        // The twin's index is its table's: a choice of another index has no twin.
        const auto index = cpp.params.find("index");
        if (index != cpp.params.end() && index->second != design_index(*entry).value_or(-1)) continue;
        // The twin with the choice's parameters (a file's "params", or "as" copies of the original).
        locksim::StrategyChoice lua = with.strategies[static_cast<std::size_t>(lua_at)];
        for (const auto& [name, value] : cpp.params)
          if (auto it = lua.params.find(name); it != lua.params.end()) it->second = value;
        locksim::Scenario s = with;
        s.strategies = {cpp, lua};
        s.trials = std::min(s.trials, kTrials);
        s.expect.clear();
        const locksim::reports::RunResults results = locksim::run_scenario(s);
        INFO("strategy " << cpp.shown());
        REQUIRE(results.strategies.size() == 2);
        CHECK(results.strategies[0].name == cpp.shown());
        CHECK(results.strategies[1].name == lua.shown());
        check_same_results(results.strategies[0], results.strategies[1]);
        compared.insert(label_of(twin));
      }
    }
  }
  for (const fs::path& twin : files) {
    INFO("twin " << label_of(twin) << " ran on no catalogue scenario");
    CHECK(compared.count(label_of(twin)) == 1);
  }
}
