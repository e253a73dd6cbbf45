#include "bench/script_bench.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "app/runner.hpp"
#include "app/scenario.hpp"
#include "models/strategies/script.hpp"

namespace bench {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::size_t resident_bytes() {
  std::ifstream in("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  in >> pages >> resident;
  return resident * static_cast<std::size_t>(::sysconf(_SC_PAGE_SIZE));
}

std::string twin_of(const std::string& strategy) { return std::string(LOCKSIM_STRATEGY_DIR) + "/" + strategy + ".lua"; }

}  // namespace

ScriptFigures script_bench(int trials, int repeats) {
  ScriptFigures out;
  for (const std::string name : {"redis-token-cas-unlock", "select-for-update"}) {
    const std::string label = name + ".lua";
    locksim::Scenario s = locksim::load_scenario(locksim::scenario_path("account-bind"),
                                                 {std::string(locksim::kScriptOverride) + twin_of(name)}, {name, label});
    s.trials = trials;
    // One strategy at a time, the two alternating, so drift in the machine's speed hits both.
    std::vector<double> cpp, lua;
    for (int i = 0; i < repeats; ++i)
      for (const std::string& which : {name, label}) {
        locksim::Scenario one = s;
        locksim::narrow_strategies(one, {which});
        const auto start = std::chrono::steady_clock::now();
        locksim::run_scenario(one, 1);
        (which == name ? cpp : lua).push_back(trials / seconds_since(start));
      }
    out.twins.push_back({name, median(cpp), median(lua)});
  }

  // The same operation as a Lua workload: account-bind's world and traffic, the workload's table,
  // request fields and check in place of the built-in ones.
  {
    nlohmann::json doc;
    std::ifstream(locksim::scenario_path("account-bind")) >> doc;
    doc["name"] = "bind-openid";
    doc["workload"] = {{"script", std::string(LOCKSIM_BENCH_DIR) + "/workloads/bind-openid.lua"}};
    doc["strategies"] = {{{"script", std::string(LOCKSIM_BENCH_DIR) + "/workloads/bind-openid/select-for-update.lua"}}};
    doc.erase("expect");
    doc["trials"] = trials;
    locksim::Scenario workload = locksim::load_document(doc, "bind-openid.json");
    locksim::Scenario builtin = locksim::load_scenario(locksim::scenario_path("account-bind"),
                                                       {std::string(locksim::kScriptOverride) + twin_of("select-for-update")},
                                                       {"select-for-update", "select-for-update.lua"});
    builtin.trials = trials;
    std::vector<double> cpp, lua, script;
    for (int i = 0; i < repeats; ++i) {
      for (const std::string which : {"select-for-update", "select-for-update.lua"}) {
        locksim::Scenario one = builtin;
        locksim::narrow_strategies(one, {which});
        const auto start = std::chrono::steady_clock::now();
        locksim::run_scenario(one, 1);
        (which == "select-for-update" ? cpp : lua).push_back(trials / seconds_since(start));
      }
      const auto start = std::chrono::steady_clock::now();
      locksim::run_scenario(workload, 1);
      script.push_back(trials / seconds_since(start));
    }
    out.workload = {median(cpp), median(lua), median(script)};
  }

  // Live strategy instances, each with its own state, as the trials of one thread hold them.
  const locksim::StrategyChoice twin = locksim::load_script_file(twin_of("redis-token-cas-unlock"));
  models::strategies::Env env(models::strategies::Services{});
  constexpr int kStates = 2000;
  std::vector<std::unique_ptr<models::strategies::Strategy>> states;
  states.reserve(kStates);
  const std::size_t before = resident_bytes();
  for (int i = 0; i < kStates; ++i) states.push_back(twin.entry().make(env, twin.params));
  out.state_bytes = static_cast<double>(resident_bytes() - before) / kStates;
  states.clear();

  // From the script's text to the end of its first trial: a new script each time.
  std::vector<double> first;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    locksim::Scenario s = locksim::load_scenario(locksim::scenario_path("account-bind"),
                                                 {std::string(locksim::kScriptOverride) + twin_of("redis-token-cas-unlock")},
                                                 {"redis-token-cas-unlock.lua"});
    locksim::run_trial(s, s.strategies.front(), s.seed);
    first.push_back(seconds_since(start) * 1000);
  }
  out.first_trial_ms = median(first);
  return out;
}

}  // namespace bench
