#include "app/runner.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <type_traits>
#include <optional>
#include <set>

#include "app/cluster.hpp"
#include "app/fault_kind.hpp"
#include "app/metrics.hpp"
#include "app/ordered_work.hpp"
#include "app/outcome_codec.hpp"
#include "models/checkers/checker.hpp"
#include "models/rollout/rollout.hpp"
#include "models/deployment.hpp"
#include "models/strategies/script.hpp"
#include "reports/explain.hpp"

namespace locksim {

namespace strategies = models::strategies;

namespace {

double seconds(sim::Time t) { return std::chrono::duration<double>(t.time_since_epoch()).count(); }
double seconds(sim::Duration d) { return std::chrono::duration<double>(d).count(); }

// A trial's engine: its seed, the scenario's budgets, an explorer's schedule if any.
sim::EngineConfig engine_config(const Scenario& s, std::uint64_t seed, TraceKept kept, sim::TieBreak tie_break,
                                sim::Chooser chooser) {
  sim::EngineConfig ec;
  ec.seed = seed;
  ec.trace = kept == TraceKept::timeline ? sim::TraceMode::full  // keeps the events, same hash
             : kept == TraceKept::none   ? sim::TraceMode::off
                                         : sim::TraceMode::hash;
  ec.time_budget = s.time_budget;
  ec.event_budget = s.event_budget;
  ec.tie_break = std::move(tie_break);
  ec.chooser = std::move(chooser);
  return ec;
}

void inject_faults(const Scenario& s, const models::FaultSurface& surface) {
  for (const FaultSetup& f : s.faults) f.faults->inject(surface);
}

// The faults a trial that ran until `end` injected, where the scenario has any: the
// denominator of its rates per fault.
void count_faults(const Scenario& s, const models::FaultSurface& surface, sim::Time end, TrialOutcome& out) {
  if (s.faults.empty()) return;
  std::uint64_t n = 0;
  for (const FaultSetup& f : s.faults) n += f.faults->injected(surface, end);
  out.counts["injected_faults"] = static_cast<double>(n);
}

// What the checkers found, as a trial's outcome.
void take_findings(models::checkers::Findings&& f, TrialOutcome& out) {
  out.counts = std::move(f.values);
  out.examples = std::move(f.examples);
}

}  // namespace

namespace {

std::string wait_text(const models::db::LockWait& w) {
  return fmt::format("{} on {}.{} {}, behind {}, {:.1f} ms", w.mode, w.table, w.index, w.entry,
                     w.behind.empty() ? std::string("nobody") : fmt::format("{}", fmt::join(w.behind, ", ")),
                     std::chrono::duration<double, std::milli>(w.waited).count());
}

std::string undone_text(const models::db::Result& r) {
  if (r.undone == models::db::Undone::nothing) return "";
  return fmt::format("{} ({} row change{})", r.undone == models::db::Undone::statement ? "statement" : "transaction", r.undone_rows,
                     r.undone_rows == 1 ? "" : "s");
}

// What a statement came to, in a few words.
std::string outcome_text(const models::db::Statement& st, const models::db::Result& r) {
  if (!r.ok()) return r.message.empty() ? models::db::to_string(r.code) : fmt::format("{} {}", static_cast<int>(r.code), r.message);
  using K = models::db::Statement::Kind;
  if (st.kind == K::select) return fmt::format("{} row{}", r.rows.size(), r.rows.size() == 1 ? "" : "s");
  if (st.kind == K::insert || st.kind == K::insert_if_absent || st.kind == K::update || st.kind == K::remove) {
    std::string out = fmt::format("{} affected", r.affected);
    if (r.insert_id != 0 && r.affected != 0) out += fmt::format(", id {}", r.insert_id);
    if (r.warnings != 0) out += fmt::format(", {} warning{}", r.warnings, r.warnings == 1 ? "" : "s");
    return out;
  }
  return "ok";
}

// The statements of the operations involved in what went wrong: every statement of an
// operation (a connection's origin) that waited for a lock, failed, or is in `origins` (it
// inserted a duplicated key, or held a lock that went wrong); with `all`, every statement. At
// most 200, the first ones.
std::vector<reports::Timeline::Statement> involved_statements(const std::vector<models::db::LoggedStatement>& log,
                                                              const std::set<std::string>& origins, bool all = false) {
  std::set<std::string> involved = origins;
  for (const auto& s : log)
    if (!s.result.ok() || !s.result.waits.empty()) involved.insert(s.who);
  std::vector<reports::Timeline::Statement> out;
  for (const auto& s : log) {
    if (!all && !involved.count(s.who)) continue;
    if (out.size() == 200) break;
    reports::Timeline::Statement st{seconds(s.start), seconds(s.end), s.who, models::db::to_string(s.statement),
                                    outcome_text(s.statement, s.result)};
    for (const auto& w : s.result.waits) {
      st.waits.push_back(wait_text(w));
      for (const auto& who : w.behind)
        if (std::find(st.waited_for.begin(), st.waited_for.end(), who) == st.waited_for.end()) st.waited_for.push_back(who);
    }
    st.cycle = s.result.deadlock_cycle;
    st.undone = undone_text(s.result);
    out.push_back(std::move(st));
  }
  return out;
}

// A participant's lane, as the diagram names it: an app server's worker "app-1.worker-3" is
// "app-1 worker 4" (as in a connection's origin), another process "<node>.<name>" is
// "<node> <name>", and a caller a request named ("client 7") keeps its name.
std::string lane_of_process(const std::string& node, const std::string& process) {
  const std::string worker = node + ".worker-";
  if (process.starts_with(worker)) {
    const std::string index = process.substr(worker.size());
    if (!index.empty() && std::all_of(index.begin(), index.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      return fmt::format("{} worker {}", node, std::stoi(index) + 1);
  }
  if (process.starts_with(node + ".")) return node + " " + process.substr(node.size() + 1);
  if (process.starts_with(node) || node == "clients") return process;
  return node + " " + process;
}

// The holders involved in what went wrong (their origins): those whose lock the service ended
// under them or whose DEL removed another's, and those the service granted a lock to while its
// earlier holder still believed it held it.
std::set<std::string> involved_holders(const reports::Timeline& t) {
  std::set<std::string> out;
  const auto holder = [](const reports::Timeline::Bar& b) { return b.row.substr(b.row.find("  ") + 2); };
  for (const auto& b : t.bars) {
    if (b.service_to_s < 0 && b.deleted_by.empty() && b.removed.empty()) continue;
    out.insert(holder(b));
    if (!b.deleted_by.empty()) out.insert(b.deleted_by);
    const std::string lock = b.row.substr(0, b.row.find("  "));
    for (const auto& other : t.bars)
      if (b.service_to_s >= 0 && other.row.starts_with(lock + "  ") && b.service_to_s <= other.from_s && other.from_s < b.to_s)
        out.insert(holder(other));
  }
  return out;
}

// The operations involved in what went wrong: those of the involved holders, of the inserts of
// duplicated keys and of the statements involved.
std::set<std::string> involved_operations(const reports::Timeline& t, const std::set<std::string>& holders) {
  std::set<std::string> ops;
  const auto add = [&](const std::string& who) {
    if (std::string op = reports::operation_of(who); !op.empty()) ops.insert(std::move(op));
  };
  for (const auto& who : holders) add(who);
  for (const auto& m : t.inserts) add(m.label);
  for (const auto& st : t.statements) add(st.who);
  return ops;
}

// The calls of the involved operations: each attempt a client sent, the calls the worker that
// took it up made while it worked on it (Redis commands, ZooKeeper and etcd requests), and the
// background calls on its node meanwhile. At most 400, the first ones.
void add_involved_messages(reports::Timeline& t, const models::CallLog& log, const std::set<std::string>& ops, sim::Time end) {
  constexpr std::size_t kMost = 400;
  const auto secs = [](sim::Time t) { return t == sim::kNever ? -1.0 : seconds(t); };
  const auto message = [&](const models::CallRecord& c) {
    return reports::Timeline::Message{lane_of_process(c.caller_node, c.caller),
                                      c.callee.empty() ? c.callee_node : lane_of_process(c.callee_node, c.callee),
                                      c.request,
                                      c.reply,
                                      seconds(c.sent),
                                      secs(c.arrived),
                                      secs(c.taken),
                                      secs(c.answered),
                                      secs(c.returned),
                                      secs(c.gave_up)};
  };
  // The attempts of the involved operations, and when their workers worked on them: per
  // worker, in the order it took them up (one at a time).
  std::map<std::string, std::vector<std::pair<sim::Time, sim::Time>>> windows;
  std::set<std::size_t> kept;
  const auto& calls = log.calls();
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const auto& c = calls[i];
    if (!c.request.starts_with("op ") || !ops.count(c.request.substr(0, c.request.find(" attempt")))) continue;
    kept.insert(i);
    if (!c.callee.empty()) windows[lane_of_process(c.callee_node, c.callee)].emplace_back(c.taken, std::min(c.answered, end));
  }
  // On the nodes of those workers, from the first attempt taken up to the last answered: the
  // background calls that keep their locks and sessions alive (ZooKeeper pings, etcd
  // keep-alives, a watchdog's renewals).
  std::map<std::string, std::pair<sim::Time, sim::Time>> busy;  // node -> span
  for (auto& [lane, w] : windows) {
    std::sort(w.begin(), w.end());
    // A worker killed on an attempt never answered it: its window ends where the worker of its
    // name (restarted) took up the next one.
    for (std::size_t k = 0; k + 1 < w.size(); ++k) w[k].second = std::min(w[k].second, w[k + 1].first);
    const std::string node = lane.substr(0, lane.find(' '));
    const auto it = busy.try_emplace(node, w.front().first, w.front().second).first;
    for (const auto& [from, to] : w) {
      it->second.first = std::min(it->second.first, from);
      it->second.second = std::max(it->second.second, to);
    }
  }
  for (std::size_t i = 0; i < calls.size() && !windows.empty(); ++i) {
    const auto& c = calls[i];
    const auto node = busy.find(c.caller_node);
    if (node == busy.end()) continue;  // no involved worker on the caller's node
    if (!c.caller.starts_with(c.caller_node + ".worker-") && node->second.first <= c.sent && c.sent <= node->second.second) {
      kept.insert(i);
      continue;
    }
    const auto it = windows.find(lane_of_process(c.caller_node, c.caller));
    if (it == windows.end()) continue;
    // The last attempt the worker took up at or before the call: the call is its if it was still on it.
    const auto& w = it->second;
    const auto after = std::upper_bound(w.begin(), w.end(), c.sent, [](sim::Time t, const auto& x) { return t < x.first; });
    if (after != w.begin() && c.sent <= std::prev(after)->second) kept.insert(i);
  }
  for (const std::size_t i : kept) {
    if (t.messages.size() == kMost) break;
    t.messages.push_back(message(calls[i]));
  }
  t.calls_left_out = kept.size() - t.messages.size() + log.dropped();
}

}  // namespace

// A hold as a bar: as its holder believed it, with the lease to where the service really
// ended it and why the hold ended, in words.
reports::Timeline::Bar bar(const models::checkers::LockMonitor& locks, const models::checkers::LockMonitor::Record& r,
                           sim::Time end) {
  using models::checkers::HoldEnd;
  using models::checkers::LockService;
  const sim::Time until = std::min(r.until, end);
  reports::Timeline::Bar b{r.lock + "  " + r.who, seconds(r.from), seconds(until),
                           r.lease_until == sim::kNever ? -1.0 : seconds(r.lease_until)};
  const HoldEnd why = models::checkers::LockMonitor::end_of(r, end);
  sim::Time service_end = r.service_until;
  if (why == HoldEnd::expired && service_end == sim::kNever) service_end = r.lease_until;
  if (service_end != sim::kNever && service_end < until) {
    b.service_to_s = seconds(service_end);
    b.lease_to_s = b.service_to_s;  // the lease ended there, whatever its TTL said
  }
  static constexpr const char* kServices[] = {"redis", "redlock", "zookeeper", "etcd"};
  b.service = kServices[static_cast<int>(r.service)];
  if (r.deleted_by) b.deleted_by = locks.records()[*r.deleted_by].who;
  if (r.removed) b.removed = locks.records()[*r.removed].who;
  switch (why) {
    case HoldEnd::held: break;
    case HoldEnd::released: b.ended = "released"; break;
    case HoldEnd::expired: b.ended = fmt::format("expired at t={:.3f} s", b.service_to_s); break;
    case HoldEnd::deleted: b.ended = fmt::format("deleted by {} at t={:.3f} s (wrong unlock)", b.deleted_by, b.service_to_s); break;
    case HoldEnd::session_lost:
      b.ended = fmt::format("{}{} ({})", r.service == LockService::etcd ? "lease expired" : "session expired",
                            b.service_to_s >= 0 ? fmt::format(" at t={:.3f} s", b.service_to_s) : "",
                            r.service == LockService::etcd ? "etcd" : "ZooKeeper");
      break;
    case HoldEnd::lost: b.ended = "lost at the service"; break;
    case HoldEnd::crashed: b.ended = "node crashed"; break;
  }
  for (const sim::Time t : r.renewals) b.renewals_s.push_back(seconds(t));
  if (!r.renewals.empty())
    b.ended += fmt::format("{}renewed {} time{}", b.ended.empty() ? "" : ", ", r.renewals.size(), r.renewals.size() == 1 ? "" : "s");
  if (r.removed) b.ended += fmt::format("{}its DEL removed {}'s lock (wrong unlock)", b.ended.empty() ? "" : "; ", b.removed);
  return b;
}

// The picture of one trial: holds as the holders believed them, pauses and crashes from the
// trace, the inserts of duplicated keys, and the statements of the operations involved.
reports::Timeline timeline(sim::Engine& engine, const models::checkers::LockMonitor& locks,
                           const std::vector<models::db::RowRecord>& rows, const std::vector<models::db::LoggedStatement>& log,
                           const models::CallLog* calls, std::uint64_t seed) {
  reports::Timeline t;
  t.seed = seed;
  const sim::Time end = engine.now();
  t.end_s = seconds(end);
  for (const auto& r : locks.records()) t.bars.push_back(bar(locks, r, end));
  std::map<std::uint32_t, sim::Time> down_since;
  for (const auto& e : engine.trace().events()) {
    const std::string node = engine.node_name(e.node);
    if (e.kind == sim::trace_kind::node_pause)
      t.bands.push_back({node, seconds(e.at), seconds(e.at + sim::Duration{e.a}), "paused"});
    else if (e.kind == sim::trace_kind::node_crash)
      down_since[e.node] = e.at;
    else if (e.kind == sim::trace_kind::node_restart && down_since.count(e.node)) {
      t.bands.push_back({node, seconds(down_since[e.node]), seconds(e.at), "down"});
      down_since.erase(e.node);
    }
  }
  for (const auto& [node, since] : down_since) t.bands.push_back({engine.node_name(node), seconds(since), t.end_s, "down"});
  std::map<std::string, int> per_key;
  for (const auto& row : rows) ++per_key[std::get<std::string>(row.row.values.at("open_id"))];
  std::set<std::string> inserted_duplicates;
  for (const auto& row : rows)
    if (per_key[std::get<std::string>(row.row.values.at("open_id"))] > 1) {
      t.inserts.push_back({fmt::format("row {} by {}", row.row.id, row.origin.who), seconds(row.origin.inserted_at)});
      inserted_duplicates.insert(row.origin.who);
    }
  const std::set<std::string> holders = involved_holders(t);
  std::set<std::string> origins = inserted_duplicates;
  origins.insert(holders.begin(), holders.end());
  t.statements = involved_statements(log, origins);
  if (calls != nullptr) add_involved_messages(t, *calls, involved_operations(t, holders), end);
  return t;
}

namespace {

// The batch scheduler's trial: no clients, no locks to draw.
TrialOutcome run_batch_trial(const Scenario& s, const strategies::Entry& entry, const StrategyChoice& choice,
                             sim::EngineConfig engine) {
  models::BatchDeployment deployment(std::move(engine), s.deployment, entry.batch(choice.params), s.batch);
  deployment.start();
  inject_faults(s, deployment.fault_surface());
  const sim::RunResult run = deployment.run();
  deployment.engine().shutdown();

  models::checkers::Trial trial{.end = deployment.engine().now(), .finished = run.ok(), .database = &deployment.database()};
  trial.batch = &deployment.findings();
  for (const auto& row : deployment.database().committed_rows(models::batch::kTasks)) trial.task_ids.push_back(row.row.id);
  TrialOutcome out;
  take_findings(models::checkers::check_all(trial), out);
  out.events = run.events;
  out.trace_hash = run.trace_hash;
  out.operations = static_cast<std::uint64_t>(s.batch.tasks);
  out.counts["operations"] = static_cast<double>(out.operations);
  count_faults(s, deployment.fault_surface(), deployment.engine().now(), out);
  out.db_statements = deployment.database().stats().statements;
  return out;
}

double ms(sim::Time t) { return std::chrono::duration<double, std::milli>(t.time_since_epoch()).count(); }

void add_time(models::TimeSpent& sum, const models::TimeSpent& t) {
  for (auto part : kTimeParts) sum.*part.member += t.*part.member;
}

reports::Cell cell(const models::db::Value& v) {
  if (const auto* n = std::get_if<std::int64_t>(&v)) return *n;
  return std::get<std::string>(v);
}

std::string step_outcome(const models::sessions::StepRecord& r) {
  if (!r.was_issued) return "not issued";
  if (!r.done) return "unfinished";
  return r.result.ok() ? "ok" : std::to_string(static_cast<int>(r.result.code));
}

reports::StepResult step_result(const models::sessions::StepRecord& r) {
  reports::StepResult out;
  out.step = r.step;
  out.session = r.session;
  out.sql = r.sql;
  if (!r.was_issued) return out;
  out.issued_ms = ms(r.issued);
  if (!r.done) return out;
  const models::db::Result& res = r.result;
  out.finished_ms = ms(r.finished);
  out.columns = r.columns;
  for (const auto& row : r.rows) {
    std::vector<reports::Cell> cells;
    for (const auto& v : row) cells.push_back(cell(v));
    out.rows.push_back(std::move(cells));
  }
  out.affected = res.affected;
  out.insert_id = res.insert_id;
  out.warnings = res.warnings;
  out.error = res.ok() ? 0 : static_cast<int>(res.code);
  out.message = res.message.empty() && !res.ok() ? models::db::to_string(res.code) : res.message;
  for (const auto& w : res.waits) {
    for (const auto& who : w.behind)
      if (std::find(out.waited_for.begin(), out.waited_for.end(), who) == out.waited_for.end()) out.waited_for.push_back(who);
    out.waited_ms += std::chrono::duration<double, std::milli>(w.waited).count();
    out.waits.push_back(wait_text(w));
  }
  out.deadlock_cycle = res.deadlock_cycle;
  out.undone = res.undone == models::db::Undone::statement     ? "statement"
               : res.undone == models::db::Undone::transaction ? "transaction"
                                                               : "";
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
      auto it = row.row.values.find(column);
      cells.push_back(it == row.row.values.end() ? reports::Cell{row.row.id} : cell(it->second));
      if (&column != &t.columns.front()) joined += ',';
      joined += std::visit([](const auto& v) {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) return v;
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
TrialOutcome run_sessions_trial(const Scenario& s, sim::EngineConfig engine, bool in_full) {
  models::SessionsDeployment deployment(std::move(engine), s.deployment, s.script);
  inject_faults(s, deployment.fault_surface());
  deployment.start();
  const sim::RunResult run = deployment.run();
  deployment.engine().shutdown();

  const auto& records = deployment.sessions().records();
  const std::vector<models::sessions::TableContents> tables = deployment.tables();
  models::checkers::Trial trial{.end = deployment.engine().now(), .finished = run.ok(), .database = &deployment.database()};
  trial.steps = &records;
  trial.tables = &tables;
  TrialOutcome out;
  take_findings(models::checkers::check_all(trial), out);
  out.events = run.events;
  out.trace_hash = run.trace_hash;
  out.db_statements = deployment.database().stats().statements;
  for (const auto& r : records) out.step_outcomes.push_back(step_outcome(r));
  // Its logical operations are its steps.
  out.operations = static_cast<std::uint64_t>(std::count_if(records.begin(), records.end(), [](const auto& r) { return r.was_issued; }));
  out.counts["operations"] = static_cast<double>(out.operations);
  count_faults(s, deployment.fault_surface(), deployment.engine().now(), out);
  if (in_full) {
    out.timeline.seed = deployment.engine().config().seed;
    out.timeline.end_s = seconds(deployment.engine().now());
    out.timeline.statements = involved_statements(deployment.statements(), {}, true);
    for (const auto& r : records) out.steps.push_back(step_result(r));
    for (const auto& t : tables) out.tables.push_back(table_result(t));
  }
  return out;
}

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

TrialOutcome run_one_trial(const Scenario& s, const StrategyChoice& choice, std::uint64_t seed, TraceKept kept,
                           sim::TieBreak tie_break, sim::Chooser chooser) {
  const strategies::Entry& entry = choice.entry();
  if (entry.sessions)
    return run_sessions_trial(s, engine_config(s, seed, kept, std::move(tie_break), std::move(chooser)),
                              kept == TraceKept::timeline);
  if (entry.batch)
    return run_batch_trial(s, entry, choice,
                           engine_config(s, seed, kept == TraceKept::none ? kept : TraceKept::hash, std::move(tie_break),
                                         std::move(chooser)));
  sim::EngineConfig config = engine_config(s, seed, kept, std::move(tie_break), std::move(chooser));
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
  deployment.serve(*strategy);
  inject_faults(s, deployment.fault_surface());
  deployment.start();
  const sim::RunResult run = deployment.run();
  deployment.engine().shutdown();  // before the strategy the processes use goes

  const std::vector<models::db::RowRecord> accounts =
      s.lua_workload ? std::vector<models::db::RowRecord>{} : deployment.database().committed_rows(strategies::kAccounts);
  const auto& operations = deployment.world().clients().records();
  models::checkers::Trial trial{.end = deployment.engine().now(),
                                .finished = run.ok() && !env.observed().script_stopped(),
                                .database = &deployment.database(),
                                .accounts = s.lua_workload ? nullptr : &accounts,
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
  if (kept == TraceKept::timeline)
    out.timeline = timeline(deployment.engine(), env.observed().locks(), accounts, deployment.statements(), deployment.calls(), seed);
  return out;
}

}  // namespace

// A trial that fails for a reason that is not the input's is a defect: the message says which
// trial, so that it can be run alone.
TrialOutcome run_trial(const Scenario& s, const StrategyChoice& choice, std::uint64_t seed, TraceKept kept,
                       sim::TieBreak tie_break, sim::Chooser chooser) {
  const bool scheduled = static_cast<bool>(tie_break) || static_cast<bool>(chooser);
  try {
    return run_one_trial(s, choice, seed, kept, std::move(tie_break), std::move(chooser));
  } catch (const InputError&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("the trial of {} with seed {}{} failed: {} (`--strategy {} --seed {} --trials 1` runs it "
                                         "alone)",
                                         choice.shown(), seed, scheduled ? " under an explorer's schedule" : "", e.what(),
                                         choice.shown(), seed));
  }
}

namespace {

// What a strategy's results are made of, summed trial by trial in trial order: the same
// figures as keeping every outcome and summing afterwards, in memory that does not grow with
// the trials.
struct StrategyFold {
  reports::StrategyResult result;
  std::uint64_t statements = 0, commands = 0;
  models::TimeSpent time_ok{};  // of the successful operations: integer time, so the sum is exact in any order
  std::map<std::string, double> sums;                   // of each metric over the trials
  std::map<std::string, const MetricInfo*> infos;       // the registry's entries, looked up once
  /// Expectations on metrics checked in every trial (a step's outcome), with how many trials
  /// they held in and the value of the first they did not.
  struct EachCheck {
    const Expectation* expect = nullptr;
    const MetricInfo* info = nullptr;
    std::uint64_t trials = 0, held = 0;
    std::optional<double> first_failure{};  // nullopt with failures: the trial lacked the metric
    bool failed = false;
  };
  std::vector<EachCheck> each_checks;

  std::string first_outcome;  // the first trial's counts and step outcomes, as text

  const MetricInfo& metric(const std::string& name) {
    const MetricInfo*& info = infos[name];
    if (info == nullptr) info = metric_info(name);
    if (info == nullptr) throw std::logic_error("a checker counted " + name + ", which the metric registry lacks");
    return *info;
  }

  void add(std::uint64_t trial, std::uint64_t seed, TrialOutcome&& o, double wall_s) {
    reports::StrategyResult& r = result;
    if (!r.first_violation) {
      std::vector<std::string> fired;
      for (const auto& [name, v] : o.counts)
        if (const MetricInfo& info = metric(name); info.finding && v > info.fires_above) fired.push_back(fmt::format("{} {:g}", name, v));
      if (!fired.empty()) r.first_violation = reports::StrategyResult::FirstViolation{trial, std::move(fired), trial == 0 ? o.timeline : reports::Timeline{}};
    }
    if (trial == 0) {
      r.first_trace_hash = o.trace_hash;
      r.timeline = std::move(o.timeline);
      r.steps = std::move(o.steps);
      r.tables = std::move(o.tables);
    }
    for (std::size_t i = 0; i < o.step_outcomes.size() && i < r.steps.size(); ++i) ++r.steps[i].outcomes[o.step_outcomes[i]];
    for (EachCheck& c : each_checks) {
      ++c.trials;
      // A count a trial lacks is 0 in it; a step's outcome it lacks was not measured.
      auto it = o.counts.find(c.expect->metric);
      std::optional<double> v;
      if (it != o.counts.end()) v = it->second;
      else if (c.info->aggregate != models::checkers::Aggregate::each) v = 0;
      if (v && c.expect->holds(*v)) {
        ++c.held;
      } else if (!c.failed) {
        c.failed = true;
        c.first_failure = v;
      }
    }
    r.trace_hash = (r.trace_hash ^ o.trace_hash) * 0x100000001b3ull;
    // What a trial came to (its counts and steps' outcomes; not its trace, whose seed-drawn
    // details differ even where nothing the checkers see does): all alike, or not.
    std::string outcome;
    for (const auto& [name, v] : o.counts) outcome += fmt::format("{}={:g};", name, v);
    for (const auto& step : o.step_outcomes) outcome += step + ";";
    if (r.trials == 0) {
      first_outcome = std::move(outcome);
      r.one_outcome = true;
    } else if (outcome != first_outcome) {
      r.one_outcome = false;
    }
    for (const auto& [name, v] : o.counts) {  // a metric a trial lacks is 0 in it: it adds nothing
      const MetricInfo& info = metric(name);
      if (info.aggregate == models::checkers::Aggregate::each) {
        auto [e, fresh] = r.each.try_emplace(name, reports::EachValue{v, v, v});
        e->second.min = std::min(e->second.min, v);
        e->second.max = std::max(e->second.max, v);
        continue;
      }
      reports::Metric& m = r.counts[name];
      m.total = info.aggregate == models::checkers::Aggregate::max ? std::max(m.total, v) : m.total + v;
      m.fired += v > info.fires_above ? 1 : 0;
      sums[name] += v;
    }
    r.latency.merge(o.latency);
    r.failed_latency.merge(o.failed_latency);
    add_time(time_ok, o.time_ok);
    r.operations += o.operations;
    r.events += o.events;
    statements += o.db_statements;
    commands += o.redis_commands;
    for (const auto& e : o.examples)
      if (r.examples.size() < 3) r.examples.push_back(fmt::format("seed {}: {}", seed + trial, e));
    r.wall_s += wall_s;  // the sum of its trials' wall times: the strategies' trials interleave
    ++r.trials;
  }

  // The figures over the trials done.
  reports::StrategyResult finish() && {
    reports::StrategyResult& r = result;
    for (auto& [name, m] : r.counts) {
      m.mean = sums[name] / static_cast<double>(r.trials);
      m.share = reports::wilson(m.fired, r.trials);
      const MetricInfo& info = metric(name);
      const bool rate = info.aggregate == models::checkers::Aggregate::sum && info.kind == models::checkers::MetricKind::count &&
                        name != "operations" && name != "injected_faults";
      if (rate && r.operations > 0) m.per_million = reports::per_million(m.total, r.operations);
      if (const auto faults = r.counts.find("injected_faults"); rate && faults != r.counts.end() && faults->second.total > 0)
        m.per_fault = reports::per_unit(m.total, faults->second.total);
    }
    if (r.latency.count() > 0) {  // the batch workload has no client operations to time
      for (auto [name, p] : {std::pair{"latency_ms.p50", 50.0}, {"latency_ms.p90", 90.0}, {"latency_ms.p99", 99.0},
                             {"latency_ms.p99.9", 99.9}})
        r.figures[name] = r.latency.percentile(p);
      r.figures["latency_ms.max"] = r.latency.max_ms();
      const double ok = static_cast<double>(r.latency.count());
      for (const TimePart& part : kTimeParts)
        r.figures[std::string("time_ms.") + part.name] = std::chrono::duration<double, std::milli>(time_ok.*part.member).count() / ok;
    }
    if (r.failed_latency.count() > 0)
      for (auto [name, p] : {std::pair{"failed_latency_ms.p50", 50.0}, {"failed_latency_ms.p99", 99.0}})
        r.figures[name] = r.failed_latency.percentile(p);
    const double ops = std::max<double>(1, static_cast<double>(r.operations));
    r.figures["db_ops_per_op"] = static_cast<double>(statements) / ops;
    r.figures["redis_ops_per_op"] = static_cast<double>(commands) / ops;
    return std::move(r);
  }
};

// The check of an expectation on a metric of every trial, and the trials its strategy ran.
const StrategyFold::EachCheck* each_check(const std::vector<StrategyFold>& folds, const Expectation& e) {
  for (const StrategyFold& f : folds)
    for (const auto& c : f.each_checks)
      if (c.expect == &e) return &c;
  return nullptr;
}

struct Finished {
  TrialOutcome outcome;
  double wall_s = 0;  // for the timing field only
};

}  // namespace

std::function<bool()> deadline_after(double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                              std::chrono::duration<double>(seconds));
  return [deadline] { return std::chrono::steady_clock::now() >= deadline; };
}

std::function<bool()> stop_after_trials(std::uint64_t trials) {
  // The queue asks once per trial it hands out, under its lock. Copies share the count, so a
  // sweep's points draw on one allowance.
  return [left = std::make_shared<std::uint64_t>(trials)] {
    if (*left == 0) return true;
    --*left;
    return false;
  };
}

std::function<bool()> same_trials_as(const reports::RunResults& earlier) {
  if (earlier.stopped.empty()) return {};
  std::uint64_t trials = 0;  // a prefix of the trial-major order: its length
  for (const auto& st : earlier.strategies) trials += st.trials;
  return stop_after_trials(trials);
}

reports::RunResults run_scenario(const Scenario& s, int jobs, const std::function<void(std::size_t, std::size_t)>& progress) {
  return run_scenario(s, RunControl{.jobs = jobs, .progress = progress});
}

namespace {

// A scenario's run under way: its results so far and a fold per strategy.
struct ScenarioRun {
  const Scenario* s;
  reports::RunResults results;
  std::vector<StrategyFold> folds;
  std::size_t items = 0, folded = 0;
};

ScenarioRun start_run(const Scenario& s) {
  ScenarioRun run{&s, {}, std::vector<StrategyFold>(s.strategies.size()), s.strategies.size() * static_cast<std::size_t>(s.trials), 0};
  reports::RunResults& results = run.results;
  results.scenario = s.name;
  results.file = s.file;
  results.description = s.description;
  results.source = s.source;
  results.lesson = s.lesson;
  if (s.lua_workload) {
    const auto& declared = s.lua_workload->metrics;
    const auto finding = std::find_if(declared.begin(), declared.end(), [](const auto& m) { return m.finding; });
    results.headline = (finding != declared.end() ? *finding : declared.front()).name;
  }
  results.scenario_hash = s.hash;
  results.seed = s.seed;
  results.trials = static_cast<std::uint64_t>(s.trials);
  results.configuration = effective_config(s).dump();
  for (const MetricInfo& m : metrics())
    results.metrics.push_back({m.name, m.unit, m.meaning, m.finding, m.aggregate != models::checkers::Aggregate::over_run,
                               m.aggregate == models::checkers::Aggregate::each});
  for (std::size_t k = 0; k < s.strategies.size(); ++k) {
    const StrategyChoice& choice = s.strategies[k];
    run.folds[k].result.name = choice.shown();
    run.folds[k].result.description = choice.entry().info.description;
    const models::strategies::Needs needs = models::strategies::needs(choice.entry(), choice.params);
    run.folds[k].result.family = needs.redis ? "Redis" : needs.zookeeper || needs.etcd ? "ZooKeeper / etcd" : "database";
    run.folds[k].result.params = choice.params;
    if (choice.rollout)
      for (const models::rollout::Phase& phase : models::rollout::phases(*choice.rollout))
        run.folds[k].result.phases.push_back({seconds(phase.from), seconds(phase.to), phase.steps});
    for (const Expectation& e : s.expect)
      if (e.strategy == choice.shown() && e.every_trial) run.folds[k].each_checks.push_back({&e, &run.folds[k].metric(e.metric)});
  }
  return run;
}

// The run's figures, and its expectations judged.
reports::RunResults finish_run(ScenarioRun&& run) {
  const Scenario& s = *run.s;
  std::vector<StrategyFold>& folds = run.folds;
  reports::RunResults results = std::move(run.results);
  for (StrategyFold& f : folds) results.strategies.push_back(std::move(f).finish());

  for (const Expectation& e : s.expect) {
    reports::ExpectationResult er{e.text()};
    const bool ran = std::any_of(s.strategies.begin(), s.strategies.end(), [&](const auto& c) { return c.shown() == e.strategy; });
    if (!ran) {
      er.skipped = true;  // narrowed with --strategy: nothing to judge
    } else if (const StrategyFold::EachCheck* each = each_check(folds, e)) {
      // Checked in every trial: it holds if it held in each; measured is the first value
      // that broke it, or the value every trial agreed on.
      er.holds = !each->failed && each->held == each->trials;
      if (each->failed) {
        er.measured_at_all = each->first_failure.has_value();
        er.measured = each->first_failure.value_or(0);
      } else {
        results.value(e.strategy, e.metric, er.measured);
      }
    } else if (results.value(e.strategy, e.metric, er.measured)) {
      er.holds = e.holds(er.measured);
    } else {
      er.measured_at_all = false;  // the metric is not measured in this scenario
    }
    results.expectations.push_back(er);
  }
  return results;
}

}  // namespace

std::vector<reports::RunResults> run_scenarios(const std::vector<const Scenario*>& scenarios, const RunControl& control,
                                               const std::function<void(std::size_t, const reports::RunResults&)>& scenario_done) {
  const auto started = std::chrono::steady_clock::now();
  std::vector<ScenarioRun> runs;
  std::vector<std::size_t> first_item;  // the queue's first item of each scenario
  std::size_t items = 0;
  std::vector<std::optional<reports::RunResults>> finished(scenarios.size());
  for (const Scenario* s : scenarios) {
    runs.push_back(start_run(*s));
    first_item.push_back(items);
    items += runs.back().items;
  }
  // Item `first_item[k] + i` is scenario k's item i: its trial i / strategies of strategy i % strategies.
  const auto locate = [&](std::size_t item) {
    const auto k = static_cast<std::size_t>(std::upper_bound(first_item.begin(), first_item.end(), item) - first_item.begin()) - 1;
    return std::pair{k, item - first_item[k]};
  };
  std::optional<std::chrono::steady_clock::time_point> stopped_at;
  auto stop = [&]() {
    if (!control.stop()) return false;
    stopped_at = std::chrono::steady_clock::now();
    return true;
  };
  const int jobs = std::max(1, control.jobs);
  const auto run_item = [&](std::size_t item) {
    const auto [k, i] = locate(item);
    const Scenario& s = *runs[k].s;
    const std::size_t strategies = s.strategies.size();
    const auto trial = i / strategies;
    const auto trial_started = std::chrono::steady_clock::now();
    Finished f{run_trial(s, s.strategies[i % strategies], s.seed + trial, trial == 0 ? TraceKept::timeline : TraceKept::hash)};
    f.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - trial_started).count();
    return f;
  };
  // Under mpirun: the leader hands items to the other ranks too, and folds their answers with
  // its own threads' results; another rank runs the items it is handed, and returns.
  const auto fingerprint = [&] {
    std::string out = fmt::format("run_scenarios {}", items);
    for (const ScenarioRun& run : runs)
      out += fmt::format(" {}:{:016x}:{}:{}:{}", run.s->name, run.s->hash, run.s->seed, run.s->trials, run.s->strategies.size());
    return out;
  };
  if (!cluster::leader()) {
    cluster::serve(fingerprint(), jobs, [&](std::uint64_t item, const std::string&) {
      const Finished f = run_item(item);
      return fmt::format("{:a}\n", f.wall_s) + encode(f.outcome);
    });
    return std::vector<reports::RunResults>(scenarios.size());
  }
  std::optional<cluster::Workers> workers;
  if (cluster::distributed()) workers.emplace(fingerprint(), 4);  // a trial takes a millisecond or more
  const int threads = jobs + (workers ? workers->threads() : 0);
  OrderedWork<Finished> work(
      items, control.window > 0 ? control.window : 4 * static_cast<std::size_t>(threads) + 64,
      [&](std::size_t item, Finished&& f) {
        const auto [k, i] = locate(item);
        ScenarioRun& run = runs[k];
        const std::size_t strategies = run.s->strategies.size();
        run.folds[i % strategies].add(i / strategies, run.s->seed, std::move(f.outcome), f.wall_s);
        if (control.progress) control.progress(item + 1, items);
        if (++run.folded == run.items) {
          finished[k] = finish_run(std::move(run));
          if (scenario_done) scenario_done(k, *finished[k]);
        }
      },
      control.stop ? std::function<bool()>(stop) : std::function<bool()>());
  std::function<void()> lead;
  if (workers)
    lead = [&] {
      cluster::lead(
          *workers,
          [&](std::uint64_t& item) {
            std::size_t taken = 0;
            const auto next = work.try_take(taken);
            item = taken;
            return next == OrderedWork<Finished>::Take::item   ? cluster::Next::item
                   : next == OrderedWork<Finished>::Take::wait ? cluster::Next::wait
                                                               : cluster::Next::over;
          },
          [](std::uint64_t) { return std::string(); },
          [&](std::uint64_t item, std::string&& answer) {
            const auto newline = answer.find('\n');
            Finished f{decode_outcome(answer.substr(newline + 1)), std::strtod(answer.c_str(), nullptr)};
            work.done(item, std::move(f));
          });
    };
  work.run(jobs, run_item, lead);
  if (control.draw_first_violation)  // each strategy's first violating trial past the first, once more with its timeline
    for (std::size_t k = 0; k < runs.size(); ++k) {
      if (!finished[k]) continue;
      const Scenario& s = *scenarios[k];
      for (std::size_t i = 0; i < finished[k]->strategies.size(); ++i)
        if (auto& v = finished[k]->strategies[i].first_violation; v && v->trial > 0)
          v->timeline = run_trial(s, s.strategies[i], s.seed + v->trial, TraceKept::timeline).timeline;
    }
  std::vector<reports::RunResults> out;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    if (finished[k]) {
      out.push_back(std::move(*finished[k]));
      continue;
    }
    out.push_back(finish_run(std::move(runs[k])));  // the deadline came before its last trial
    out.back().stopped = "time";
    out.back().stopped_after_s =
        std::chrono::duration<double>(stopped_at.value_or(std::chrono::steady_clock::now()) - started).count();
  }
  return out;
}

reports::RunResults run_scenario(const Scenario& s, const RunControl& control) {
  return std::move(run_scenarios({&s}, control).front());
}

}  // namespace locksim
