#include "app/story.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "app/trial.hpp"
#include "models/app/request.hpp"
#include "models/db/sql.hpp"

namespace locksim {

using Who = reports::Timeline::Who;

namespace {

// An app server's worker as its lane is named, from 1: "app-1 worker 4".
std::string worker_lane(const std::string& node, std::uint32_t worker) { return fmt::format("{} worker {}", node, worker); }

}  // namespace

Who who_of_process(const std::string& node, const std::string& process) {
  Who who{process, process, node};
  const std::string worker = node + ".worker-";
  if (process.starts_with(worker)) {
    const std::string index = process.substr(worker.size());
    if (!index.empty() && std::all_of(index.begin(), index.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      who.worker = static_cast<std::uint32_t>(std::stoi(index) + 1);
      who.lane = worker_lane(node, who.worker);
      return who;
    }
  }
  if (process.starts_with(node + "."))
    who.lane = node + " " + process.substr(node.size() + 1);
  else if (!process.starts_with(node) && node != "clients")
    who.lane = node + " " + process;
  return who;
}

Who who_of(const std::string& origin) {
  Who who{origin, origin, origin};
  if (const auto o = models::Origin::read(origin)) {
    who.node = o->server;
    who.worker = o->worker;
    who.lane = worker_lane(o->server, o->worker);
    who.client = o->client;
    who.operation = static_cast<std::int64_t>(o->operation);
    who.attempt = o->attempt;
  }
  return who;
}

namespace {

std::vector<Who> whos_of(const std::vector<std::string>& origins) {
  std::vector<Who> out;
  for (const auto& o : origins) out.push_back(who_of(o));
  return out;
}

// The holders involved in what went wrong (their origins): those whose lock the service ended
// under them or whose DEL removed another's, and those the service granted a lock to while its
// earlier holder still believed it held it.
std::set<Who> involved_holders(const reports::Timeline& t) {
  std::set<Who> out;
  for (const auto& b : t.bars) {
    if (b.service_to_s < 0 && b.deleted_by.empty() && b.removed.empty()) continue;
    out.insert(b.holder);
    if (!b.deleted_by.empty()) out.insert(b.deleted_by);
    for (const auto& other : t.bars)
      if (b.service_to_s >= 0 && other.lock == b.lock && b.service_to_s <= other.from_s && other.from_s < b.to_s)
        out.insert(other.holder);
  }
  return out;
}

// The operations involved in what went wrong: those of the involved holders, of the inserts of
// duplicated keys and of the statements involved.
std::set<std::int64_t> involved_operations(const reports::Timeline& t, const std::set<Who>& holders) {
  std::set<std::int64_t> ops;
  const auto add = [&](const Who& who) {
    if (who.operation >= 0) ops.insert(who.operation);
  };
  for (const auto& who : holders) add(who);
  for (const auto& m : t.inserts) add(m.who);
  for (const auto& st : t.statements) add(st.who);
  return ops;
}

// The calls of the involved operations: each attempt a client sent, the calls the worker that
// took it up made while it worked on it (Redis commands, ZooKeeper and etcd requests), and the
// background calls on its node meanwhile. At most 400, the first ones.
void add_involved_messages(reports::Timeline& t, const models::CallLog& log, const std::set<std::int64_t>& ops, sim::Time end,
                           const RequestWords* asked) {
  constexpr std::size_t kMost = 400;
  const auto secs = [](sim::Time t) { return t == sim::kNever ? -1.0 : seconds(t); };
  // A client's attempt told by what it asks (a Lua workload's fields), not by its traffic key.
  const auto request = [&](const models::CallRecord& c) {
    if (asked == nullptr || c.operation < 0 || c.attempt == 0) return c.request;
    const auto it = asked->find(c.operation);
    return it == asked->end() ? c.request : fmt::format("op {} attempt {} ({})", c.operation, c.attempt, it->second);
  };
  const auto message = [&](const models::CallRecord& c) {
    return reports::Timeline::Message{who_of_process(c.caller_node, c.caller),
                                      c.callee.empty() ? Who{c.callee_node, c.callee_node, c.callee_node}
                                                       : who_of_process(c.callee_node, c.callee),
                                      request(c),
                                      c.reply,
                                      seconds(c.sent),
                                      secs(c.arrived),
                                      secs(c.taken),
                                      secs(c.answered),
                                      secs(c.returned),
                                      secs(c.gave_up),
                                      c.operation,
                                      c.attempt};
  };
  // The attempts of the involved operations, and when their workers worked on them: per
  // worker, in the order it took them up (one at a time).
  std::map<std::string, std::vector<std::pair<sim::Time, sim::Time>>> windows;
  std::set<std::size_t> kept;
  const auto& calls = log.calls();
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const auto& c = calls[i];
    if (c.operation < 0 || !ops.count(c.operation)) continue;
    kept.insert(i);
    if (!c.callee.empty()) windows[who_of_process(c.callee_node, c.callee).lane].emplace_back(c.taken, std::min(c.answered, end));
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
    const auto it = windows.find(who_of_process(c.caller_node, c.caller).lane);
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

reports::Cell cell_of(const models::db::Value& v) {
  if (models::db::is_null(v)) return nullptr;
  if (const auto* n = std::get_if<std::int64_t>(&v)) return *n;
  return std::get<std::string>(v);
}

reports::LockWait lock_wait(const models::db::LockWait& w) {
  return {w.mode, w.table, w.index, w.entry, w.behind, std::chrono::duration<double, std::milli>(w.waited).count()};
}

const char* undone_name(models::db::Undone undone) {
  switch (undone) {
    case models::db::Undone::nothing: return "";
    case models::db::Undone::statement: return "statement";
    case models::db::Undone::transaction: return "transaction";
  }
  return "";
}

std::vector<reports::Timeline::Statement> involved_statements(const std::vector<models::db::LoggedStatement>& log,
                                                              const std::set<std::string>& origins, bool all,
                                                              models::db::Engine engine) {
  std::set<std::string> involved = origins;
  for (const auto& s : log)
    if (!s.result.ok() || !s.result.waits.empty()) involved.insert(s.who);
  std::vector<reports::Timeline::Statement> out;
  for (const auto& s : log) {
    if (!all && !involved.count(s.who)) continue;
    if (out.size() == 200) break;
    using Kind = reports::Timeline::Statement::Kind;
    using SKind = models::db::Statement::Kind;
    const SKind kind = s.statement.kind;
    reports::Timeline::Statement st{seconds(s.start), seconds(s.end), who_of(s.who), models::db::sql::as_written(s.statement, engine)};
    st.kind = kind == SKind::select ? Kind::select
              : kind == SKind::insert || kind == SKind::insert_if_absent || kind == SKind::update || kind == SKind::remove ? Kind::write
                                                                                                                           : Kind::other;
    const models::db::Result& r = s.result;
    st.rows = static_cast<std::int64_t>(s.rows);
    st.affected = r.affected;
    st.insert_id = r.insert_id;
    st.warnings = r.warnings;
    if (!r.ok()) {
      st.error = static_cast<int>(r.code);
      st.code = engine == models::db::Engine::postgresql ? models::db::sqlstate(r.code) : std::to_string(st.error);
      st.message = r.message.empty() ? models::db::to_string(r.code) : fmt::format("{} {}", st.code, r.message);
    }
    for (const auto& w : r.waits) {
      st.waits.push_back(lock_wait(w));
      for (const auto& who : w.behind)
        if (std::find_if(st.waited_for.begin(), st.waited_for.end(), [&](const Who& x) { return x.text == who; }) == st.waited_for.end())
          st.waited_for.push_back(who_of(who));
    }
    st.cycle = whos_of(r.deadlock_cycle);
    st.undone = undone_name(r.undone);
    st.undone_rows = r.undone_rows;
    for (const auto& l : s.locks_after) st.held.push_back({l.who, l.mode, l.table, l.index, l.entry});
    st.held_cut = s.locks_after.size() == models::db::LoggedStatement::kLocksLogged;
    out.push_back(std::move(st));
  }
  return out;
}

namespace {

// A hold as a bar: as its holder believed it, with the lease to where the service really
// ended it and why the hold ended, in words.
reports::Timeline::Bar bar(const models::checkers::LockMonitor& locks, const models::checkers::LockMonitor::Record& r,
                           sim::Time end) {
  using models::checkers::HoldEnd;
  using models::checkers::LockService;
  const sim::Time until = std::min(r.until, end);
  reports::Timeline::Bar b{r.lock, who_of(r.who), seconds(r.from), seconds(until), r.lease_until == sim::kNever ? -1.0 : seconds(r.lease_until)};
  const HoldEnd why = models::checkers::LockMonitor::end_of(r, end);
  sim::Time service_end = r.service_until;
  if (why == HoldEnd::expired && service_end == sim::kNever) service_end = r.lease_until;
  if (service_end != sim::kNever && service_end < until) {
    b.service_to_s = seconds(service_end);
    b.lease_to_s = b.service_to_s;  // the lease ended there, whatever its TTL said
  }
  // The holder's own unlock (DEL, compare-and-delete, Redisson's unlock) follows its release at
  // once, and a hold lost under it is gone by then: its lease at the service ends there too.
  if ((why == HoldEnd::released || why == HoldEnd::lost) && r.lease_until != sim::kNever && r.lease_until > until)
    b.lease_to_s = seconds(until);
  static constexpr const char* kServices[] = {"redis", "redlock", "zookeeper", "etcd", "postgresql", "mariadb", "lease", "consul"};
  b.service = kServices[static_cast<int>(r.service)];
  if (r.deleted_by) b.deleted_by = who_of(locks.records()[*r.deleted_by].who);
  if (r.removed) b.removed = who_of(locks.records()[*r.removed].who);
  using End = reports::Timeline::End;
  switch (why) {
    case HoldEnd::held: b.end = End::held; break;
    case HoldEnd::released: b.end = End::released; break;
    case HoldEnd::expired: b.end = End::expired; break;
    case HoldEnd::deleted: b.end = End::deleted; break;
    case HoldEnd::session_lost:
      b.end = r.service == LockService::etcd          ? End::lease_expired
              : r.service == LockService::pg_advisory || r.service == LockService::mariadb_user_lock
                  ? End::lost  // with its session or transaction; with its connection
                                                      : End::session_expired;
      break;
    case HoldEnd::lost: b.end = End::lost; break;
    case HoldEnd::crashed: b.end = End::crashed; break;
  }
  for (const sim::Time t : r.renewals) b.renewals_s.push_back(seconds(t));
  return b;
}

}  // namespace

reports::Timeline timeline(sim::Engine& engine, const models::checkers::LockMonitor& locks,
                           const std::vector<models::db::RowRecord>& rows, const std::vector<models::db::LoggedStatement>& log,
                           const models::CallLog* calls, std::uint64_t seed, models::db::Engine dialect, const RequestWords* asked) {
  reports::Timeline t;
  t.seed = seed;
  const sim::Time end = engine.now();
  t.end_s = seconds(end);
  for (const auto& r : locks.records()) t.bars.push_back(bar(locks, r, end));
  // The kMostKept longest pauses and downtimes, the rest counted: a story's size does not grow
  // with a trial's millions of injected pauses, and the long ones are those a lease runs out in.
  constexpr std::size_t kMost = reports::Timeline::kMostKept;
  using Kept = std::pair<std::size_t, reports::Timeline::Band>;  // in the order found
  std::vector<Kept> kept;  // a heap whose top is the shortest (the latest of equals) while over the bound
  std::size_t found = 0;
  const auto longer = [](const Kept& a, const Kept& b) {
    const double la = a.second.to_s - a.second.from_s, lb = b.second.to_s - b.second.from_s;
    return la > lb || (la == lb && a.first < b.first);
  };
  std::map<std::uint32_t, sim::Time> down_since;
  const auto band = [&](std::uint32_t node, double from_s, double to_s, const char* kind) {
    // Full, a band no longer than the shortest kept would leave at once (a later one of equals
    // too): counted without a heap's work, which a trial of millions of pauses would spend.
    if (kept.size() == kMost && !(to_s - from_s > kept.front().second.to_s - kept.front().second.from_s)) {
      ++found;
      ++t.bands_left_out;
      return;
    }
    kept.emplace_back(found++, reports::Timeline::Band{engine.node_name(node), from_s, to_s, kind});
    std::push_heap(kept.begin(), kept.end(), longer);
    if (kept.size() > kMost) {
      std::pop_heap(kept.begin(), kept.end(), longer);
      kept.pop_back();
      ++t.bands_left_out;
    }
  };
  for (const auto& e : engine.trace().events()) {
    if (e.kind != sim::trace_kind::node_pause && e.kind != sim::trace_kind::node_crash && e.kind != sim::trace_kind::node_restart) continue;
    if (e.kind == sim::trace_kind::node_pause)
      band(e.node, seconds(e.at), seconds(e.at + sim::Duration{e.a}), "paused");
    else if (e.kind == sim::trace_kind::node_crash)
      down_since[e.node] = e.at;
    else if (e.kind == sim::trace_kind::node_restart && down_since.count(e.node)) {
      band(e.node, seconds(down_since[e.node]), seconds(e.at), "down");
      down_since.erase(e.node);
    }
  }
  for (const auto& [node, since] : down_since) band(node, seconds(since), t.end_s, "down");
  std::sort(kept.begin(), kept.end(), [](const Kept& a, const Kept& b) { return a.first < b.first; });
  for (auto& [at, b] : kept) t.bands.push_back(std::move(b));
  std::map<std::string, int> per_key;
  std::map<std::string, std::pair<sim::Time, std::int64_t>> first_of;  // each key's first row (inserted, id), seeded ones too
  for (const auto& row : rows) {
    const std::string key = std::get<std::string>(row.row.values.at("open_id"));  // at() gives a copy
    ++per_key[key];
    const std::pair at{row.origin.inserted_at, row.row.id};
    if (auto [it, fresh] = first_of.try_emplace(key, at); !fresh && at < it->second) it->second = at;
  }
  std::set<std::string> inserted_duplicates;  // by their origin
  for (const auto& row : rows) {  // the trial's own inserts: a seeded row was there before it began
    const std::string key = std::get<std::string>(row.row.values.at("open_id"));  // at() gives a copy
    if (per_key[key] < 2 || row.origin.transaction == 0) continue;
    const bool first = first_of.at(key) == std::pair{row.origin.inserted_at, row.row.id};
    t.inserts.push_back({row.row.id, who_of(row.origin.who), seconds(row.origin.inserted_at), key, first});
    inserted_duplicates.insert(row.origin.who);
  }
  const std::set<Who> holders = involved_holders(t);
  std::set<std::string> origins = inserted_duplicates;
  for (const auto& h : holders) origins.insert(h.text);
  // Nothing went wrong that a lock or a duplicate shows: the whole trial, to the caps (a failed
  // or waiting statement is still involved, and with it its operation alone).
  const bool safe = origins.empty();
  t.statements = involved_statements(log, origins, safe, dialect);
  if (calls != nullptr) {
    std::set<std::int64_t> ops = involved_operations(t, holders);
    if (safe)
      for (const auto& c : calls->calls())
        if (c.operation >= 0) ops.insert(c.operation);
    add_involved_messages(t, *calls, ops, end, asked);
  }
  return t;
}

}  // namespace locksim
