#include "app/workloads/client_trial.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "app/story.hpp"
#include "app/trial.hpp"
#include "models/checkers/checker.hpp"
#include "models/deployment.hpp"
#include "models/strategies/script.hpp"

namespace locksim {

namespace strategies = models::strategies;

namespace {

// The client-visible history: each logical operation from its start to its end as its client saw
// it (its retries inside), in the order they started: ok; fail where no attempt may have taken
// effect (each failed with an answer); info where one timed out. An operation still under way when
// the trial ended has no record, and is left out.
std::vector<reports::Timeline::Operation> history(const Scenario& s, std::uint64_t seed, const std::vector<models::OperationRecord>& ops) {
  std::vector<const models::OperationRecord*> started;
  for (const auto& op : ops) started.push_back(&op);
  std::stable_sort(started.begin(), started.end(), [](const auto* a, const auto* b) { return a->start < b->start; });
  if (started.size() > reports::Timeline::kHistoryKept) started.resize(reports::Timeline::kHistoryKept);
  std::vector<reports::Timeline::Operation> out;
  for (const auto* op : started) {
    reports::Timeline::Operation h;
    h.client = op->client;
    h.invoked_s = seconds(op->start);
    h.completed_s = seconds(op->end);
    if (s.lua_workload) {
      h.f = s.lua_workload->name;
      for (auto& [name, value] : s.lua_workload->draw(seed, op->operation, op->value, op->client, op->key)) h.value.emplace_back(name, cell_of(value));
    } else {
      h.f = s.operation;
      h.value = {{"key", static_cast<std::int64_t>(op->key)}, {"value", static_cast<std::int64_t>(op->value)}};
    }
    if (op->outcome == models::Outcome::ok) {
      h.type = reports::Timeline::Operation::Type::ok;
    } else {
      h.type = op->time.timed_out > sim::Duration{} ? reports::Timeline::Operation::Type::info : reports::Timeline::Operation::Type::fail;
      h.error = op->last_code.empty() ? models::to_string(op->last_error) : op->last_code;
    }
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace

TrialOutcome run_client_trial(const ClientWorkload& workload, const Scenario& s, const StrategyChoice& choice, std::uint64_t seed,
                              TraceKept kept, sim::TieBreak tie_break, sim::Chooser chooser, sim::Footprints* footprints) {
  const strategies::Entry& entry = choice.entry();
  sim::EngineConfig config = engine_config(s, seed, kept, std::move(tie_break), std::move(chooser), footprints);
  if (!entry.script.empty()) config.stack_bytes = std::max(config.stack_bytes, strategies::kScriptStackBytes);
  models::Deployment deployment(std::move(config), s.deployment, strategies::needs(entry, choice.params));
  strategies::Env env(deployment.services(), s.app_work);
  if (s.lua_workload) env.set_workload(s.lua_workload.get(), seed);
  std::unique_ptr<strategies::Strategy> strategy = entry.make(env, choice.params);
  // The processes go before the strategy they run, also when the run throws (a process failed):
  // a script's Lua state must outlive the fibers suspended inside it.
  struct ShutdownFirst {
    sim::Engine& engine;
    ~ShutdownFirst() {
      try {
        engine.shutdown();
      } catch (...) {  // the error that is unwinding says more
      }
    }
  } shutdown_first{deployment.engine()};
  // The memory budget counts the strategy's own state too: a script's Lua state, and the effects
  // it reported (effect() values of a megabyte each add up).
  deployment.engine().count_memory([&] { return deployment.memory_held() + strategy->bytes_held() + env.effects_bytes(); });
  deployment.serve(*strategy);
  inject_faults(s, deployment.fault_surface());
  deployment.start();
  const sim::RunResult run = deployment.run();
  deployment.engine().shutdown();  // before the strategy the processes use goes

  const auto& operations = deployment.world().clients().records();
  models::checkers::Trial trial{.end = deployment.engine().now(),
                                .finished = run.ok() && !env.observed().script_stopped(),
                                .out_of_memory = run.status == sim::RunStatus::memory_budget,
                                .database = &deployment.database(),
                                .keyed_tables = workload.keyed_tables(s),
                                .operations = &operations,
                                .locks = &env.observed().locks(),
                                .redis = deployment.redis_instances(),
                                .remote = deployment.remote(),
                                .dropped_requests = env.observed().dropped_requests(),
                                .lock_wakeups = env.observed().lock_wakeups(),
                                .script_errors = entry.script.empty() ? nullptr : &env.observed().script_errors()};
  for (const auto& table : entry.info.needs.tables)  // lock rows nobody will delete
    if (table.name == strategies::kLocks) trial.lock_rows += deployment.database().committed_rows(table.name).size();
  models::checkers::Findings findings = models::checkers::check_all(trial);
  workload.check(s, ClientTrialEnd{seed, deployment, env, *strategy}, trial, findings);
  TrialOutcome out;
  take_findings(std::move(findings), out);
  out.events = run.events;
  out.trace_hash = run.trace_hash;
  std::uint64_t failed = 0;
  for (const auto& op : operations) {
    const double latency_ms = std::chrono::duration<double, std::milli>(op.latency()).count();
    if (op.outcome != models::Outcome::ok) {  // drawn apart: a quick rejection is no fast success
      out.failed_latency.add(latency_ms);
      ++failed;
      continue;
    }
    out.latency.add(latency_ms);
    add_time(out.time_ok, op.time);
  }
  out.operations = operations.size();
  out.counts["operations"] = static_cast<double>(out.operations);
  out.counts["failed_operations"] = static_cast<double>(failed);
  count_faults(s, deployment.fault_surface(), deployment.engine().now(), out);
  out.db_statements = deployment.database().stats().statements;
  out.redis_commands = env.observed().redis_commands();
  if (kept == TraceKept::timeline) {
    // The diagram draws the inserts of duplicated keys only.
    std::vector<models::db::RowRecord> duplicated;
    for (const auto& t : trial.keyed_tables)
      for (auto& r : deployment.database().rows_sharing(t.table, t.key_column)) duplicated.push_back(std::move(r));
    RequestWords asked;  // a Lua workload's request fields, which tell its attempts
    if (s.lua_workload)
      for (const auto& op : operations) {
        std::string words;
        for (const auto& [name, value] : s.lua_workload->draw(seed, op.operation, op.value, op.client, op.key))
          words += fmt::format("{}{} {}", words.empty() ? "" : ", ", name, models::db::to_string(value));
        asked[static_cast<std::int64_t>(op.operation)] = std::move(words);
      }
    out.timeline = timeline(deployment.engine(), env.observed().locks(), duplicated, deployment.statements(), deployment.calls(), seed,
                            deployment.database().engine(), s.lua_workload ? &asked : nullptr);
    out.timeline.operations = out.operations;
    out.timeline.history = history(s, seed, operations);
    out.timeline.history_left_out = out.operations > out.timeline.history.size() ? out.operations - out.timeline.history.size() : 0;
    out.timeline.anomalies = anomalies_told(deployment.database(), out.timeline);
  }
  outcome_ready(out);
  return out;
}

}  // namespace locksim
