#include "app/workloads/client_trial.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include "app/story.hpp"
#include "app/trial.hpp"
#include "models/checkers/checker.hpp"
#include "models/deployment.hpp"
#include "models/rollout/rollout.hpp"
#include "models/strategies/script.hpp"

namespace locksim {

namespace strategies = models::strategies;

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
    if (op.last_error != models::ErrorKind::none) seen.error = models::checkers::error_name(op.last_error);
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

}  // namespace

TrialOutcome run_client_trial(const Scenario& s, const StrategyChoice& choice, std::uint64_t seed, TraceKept kept,
                              sim::TieBreak tie_break, sim::Chooser chooser, sim::Footprints* footprints) {
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
  // The memory budget counts the strategy's own state too: a script's Lua state.
  deployment.engine().count_memory([&] { return deployment.memory_held() + strategy->bytes_held(); });
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
                                .accounts = !s.lua_workload,
                                .rebinds = s.operation == "rebind",
                                .operations = &operations,
                                .locks = &env.observed().locks(),
                                .redis = deployment.redis_instances(),
                                .remote = deployment.remote(),
                                .dropped_requests = env.observed().dropped_requests(),
                                .lock_wakeups = env.observed().lock_wakeups(),
                                .script_errors = entry.script.empty() ? nullptr : &env.observed().script_errors()};
  for (const auto& table : entry.info.needs.tables)  // lock rows nobody will delete
    if (table.name == strategies::kLocks) trial.lock_rows += deployment.database().committed_rows(table.name).size();
  if (auto* rollout = dynamic_cast<models::rollout::Rollout*>(strategy.get())) trial.rollout = &rollout->finish(deployment.database());
  TrialOutcome out;
  take_findings(models::checkers::check_all(trial), out);
  if (s.lua_workload)
    for (auto& [name, value] : check_workload(*s.lua_workload, seed, deployment, operations, env.effects())) out.counts[name] = value;
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
    if (!s.lua_workload) duplicated = deployment.database().rows_sharing(strategies::kAccounts, "open_id");
    out.timeline = timeline(deployment.engine(), env.observed().locks(), duplicated, deployment.statements(), deployment.calls(), seed);
    out.timeline.operations = out.operations;
  }
  return out;
}

}  // namespace locksim
