// The sessions workload: the scenario's SQL steps, session by session, on one database; its
// one strategy is the script itself. Its keys of "workload": how long a blocked step is given
// before the next; its steps are the scenario's "steps". Both are its models::sessions::Script,
// kept in the scenario.

#include <zlib.h>

#include <algorithm>
#include <type_traits>

#include "app/database_input.hpp"
#include "app/fault_kind.hpp"
#include "app/story.hpp"
#include "app/trial.hpp"
#include "app/workload_kind.hpp"
#include "models/checkers/checker.hpp"
#include "models/workloads/sessions/deployment.hpp"
#include "models/workloads/sessions/checker.hpp"

namespace locksim {
namespace {

// The error as the engine's server names it: MySQL's number, PostgreSQL's SQLSTATE.
std::string error_code(const models::db::Result& r, models::db::Engine engine) {
  return engine == models::db::Engine::postgresql ? models::db::sqlstate(r.code) : std::to_string(static_cast<int>(r.code));
}

std::string step_outcome(const models::sessions::StepRecord& r, models::db::Engine engine) {
  if (!r.was_issued) return "not issued";
  if (!r.done) return "unfinished";
  return r.result.ok() ? "ok" : error_code(r.result, engine);
}

reports::StepResult step_result(const models::sessions::StepRecord& r, models::db::Engine engine) {
  reports::StepResult out;
  out.step = r.step;
  out.session = r.session;
  out.sql = r.sql;
  if (!r.was_issued) return out;
  out.issued_ms = ms(r.issued);
  if (!r.done) return out;
  const models::db::Result& res = r.result;
  out.finished_ms = ms(r.finished);
  if (r.result.applied != sim::kNever) out.applied_ms = ms(r.result.applied);
  out.columns = r.columns;
  for (const auto& row : r.rows) {
    std::vector<reports::Cell> cells;
    for (const auto& v : row) cells.push_back(cell_of(v));
    out.rows.push_back(std::move(cells));
  }
  out.affected = res.affected;
  out.insert_id = res.insert_id;
  out.warnings = res.warnings;
  out.error = res.ok() ? 0 : static_cast<int>(res.code);
  if (!res.ok()) out.code = error_code(res, engine);
  out.message = res.message.empty() && !res.ok() ? models::db::to_string(res.code) : res.message;
  for (const auto& w : res.waits) {
    for (const auto& who : w.behind)
      if (std::find(out.waited_for.begin(), out.waited_for.end(), who) == out.waited_for.end()) out.waited_for.push_back(who);
    out.waited_ms += std::chrono::duration<double, std::milli>(w.waited).count();
    out.waits.push_back(lock_wait(w));
  }
  out.deadlock_cycle = res.deadlock_cycle;
  out.undone = undone_name(res.undone);
  out.undone_rows = res.undone_rows;
  return out;
}

// A table at the end of the trial as the results keep it: its first rows, the count of all and
// their digest (reports::TableResult).
reports::TableResult table_result(const models::sessions::TableContents& t) {
  reports::TableResult table{t.table, t.columns, {}, t.rows.size(), 0};
  std::string joined;
  for (const auto& row : t.rows) {
    std::vector<reports::Cell> cells;
    joined.clear();
    for (const auto& column : t.columns) {
      const std::optional<models::db::Value> v = row.row.values.find(column);
      cells.push_back(v ? cell_of(*v) : reports::Cell{row.row.id});
      if (&column != &t.columns.front()) joined += ',';
      joined += std::visit([](const auto& v) {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) return v;
        else if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::nullptr_t>) return std::string("NULL");
        else return std::to_string(v);
      }, cells.back());
    }
    table.checksum += ::crc32(0, reinterpret_cast<const Bytef*>(joined.data()), static_cast<uInt>(joined.size()));
    if (table.rows.size() < reports::kTableRowsKept) table.rows.push_back(std::move(cells));
  }
  return table;
}

// The sessions workload's trial: the script on its sessions, then the tables as they are.
// `in_full`: keep every step's record and the tables (the first trial's, for the report).
// The client-visible history of a script: each issued step an operation of its session's process
// (the sessions numbered in the order the script first uses them), ok with its rows or the rows
// it changed, fail with its error (the server answered: the statement took no effect), info where
// the trial ended before its answer.
std::vector<reports::Timeline::Operation> history(const std::vector<reports::StepResult>& steps) {
  std::vector<std::string> sessions;
  std::vector<reports::Timeline::Operation> out;
  for (const auto& step : steps) {
    if (step.issued_ms < 0) continue;
    auto at = std::find(sessions.begin(), sessions.end(), step.session);
    if (at == sessions.end()) at = sessions.insert(at, step.session);
    reports::Timeline::Operation op;
    op.client = static_cast<std::uint32_t>(at - sessions.begin());
    op.f = "sql";
    op.value = {{"session", step.session}, {"sql", step.sql}};
    op.invoked_s = step.issued_ms / 1000;
    if (step.finished_ms < 0) {
      op.error = "unfinished";
    } else if (!step.code.empty()) {
      op.completed_s = step.finished_ms / 1000;
      op.type = reports::Timeline::Operation::Type::fail;
      op.error = step.code;
    } else {
      op.completed_s = step.finished_ms / 1000;
      op.type = reports::Timeline::Operation::Type::ok;
      op.result = op.value;
      if (!step.columns.empty()) {
        std::string rows;
        for (const auto& row : step.rows) {
          std::string cells;
          for (const auto& c : row) cells += (cells.empty() ? "" : ", ") + reports::to_text(c);
          rows += (rows.empty() ? "(" : ", (") + cells + ")";
        }
        op.result.emplace_back("rows", rows);
      } else {
        op.result.emplace_back("affected", step.affected);
      }
    }
    out.push_back(std::move(op));
  }
  return out;
}

