// A scenario's "rollout" (the table, the code and the cleanup job every plan starts from) and
// its plans, each a strategy of the account-bind workload whose steps deploy code, start or
// stop the cleanup job and run online DDL (docs/scenario.md, "rollout"); read from the file and written
// back into its effective configuration.

#include <fmt/format.h>

#include <chrono>
#include <variant>

#include "app/scenario_parts.hpp"
#include "app/trial.hpp"
#include "models/db/sql.hpp"
#include "models/strategies/strategy.hpp"

namespace locksim {

namespace {

sim::Duration seconds_of(double s) { return std::chrono::duration_cast<sim::Duration>(std::chrono::duration<double>(s)); }

// A strategy a plan deploys, by name, with its parameters ("params") over the registry's defaults.
models::rollout::Deploy deploy_of(const Reader& r, const std::string& key) {
  models::rollout::Deploy d{r.string(key, "")};
  const models::strategies::Entry* entry = models::strategies::find(d.strategy);
  if (entry == nullptr || entry->workload != std::string("account-bind"))
    r.fail("a strategy of the account-bind workload (see `locksim list`), got " + quote_value(d.strategy), key);
  r.declare("params", {{"type", "object"}});
  r.declare_names("params", "<param>");
  r.declare("params/<param>", {{"type", {"number", "boolean"}}});
  d.params = params_over_defaults(r, "params", *entry, d.strategy, r.has("params") ? r.raw().at("params") : json::object());
  return d;
}

}  // namespace

// The scenario's "rollout": the table, the code and the cleanup job every plan starts from.
models::rollout::Plan rollout_base(const Reader& top, sim::Duration time_budget) {
  models::rollout::Plan plan;
  const Reader r = top.child("rollout");
  r.only({"running", "index", "index_name", "duration_s", "cleanup"});
  r.require("duration_s", "\"duration_s\": when the rollout's last phase ends");
  const double budget_s = std::chrono::duration<double>(time_budget).count();
  plan.duration = seconds_of(r.number("duration_s", 0, 1, 1e6));
  // A statement the plan runs near its end may take as long again (the DBA's client waits
  // that long), within the trial.
  if (2 * plan.duration >= time_budget)
    r.fail(fmt::format("a duration under half the trial's time budget ({:g} s, time_budget_s)", budget_s), "duration_s");
  plan.running.strategy = r.string("running", plan.running.strategy);
  const models::strategies::Entry* running = models::strategies::find(plan.running.strategy);
  if (running == nullptr || running->workload != std::string("account-bind"))
    r.fail("a strategy of the account-bind workload (see `locksim list`), got " + quote_value(plan.running.strategy), "running");
  plan.running.params = params_over_defaults(r, "running", *running, plan.running.strategy, json::object());
  plan.table.key_index = r.choice("index", "plain", {"none", "plain"}) == "none" ? models::db::KeyIndex::none
                                                                                : models::db::KeyIndex::non_unique;
  plan.table.index_name = r.string("index_name", "idx_open_id");
  if (!is_file_name(plan.table.index_name)) r.fail(std::string(kFileName) + ", got " + quote_value(plan.table.index_name), "index_name");
  if (r.has("cleanup")) {
    const Reader c = r.child("cleanup");
    c.only({"interval_s", "keys_per_run"});
    plan.cleanup.interval = seconds_of(c.number("interval_s", 60, 0.001, 1e6));
    plan.cleanup.keys_per_run = static_cast<std::uint64_t>(c.integer("keys_per_run", 1000, 1, 1'000'000));
  }
  return plan;
}

// A plan's steps ("rollout": [...]) over the scenario's base, as a strategy of its own.
std::shared_ptr<const models::rollout::Plan> load_plan(const Reader& item, const models::rollout::Plan& base) {
  auto plan = std::make_shared<models::rollout::Plan>(base);
  item.each("rollout", [&](const Reader& st) {
    st.only({"at_s", "deploy", "params", "rolling_s", "drain_s", "job", "keys_per_run", "interval_s", "sql", "retry_s"});
    st.require("at_s", "\"at_s\": when the step is taken, in seconds from the start");
    models::rollout::Step step;
    step.at = seconds_of(st.number("at_s", 0, 0, 1e6));
    if (step.at >= plan->duration) st.fail("a time before the rollout's end (rollout.duration_s)", "at_s");
    if (!plan->steps.empty() && step.at < plan->steps.back().at) st.fail("steps in time order", "at_s");
    const int actions = (st.has("deploy") ? 1 : 0) + (st.has("job") ? 1 : 0) + (st.has("sql") ? 1 : 0);
    if (actions != 1) st.fail("one of \"deploy\" (a strategy), \"job\" (\"start\" or \"stop\") or \"sql\" (a statement)");
    if ((st.has("params") || st.has("rolling_s") || st.has("drain_s")) && !st.has("deploy"))
      st.fail("\"params\", \"rolling_s\" and \"drain_s\" only with \"deploy\"");
    if (st.has("retry_s") && !st.has("sql")) st.fail("\"retry_s\" only with \"sql\"", "retry_s");
    if ((st.has("keys_per_run") || st.has("interval_s")) && !st.has("job"))
      st.fail("\"keys_per_run\" and \"interval_s\" only with \"job\"");
    if (st.has("deploy")) {
      models::rollout::Deploy d = deploy_of(st, "deploy");
      d.rolling = seconds_of(st.number("rolling_s", 0, 0, 1e6));
      d.drain = seconds_of(st.number("drain_s", 0, 0, 1e6));
      if (d.drain > sim::Duration{} && d.rolling == sim::Duration{})
        st.fail("\"rolling_s\" above 0 with \"drain_s\": servers are drained one at a time", "drain_s");
      step.action = std::move(d);
    } else if (st.has("job")) {
      const std::string job = st.string("job", "");
      st.declare("job", {{"type", "string"}, {"enum", {"start", "stop"}}});
      if (job != "start" && job != "stop") st.fail("\"start\" or \"stop\", got " + quote_value(job), "job");
      models::rollout::Job action{job == "start"};
      if (st.has("keys_per_run") || st.has("interval_s")) {
        if (!action.start) st.fail("\"keys_per_run\" and \"interval_s\" only when the job starts");
        action.settings = plan->cleanup;  // what the step leaves out is the scenario's
        if (st.has("interval_s")) action.settings->interval = seconds_of(st.number("interval_s", 0.001, 1e6));
        if (st.has("keys_per_run")) action.settings->keys_per_run = static_cast<std::uint64_t>(st.integer("keys_per_run", 1, 1'000'000));
      }
      step.action = action;
    } else {
      const std::string text = st.string("sql", "");
      models::rollout::Sql sql;
      try {
        sql.statement = models::db::sql::prepare(text);
      } catch (const models::db::sql::Error& e) {
        st.fail(std::string("a statement the model runs: ") + e.what(), "sql");
      }
      const models::db::Statement& statement = sql.statement.statement;
      if (sql.statement.create || !sql.statement.params.empty())
        st.fail("a statement on " + plan->table.name + " without ? parameters (a CREATE TABLE goes in database.tables)", "sql");
      using K = models::db::Statement::Kind;
      const bool on_table = statement.kind != K::begin && statement.kind != K::commit && statement.kind != K::rollback &&
                            statement.kind != K::set_isolation;
      if (!on_table || statement.table != plan->table.name)
        st.fail("a statement on " + plan->table.name + ", the table the rollout acts on", "sql");
      if (statement.kind == K::add_index && (statement.column != plan->table.key_column || statement.more().index_def))
        st.fail("an index on " + plan->table.key_column + ", the one column of " + plan->table.name + " the model indexes", "sql");
      sql.retry = seconds_of(st.number("retry_s", 0, 0, 1e6));
      step.action = std::move(sql);
    }
    plan->steps.push_back(std::move(step));
  });
  return plan;
}

// A plan as a strategy of the account-bind workload.
std::shared_ptr<const models::strategies::Entry> plan_entry(std::shared_ptr<const models::rollout::Plan> plan) {
  auto entry = std::make_shared<models::strategies::Entry>();
  entry->info.name = "rollout";
  std::string steps;
  for (const auto& step : plan->steps)
    steps += fmt::format("{}at {:g} s: {}", steps.empty() ? "" : "; ", std::chrono::duration<double>(step.at).count(), step.text());
  entry->info.description = fmt::format("a rollout from {}: {}", plan->running.strategy, steps.empty() ? "no step" : steps);
  entry->info.source = "sources/003 sections 3.3 and 5.3 (the rollout of the production case)";
  entry->info.risks = "duplicates created while the fix rolls out; a unique index that cannot be built";
  entry->info.needs = models::rollout::needs(*plan);
  // Each rollout shares the plan without a count, the entry keeping it: a trial restored in
  // place (sim/restorable.hpp) then moves nothing outside itself.
  entry->make = [plan](models::strategies::Env& env, const models::strategies::Params&) {
    return std::make_unique<models::rollout::Rollout>(
        env, std::shared_ptr<const models::rollout::Plan>(std::shared_ptr<const models::rollout::Plan>(), plan.get()));
  };
  return entry;
}


json plan_steps_json(const models::rollout::Plan& plan) {
  json steps = json::array();
  for (const models::rollout::Step& step : plan.steps) {
    json one = {{"at_s", seconds(step.at)}};
    if (const auto* d = std::get_if<models::rollout::Deploy>(&step.action)) {
      one["deploy"] = d->strategy;
      one["params"] = d->params;
      one["rolling_s"] = seconds(d->rolling);
      one["drain_s"] = seconds(d->drain);
    } else if (const auto* j = std::get_if<models::rollout::Job>(&step.action)) {
      one["job"] = j->start ? "start" : "stop";
      if (j->settings) {
        one["keys_per_run"] = j->settings->keys_per_run;
        one["interval_s"] = seconds(j->settings->interval);
      }
    } else {
      const auto& sql = std::get<models::rollout::Sql>(step.action);
      one["sql"] = sql.statement.text;
      one["retry_s"] = seconds(sql.retry);
    }
    steps.push_back(std::move(one));
  }
  return steps;
}

json rollout_json(const models::rollout::Plan& r) {
  return {{"running", r.running.strategy},
          {"index", r.table.key_index == models::db::KeyIndex::none ? "none" : "plain"},
          {"index_name", r.table.index_name},
          {"duration_s", seconds(r.duration)},
          {"cleanup", {{"interval_s", seconds(r.cleanup.interval)}, {"keys_per_run", r.cleanup.keys_per_run}}}};
}

}  // namespace locksim
