#include "reports/focus.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "reports/explain.hpp"

namespace locksim::reports {

namespace {

// The kinds of violation a timeline shows, in the order a story prefers them when the search
// asked for none: a duplicate is what the tool is about.
enum class Kind { duplicate, lease, wrong_unlock, deadlock, lock_wait_timeout, none };

Kind kind_of(const std::string& metric) {
  if (metric == "duplicate_rows" || metric == "duplicate_keys") return Kind::duplicate;
  if (metric == "lease_expiry_violations" || metric == "overlapping_holders" || metric == "max_concurrent_holders" ||
      metric == "stale_writes_accepted")
    return Kind::lease;
  if (metric == "wrong_unlocks") return Kind::wrong_unlock;
  if (metric == "deadlocks" || metric == "errors.1213") return Kind::deadlock;
  if (metric == "errors.1205") return Kind::lock_wait_timeout;
  return Kind::none;
}

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::duplicate: return "duplicate_rows";
    case Kind::lease: return "lease_expiry_violations";
    case Kind::wrong_unlock: return "wrong_unlocks";
    case Kind::deadlock: return "deadlocks";
    case Kind::lock_wait_timeout: return "errors.1205";
    case Kind::none: break;
  }
  return "";
}

// One violation the timeline shows: when, and who and what it involved.
struct Violation {
  double at_s = 0;
  std::set<Timeline::Who> whos{};
  std::set<std::string> keys{};   // duplicated keys
  std::string lock{};             // a hold's lock
  double lost_s = -1, to_s = -1;  // a hold: the service ended it at lost_s, its holder let go at to_s
};

std::vector<Violation> violations(const Timeline& t, Kind k) {
  std::vector<Violation> out;
  switch (k) {
    case Kind::duplicate: {
      std::map<std::string, Violation> by_key;  // a key's inserts: it became a duplicate at the second
      std::map<std::string, std::vector<double>> times;  // of its duplicate rows
      for (const auto& m : t.inserts) {
        Violation& v = by_key[m.key];
        v.whos.insert(m.who);
        v.keys.insert(m.key);
        if (!m.first) times[m.key].push_back(m.at_s);
      }
      for (auto& [key, v] : by_key) {
        auto& at = times[key];
        std::sort(at.begin(), at.end());
        v.at_s = at.empty() ? 0 : at.front();
        out.push_back(std::move(v));
      }
      break;
    }
    case Kind::lease:
    case Kind::wrong_unlock:
      for (const auto& b : t.bars) {
        if (lost_at(b) < 0 || (k == Kind::wrong_unlock && b.deleted_by.empty())) continue;
        Violation v{lost_at(b), {b.holder}, {}, b.lock, lost_at(b), b.to_s};
        if (!b.deleted_by.empty()) v.whos.insert(b.deleted_by);
        out.push_back(std::move(v));
      }
      break;
    case Kind::deadlock:
    case Kind::lock_wait_timeout:
      for (const auto& st : t.statements) {
        if (k == Kind::deadlock ? st.cycle.empty() : st.error != 1205) continue;
        Violation v{st.to_s, {st.who}};
        v.whos.insert(st.cycle.begin(), st.cycle.end());
        v.whos.insert(st.waited_for.begin(), st.waited_for.end());
        out.push_back(std::move(v));
      }
      break;
    case Kind::none: break;
  }
  std::stable_sort(out.begin(), out.end(), [](const Violation& a, const Violation& b) { return a.at_s < b.at_s; });
  return out;
}

}  // namespace

