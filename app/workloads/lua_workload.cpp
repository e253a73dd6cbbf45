// Workloads written in Lua (models/workloads/lua/, docs/writing-workloads.md): the user's own
// operation, its tables and its invariant, run with clients as account-bind is. Named by its file:
// "workload": {"script": "workloads/stock.lua", "params": {...}}.

#include <fmt/format.h>

#include <cmath>

#include "app/input.hpp"
#include "app/metrics.hpp"
#include "app/workload_kind.hpp"
#include "app/workloads/client_trial.hpp"

namespace locksim {

namespace {

// "workload": {"script": "workloads/stock.lua", "params": {...}}: the user's own operation and
// its invariant, written in Lua; its tables and first rows join the database's, its metrics the
// registry; a hash of its text pins it in tokens.
void load_lua_workload(const Reader& w, Scenario& s) {
  const std::string given = w.string("script", "");
  std::vector<std::pair<std::string, double>> params;
  if (w.has("params")) {
    w.declare("params", {{"type", "object"}});
    w.declare_names("params", "<param>");
    w.declare("params/<param>", {{"type", {"number", "boolean"}}});
    const Reader p = w.child("params");
    if (!p.raw().is_object()) p.fail("an object: parameter -> number or boolean");
    for (const auto& [name, value] : p.raw().items()) {
      if (value.is_boolean())
        params.emplace_back(name, value.get<bool>() ? 1 : 0);
      else if (value.is_number() && std::isfinite(value.get<double>()))
        params.emplace_back(name, value.get<double>());
      else
        p.fail("a number or a boolean", name);
    }
  }
  std::string file;
  try {
    file = script_path(given);
  } catch (const InputError&) {
    w.fail("a Lua workload file (docs/writing-workloads.md), got " + quote_value(given), "script");
  }
  const std::string text = read_script(file);
  try {
    s.lua_workload = models::workloads::load_workload(file, text, params);
  } catch (const models::lua::ScriptError& e) {
    throw InputError(e.what());
  }
  s.workload_file = given;
  s.workload = s.lua_workload->name;
  if (s.workload == "account-bind" || s.workload == "batch-scheduler" || s.workload == "sessions")
    throw InputError(fmt::format("{}: a Lua workload is named by its file: {} is a built-in workload's name", file, s.workload));
  declare_workload_metrics(file, s.lua_workload->metrics);
  auto& db = s.deployment.database;
  db.tables.insert(db.tables.end(), s.lua_workload->tables.begin(), s.lua_workload->tables.end());
  // The workload's own, not the scenario's: the effective configuration leaves them to its file.
  for (const auto& [table, values] : s.lua_workload->rows) db.rows.push_back({table, values, "workload"});
  s.deployment.redis.keys = s.lua_workload->redis;
  s.workload_hash = fnv1a(fmt::format("{} {}", given, text));
}

class LuaWorkload : public WorkloadKind {
 public:
  const char* name() const override { return "script"; }
  bool claims(const json& workload) const override { return workload.is_object() && workload.contains("script"); }
  void load(const Reader* w, const Reader&, Scenario& s) const override {
    w->only({"script", "params"});
    load_lua_workload(*w, s);
  }
  void effective(const Scenario& s, json& doc) const override {
    json params = json::object();
    for (const auto& p : s.lua_workload->effective)
      if (p.flag)
        params[p.name] = p.value != 0;
      else if (p.value == std::floor(p.value) && std::fabs(p.value) < 9e15)
        params[p.name] = static_cast<std::int64_t>(p.value);
      else
        params[p.name] = p.value;
    doc["workload"] = {{"script", s.workload_file}, {"params", params}};
  }
  TrialOutcome run_trial(const Scenario& s, const StrategyChoice& choice, std::uint64_t seed, TraceKept kept,
                         sim::TieBreak tie_break, sim::Chooser chooser, sim::Footprints* footprints) const override {
    return run_client_trial(s, choice, seed, kept, std::move(tie_break), std::move(chooser), footprints);
  }
};

}  // namespace

const WorkloadKind& lua_workload() {
  static const LuaWorkload kind;
  return kind;
}

}  // namespace locksim