TrialOutcome run_sessions_trial(const Scenario& s, sim::EngineConfig engine, bool in_full) {
  models::sessions::Deployment deployment(std::move(engine), s.deployment, own_config<models::sessions::Script>(s));
  inject_faults(s, deployment.fault_surface());
  deployment.start();
  const sim::RunResult run = deployment.run();
  deployment.engine().shutdown();

  const auto& records = deployment.sessions().records();
  const std::vector<models::sessions::TableContents> tables = deployment.tables();
  models::checkers::Trial trial{.end = deployment.engine().now(), .finished = run.ok(),
                                 .out_of_memory = run.status == sim::RunStatus::memory_budget, .database = &deployment.database()};
  for (const auto& t : tables)  // a table's rows by its indexed column
    if (!t.key_column.empty()) trial.keyed_tables.push_back({t.table, t.key_column});
  models::checkers::Findings findings = models::checkers::check_all(trial);
  models::checkers::check_each(models::sessions::sessions_checkers(), trial, models::sessions::SessionsTrial{records, tables}, findings);
  TrialOutcome out;
  take_findings(std::move(findings), out);
  out.events = run.events;
  out.trace_hash = run.trace_hash;
  out.db_statements = deployment.database().stats().statements;
  for (const auto& r : records) out.step_outcomes.push_back(step_outcome(r, deployment.database().engine()));
  // Its logical operations are its steps.
  out.operations = static_cast<std::uint64_t>(std::count_if(records.begin(), records.end(), [](const auto& r) { return r.was_issued; }));
  out.counts["operations"] = static_cast<double>(out.operations);
  count_faults(s, deployment.fault_surface(), deployment.engine().now(), out);
  if (in_full) {
    out.timeline.seed = deployment.engine().config().seed;
    out.timeline.end_s = seconds(deployment.engine().now());
    out.timeline.statements = involved_statements(deployment.statements(), {}, true, deployment.database().engine());
    for (const auto& r : records) out.steps.push_back(step_result(r, deployment.database().engine()));
    for (const auto& t : tables) out.tables.push_back(table_result(t));
    out.timeline.history = history(out.steps);
    out.timeline.anomalies = anomalies_told(deployment.database(), out.timeline);
  }
  outcome_ready(out);
  return out;
}

class Sessions : public WorkloadKind {
 public:
  const char* name() const override { return "sessions"; }
  // How long a blocked step is given before the next.
  const Keys<Scenario>& keys() const override {
    static const Keys<Scenario> keys = {
        keys::millis<Scenario>("settle_ms", [](auto& s) -> auto& { return own_config<models::sessions::Script>(s).settle; }, 0.001)};
    return keys;
  }
  std::vector<std::string> top_level_keys() const override { return {"steps"}; }
  void load(const Reader*, const Reader& top, Scenario& s) const override {
    models::sessions::Script& script = own_config<models::sessions::Script>(s);
    const sim::Duration settle = script.settle;
    script = load_steps(top);
    script.settle = settle;
  }
  void check_scenario(const Reader& top, const Scenario& s) const override { check_steps(top, *steps(s), s.deployment.database); }
  void effective(const Scenario& s, json& doc) const override { doc["steps"] = steps_json(*steps(s)); }
  std::vector<std::string> node_names(const Scenario& s) const override { return steps(s)->sessions(); }
  const models::sessions::Script* steps(const Scenario& s) const override { return &own_config<models::sessions::Script>(s); }
  // A table for its steps, and a step with a ? and its argument, and a time: at_ms as a number
  // (as a distribution it would be read as one; the schema allows both).
  json exemplar() const override {
    return {{"name", "sessions"},
            {"workload", {{"kind", "sessions"}}},
            {"database", {{"tables", {"CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, k VARCHAR(32) NOT NULL)"}}}},
            {"steps", {{{"session", "s1"}, {"sql", "SELECT * FROM t WHERE k = ?"}, {"args", {"a"}}, {"at_ms", 0}}}},
            {"expect", {{"steps.1.error", "= 0"}}}};
  }
  TrialOutcome run_trial(const Scenario& s, const StrategyChoice&, std::uint64_t seed, TraceKept kept, sim::TieBreak tie_break,
                         sim::Chooser chooser, sim::Footprints* footprints) const override {
    return run_sessions_trial(s, engine_config(s, seed, kept, std::move(tie_break), std::move(chooser), footprints), kept == TraceKept::timeline);
  }
  std::vector<MetricInfo> metrics() const override { return models::checkers::metrics_of(models::sessions::sessions_checkers()); }
};

}  // namespace

const WorkloadKind& sessions_workload() {
  static const Sessions kind;
  return kind;
}

}  // namespace locksim