Focus focus(const Timeline& t, const std::vector<std::string>& fired, const std::string& property) {
  Focus f;
  if (narrated_events(t) <= kMostNarrated) {
    f.told = t;
    return f;
  }
  // A finding asked for that the timeline cannot centre on (a workload's own count, a stale
  // write) is told by the whole trial, never by another finding's story.
  if (!property.empty() && property != "any" && kind_of(property) == Kind::none) {
    f.told = t;
    return f;
  }
  // The kind told: the one asked for, else the first that fired, else the first shown.
  std::vector<Kind> preferred;
  if (!property.empty()) preferred.push_back(kind_of(property));
  for (const auto& name : fired) preferred.push_back(kind_of(name.substr(0, name.find(' '))));
  for (Kind k : {Kind::duplicate, Kind::lease, Kind::wrong_unlock, Kind::deadlock, Kind::lock_wait_timeout}) preferred.push_back(k);
  Kind kind = Kind::none;
  std::vector<Violation> found;
  for (Kind k : preferred) {
    if (k == Kind::none) continue;
    found = violations(t, k);
    if (!found.empty()) {
      kind = k;
      break;
    }
  }
  if (kind == Kind::none) {
    f.told = t;
    return f;
  }
  f.about = property.empty() || kind_of(property) != kind ? kind_name(kind) : property;
  f.at_s = found.front().at_s;
  const std::size_t told = std::min(found.size(), kViolationsTold);

  // Who is involved: the violations' origins and, for a hold the service ended, whoever the
  // service granted the lock to meanwhile; then every attempt of their operations.
  std::set<Timeline::Who> whos;
  std::set<std::string> keys;
  for (std::size_t i = 0; i < told; ++i) {
    const Violation& v = found[i];
    whos.insert(v.whos.begin(), v.whos.end());
    keys.insert(v.keys.begin(), v.keys.end());
    if (!v.lock.empty())
      for (const auto& b : t.bars)
        if (b.lock == v.lock && b.from_s >= v.lost_s && b.from_s < v.to_s) whos.insert(b.holder);
  }
  std::set<std::int64_t> ops;
  for (const auto& who : whos)
    if (who.operation >= 0) ops.insert(who.operation);
  const auto involved = [&](const Timeline::Who& who) { return who.operation < 0 ? whos.count(who) > 0 : ops.count(who.operation) > 0; };

  Timeline& out = f.told;
  out.seed = t.seed;
  out.schedule = t.schedule;
  out.end_s = t.end_s;
  out.operations = t.operations;
  out.anomalies = t.anomalies;
  double from = t.end_s, to = 0;
  const auto span = [&](double a, double b) {
    from = std::min(from, a);
    to = std::max(to, b);
  };
  for (const auto& b : t.bars)
    if (involved(b.holder)) {
      out.bars.push_back(b);
      span(b.from_s, b.to_s);
    }
  for (const auto& m : t.inserts)
    if (involved(m.who) || keys.count(m.key)) {
      out.inserts.push_back(m);
      span(m.at_s, m.at_s);
    }
  // Statements: those of the operations told, and the failures of the trial's own processes
  // (a DBA's ALTER TABLE, a cleanup job), which no operation owns, at most kMostOwnFailures;
  // deadlocks and lock wait timeouts are violations of their own, told as such or counted.
  constexpr std::size_t kMostOwnFailures = 10;
  std::size_t own_failures = 0;
  for (const auto& st : t.statements) {
    const bool own_failure = st.who.operation < 0 && !whos.count(st.who) && failed(st) && st.cycle.empty() && st.error != 1205 &&
                             own_failures < kMostOwnFailures;
    if (involved(st.who) || own_failure) {
      own_failures += own_failure ? 1 : 0;
      out.statements.push_back(st);
      if (!own_failure) span(st.from_s, st.to_s);
    }
  }
  // Calls: the attempts of the operations told, and the calls their workers made while on
  // them; a node's background calls (renewals, keep-alives) within the story's window.
  std::map<std::string, std::vector<std::pair<double, double>>> on_it;  // worker lane -> when it worked on an attempt told
  std::set<std::string> worker_nodes;                                     // of those workers
  for (const auto& m : t.messages) {
    if (m.operation < 0 || !ops.count(m.operation)) continue;
    span(m.sent_s, std::max({m.sent_s, m.returned_s, m.gave_up_s}));
    if (m.taken_s >= 0) {
      on_it[m.to.lane].emplace_back(m.taken_s, m.replied_s >= 0 ? m.replied_s : t.end_s);
      worker_nodes.insert(m.to.node);
    }
  }
  std::set<std::string> nodes;
  for (const auto& who : whos) nodes.insert(who.node);
  for (const auto& b : out.bars) nodes.insert(b.holder.node);
  nodes.insert(worker_nodes.begin(), worker_nodes.end());
  for (const auto& m : t.messages) {
    bool keep = m.operation >= 0 && ops.count(m.operation) > 0;
    if (m.operation < 0) {
      if (const auto it = on_it.find(m.from.lane); it != on_it.end())
        keep = std::any_of(it->second.begin(), it->second.end(), [&](const auto& w) { return w.first <= m.sent_s && m.sent_s <= w.second; });
      else
        keep = m.from.worker == 0 && nodes.count(m.from.node) && from <= m.sent_s && m.sent_s <= to;
    }
    if (keep) out.messages.push_back(m);
  }
  // Pauses and crashes of the nodes involved, within the window: those the violations
  // happened in and the long ones first, at most 8.
  constexpr std::size_t kMostBands = 8;
  std::vector<const Timeline::Band*> bands;
  for (const auto& b : t.bands)
    if (nodes.count(b.node) && b.to_s >= from && b.from_s <= to) bands.push_back(&b);
  const auto causes = [&](const Timeline::Band& b) {
    for (std::size_t i = 0; i < told; ++i)
      if (b.from_s <= found[i].at_s && found[i].at_s <= b.to_s) return true;
    return false;
  };
  std::stable_sort(bands.begin(), bands.end(), [&](const auto* a, const auto* b) {
    if (causes(*a) != causes(*b)) return causes(*a);
    return a->to_s - a->from_s > b->to_s - b->from_s;
  });
  if (bands.size() > kMostBands) bands.resize(kMostBands);
  std::stable_sort(bands.begin(), bands.end(), [](const auto* a, const auto* b) { return a->from_s < b->from_s; });
  for (const auto* b : bands) out.bands.push_back(*b);
  out.calls_left_out = t.calls_left_out;
  out.bands_left_out = t.bands_left_out;

  // What is left out, counted.
  std::vector<std::string> op_list;  // in order: "op 9" before "op 10"
  for (const auto op : ops) op_list.push_back(fmt::format("op {}", op));
  const std::size_t listed = std::min<std::size_t>(op_list.size(), 6);
  std::string followed = fmt::format("{}{}", fmt::join(op_list.begin(), op_list.begin() + static_cast<std::ptrdiff_t>(listed), ", "),
                                     op_list.size() > listed ? fmt::format(" and {} more", op_list.size() - listed) : "");
  if (t.operations > 0)
    f.left_out.push_back(fmt::format("Of the trial's {} operations over {:.3f} s, this story follows {} ({}), from t={:.3f} s to t={:.3f} s.",
                                     grouped(t.operations), t.end_s, op_list.size(), followed, from, to));
  else
    f.left_out.push_back(fmt::format("This story follows {} from t={:.3f} s to t={:.3f} s.",
                                     op_list.empty() ? fmt::format("{}", fmt::join(texts_of(whos), ", ")) : followed, from, to));
  std::vector<std::string> parts;
  const std::size_t other_bars = t.bars.size() - out.bars.size();
  if (other_bars > 0) {
    std::size_t released = 0;
    for (const auto& b : t.bars)
      if (!involved(b.holder) && b.end == Timeline::End::released && lost_at(b) < 0) ++released;
    parts.push_back(released == other_bars ? fmt::format("{} lock holds of other operations, each released by its holder", grouped(other_bars))
                                           : fmt::format("{} lock holds of other operations ({} released by their holders, {} ended otherwise)",
                                                         grouped(other_bars), grouped(released), grouped(other_bars - released)));
  }
  if (t.bands.size() > out.bands.size())
    parts.push_back(fmt::format("{} pauses and crashes of other nodes, at other times or shorter", grouped(t.bands.size() - out.bands.size())));
  if (t.inserts.size() > out.inserts.size())
    parts.push_back(fmt::format("{} inserts of other duplicated keys", grouped(t.inserts.size() - out.inserts.size())));
  if (t.statements.size() > out.statements.size())
    parts.push_back(fmt::format("{} statements of other operations", grouped(t.statements.size() - out.statements.size())));
  if (t.messages.size() > out.messages.size())
    parts.push_back(fmt::format("{} calls of other operations", grouped(t.messages.size() - out.messages.size())));
  if (!parts.empty()) f.left_out.push_back(fmt::format("Left out: {}.", fmt::join(parts, "; ")));
  if (t.bands_left_out > 0)
    f.left_out.push_back(fmt::format("{} shorter pauses or crashes of the trial were not kept (past the {} longest).",
                                     grouped(t.bands_left_out), Timeline::kMostKept));
  if (t.calls_left_out > 0)
    f.left_out.push_back(fmt::format("{} calls of the trial were not kept (past the bound of calls a trial keeps), so some of the "
                                     "story's calls may be missing.",
                                     grouped(t.calls_left_out)));
  if (found.size() > told) {
    std::vector<std::string> when;
    for (std::size_t i = told; i < found.size() && when.size() < 10; ++i) when.push_back(fmt::format("t={:.3f} s", found[i].at_s));
    f.left_out.push_back(fmt::format("{} more {} of the same kind, not told: at {}{}.", found.size() - told,
                                     kind == Kind::duplicate ? "keys inserted more than once" : f.about, fmt::join(when, ", "),
                                     found.size() - told > when.size() ? ", ..." : ""));
  }
  return f;
}

}  // namespace locksim::reports
