// Workloads written in Lua (models/workloads/lua/, docs/writing-workloads.md): the user's own
// operation, its tables and its invariant, run with clients as account-bind is. Named by its file:
// "workload": {"script": "workloads/stock.lua", "params": {...}}.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "app/database_input.hpp"
#include "app/input.hpp"
#include "app/metrics.hpp"
#include "app/trial.hpp"
#include "app/workload_kind.hpp"
#include "app/workloads/client_trial.hpp"

namespace locksim {

namespace {

// A Lua workload's check over the finished trial: its tables as committed, redis-1's string keys,
// and what each operation came to as its client saw it. A check that fails is the workload's
// mistake, as a scenario file's is.
std::vector<std::pair<std::string, double>> check_workload(const models::workloads::Workload& w, std::uint64_t seed,
                                                           const models::Deployment& deployment,
                                                           const std::vector<models::OperationRecord>& operations,
                                                           const std::vector<models::workloads::Effect>& effects) {
  models::workloads::Final final;
  for (const auto& table : w.tables) {
    models::workloads::Final::Table t{table.name, deployment.database().columns(table.name), {}};
    for (auto& r : deployment.database().committed_rows(table.name)) t.rows.push_back(std::move(r.row));
    std::sort(t.rows.begin(), t.rows.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    final.tables.push_back(std::move(t));
  }
  const auto redis = deployment.redis_instances();
  if (!redis.empty()) {
    const sim::Time now = redis.front()->node().clock().now();
    for (const auto& [key, value] : redis.front()->keyspace().data())
      if (!value.is_hash && (value.expires_at == sim::kNever || value.expires_at > now)) final.redis.emplace_back(key, value.text);
  }
  models::workloads::History history;
  history.operations.reserve(operations.size());
  for (const auto& op : operations) {
    models::workloads::OperationSeen seen;
    seen.operation = op.operation;
    seen.submission = op.value;
    seen.key = op.key;
    seen.client = op.client;
    seen.outcome = op.outcome == models::Outcome::ok ? "ok" : op.time.timed_out > sim::Duration{} ? "unknown" : "failed";
    if (op.last_error != models::ErrorKind::none)
      seen.error = op.last_code.empty() ? models::checkers::error_name(op.last_error, deployment.database().engine()) : op.last_code;
    seen.attempts = op.attempts;
    seen.start_ms = ms(op.start);
    seen.end_ms = ms(op.end);
    history.operations.push_back(std::move(seen));
  }
  history.effects = effects;
  try {
    return models::workloads::check(w, seed, final, history);
  } catch (const models::lua::ScriptError& e) {
    throw InputError(e.what());
  }
}


// "workload": {"script": "workloads/stock.lua", "params": {...}}: the user's own operation and
// its invariant, written in Lua; its tables and first rows join the database's, its metrics the
// registry; a hash of its text pins it in tokens.
void load_lua_workload(const Reader& w, const Reader& top, Scenario& s) {
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
    s.lua_workload = models::workloads::load_workload(file, text, params, read_engine(top));
  } catch (const models::lua::ScriptError& e) {
    // The scenario's params ran with the script's top level (its rows are built from them), so
    // a failure there may be theirs: name them too.
    if (params.empty()) throw InputError(e.what());
    throw InputError(fmt::format("{}: {}: the workload script failed with these params: {}", shown(w.file()), shown(w.where("params")), e.what()));
  }
  s.workload_file = given;
  s.workload = s.lua_workload->name;
  if (const std::vector<std::string> built_in = workload_kind_names();
      std::find(built_in.begin(), built_in.end(), s.workload) != built_in.end())
    throw InputError(fmt::format("{}: a Lua workload is named by its file: {} is a built-in workload's name", file, s.workload));
  declare_workload_metrics(file, s.lua_workload->metrics);
  auto& db = s.deployment.database;
  db.server.database.record_history = true;  // its transactions are the user's own: the anomaly checker reads them
  db.tables.insert(db.tables.end(), s.lua_workload->tables.begin(), s.lua_workload->tables.end());
  // The workload's own, not the scenario's: the effective configuration leaves them to its file.
  for (const auto& [table, values] : s.lua_workload->rows) db.rows.push_back({table, values, "workload"});
  s.deployment.redis.keys = s.lua_workload->redis;
  s.workload_hash = fnv1a(fmt::format("{} {}", given, text));
}

class LuaWorkload : public WorkloadKind, public ClientWorkload {
 public:
  const char* name() const override { return "script"; }
  bool has_clients() const override { return true; }
  bool claims(const json& workload) const override { return workload.is_object() && workload.contains("script"); }
  void load(const Reader* w, const Reader& top, Scenario& s) const override {
    w->only({"script", "params"});
    load_lua_workload(*w, top, s);
  }
  // A workload of the catalogue, with a parameter.
  json exemplar() const override {
    return {{"name", "lua-workload"},
            {"workload", {{"script", "workloads/stock.lua"}, {"params", {{"stock", 2}}}}},
            {"strategies", {{{"script", "workloads/stock/conditional-decrement.lua"}}}}};
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
    return run_client_trial(*this, s, choice, seed, kept, std::move(tie_break), std::move(chooser), footprints);
  }
  // Its table's columns are for the first finding its file declares (its first metric, if none is).
  std::string headline(const Scenario& s) const override {
    const auto& declared = s.lua_workload->metrics;
    const auto finding = std::find_if(declared.begin(), declared.end(), [](const auto& m) { return m.finding; });
    return (finding != declared.end() ? *finding : declared.front()).name;
  }
  // Its invariants are its file's check: no business key the generic duplicate_rows reads.
  std::vector<models::checkers::KeyedTable> keyed_tables(const Scenario&) const override { return {}; }
  void check(const Scenario& s, const ClientTrialEnd& end, const models::checkers::Trial& trial,
             models::checkers::Findings& out) const override {
    for (auto& [name, value] : check_workload(*s.lua_workload, end.seed, end.deployment, *trial.operations, end.env.effects()))
      out.set(name, value);
  }
};

}  // namespace

const WorkloadKind& lua_workload() {
  static const LuaWorkload kind;
  return kind;
}

}  // namespace locksim
