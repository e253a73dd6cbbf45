// Shrinking a violating run: the explorer's finding, made as small as it can be while the
// same property still fires. Every candidate is the token with one more `--set` override
// (or a smaller schedule), so the result replays like any token; a candidate is kept only
// if it is no larger than the current run in every measure of RunSize.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "app/deadline.hpp"
#include "app/search/replay.hpp"
#include "app/search/shrink.hpp"
#include "app/fault_kind.hpp"
#include "app/trial.hpp"
#include "app/workload_kind.hpp"
#include "sim/errors.hpp"

namespace locksim {

using nlohmann::json;

bool RunSize::no_larger_than(const RunSize& o) const {
  return clients <= o.clients && operations <= o.operations && horizon_s <= o.horizon_s && faults <= o.faults &&
         pause_ms <= o.pause_ms && choices <= o.choices && options <= o.options;
}

std::string RunSize::text() const {
  const std::string load = !traffic           ? fmt::format("{} client(s) x {} operation(s)", clients, operations)
                           : horizon_s > 0    ? fmt::format("{} operation(s) sent of traffic arriving for {:g} s", clients, horizon_s)
                                              : fmt::format("{} operation(s) sent of traffic", clients);
  return fmt::format("{}, {} fault(s), {:g} ms of pauses (scheduled and placed), {} deviating choice(s)", load, faults, pause_ms, choices);
}

namespace {

constexpr int kSeedsPerCandidate = 4;

using Ranges = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

std::uint64_t count(const Ranges& ranges) {
  std::uint64_t n = 0;
  for (const auto& [first, last] : ranges) n += last - first + 1;
  return n;
}

// The ranges without the operations at positions [from, to) of the ones they hold, in order.
Ranges without(const Ranges& ranges, std::uint64_t from, std::uint64_t to) {
  Ranges out;
  std::uint64_t at = 0;  // the position of the range's first operation
  for (const auto& [first, last] : ranges) {
    const std::uint64_t n = last - first + 1;
    if (at + n <= from || at >= to) {
      out.emplace_back(first, last);
    } else {
      if (from > at) out.emplace_back(first, first + (from - at) - 1);
      if (to < at + n) out.emplace_back(first + (to - at), last);
    }
    at += n;
  }
  return out;
}

json ranges_json(const Ranges& ranges) {
  json out = json::array();
  for (const auto& [first, last] : ranges) out.push_back({first, last});
  return out;
}

// A run's size before it runs: for traffic, the operations it may send (those of `only`, or
// as many as arrive), which the run's own count then replaces.
RunSize size_of(const Scenario& s, const Token& t) {
  RunSize z;
  z.clients = s.deployment.clients.clients;
  z.operations = s.deployment.clients.operations_per_client;
  if (const auto& traffic = s.deployment.clients.traffic) {
    z.traffic = true;
    z.operations = 1;
    z.horizon_s = traffic->operations == 0 && traffic->times.empty() ? std::chrono::duration<double>(traffic->duration).count() : 0;
    const double arriving = traffic->kind == models::Traffic::Kind::listed ? static_cast<double>(traffic->times.size())
                            : traffic->operations != 0                    ? static_cast<double>(traffic->operations)
                                                                          : traffic->rate_per_s * z.horizon_s;
    z.clients = static_cast<int>(std::min<double>(traffic->only.empty() ? std::ceil(arriving * (1 + traffic->double_submit))
                                                                        : static_cast<double>(count(traffic->only)),
                                                  std::numeric_limits<int>::max()));
  }
  for (const FaultSetup& f : s.faults) {
    z.faults += f.faults->count();
    z.pause_ms += f.faults->pause_ms();
  }
  std::tie(z.choices, z.options) = Schedule::parse(t.schedule).deviating();
  return z;
}

// The token with `path=value` set: earlier overrides of that path, or inside it, are
// dropped, since `value` was computed from the document they had already shaped.
Token with_set(Token t, const std::string& path, const json& value) {
  std::erase_if(t.sets, [&](const std::string& set) {
    const std::string p = set.substr(0, set.find('='));
    return p == path || p.rfind(path + ".", 0) == 0;
  });
  t.sets.push_back(path + "=" + value.dump());
  return t;
}

// Smaller values of a count, smallest first: 1, half, one less.
std::vector<int> smaller(int n) {
  std::vector<int> out;
  for (int v : {1, n / 2, n - 1})
    if (v >= 1 && v < n && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  return out;
}

// Listed times: each one left out in turn.
void fewer_times(const Token& t, const json& times, const std::string& path, std::vector<Token>& out) {
  for (std::size_t i = 0; times.is_array() && times.size() > 1 && i < times.size(); ++i) {
    json fewer = times;
    fewer.erase(i);
    out.push_back(with_set(t, path, fewer));
  }
}

// The population's traffic: a shorter horizon first (arrivals are drawn in order, so the
// ones before it arrive as they did), then fewer arrivals.
void traffic_candidates(const Token& t, const json& traffic, const RunSize& size, std::vector<Token>& out) {
  if (traffic.is_object() && traffic.contains("duration_s") && traffic.at("duration_s").is_number())
    for (double share : {0.5, 0.75, 0.875})
      out.push_back(with_set(t, "clients.traffic.duration_s", traffic.at("duration_s").get<double>() * share));
  if (traffic.is_object() && traffic.contains("operations") && traffic.at("operations").is_number_integer())
    for (int ops : smaller(traffic.at("operations").get<int>())) out.push_back(with_set(t, "clients.traffic.operations", ops));
  if (traffic.is_object() && traffic.contains("times_ms")) fewer_times(t, traffic.at("times_ms"), "clients.traffic.times_ms", out);
  // Then the operations sent, by delta debugging over their numbers: each half left out,
  // then each quarter, ... down to single operations (at most 64 parts while many are left).
  Ranges sent;
  if (traffic.is_object() && traffic.contains("only"))
    for (const json& r : traffic.at("only")) sent.emplace_back(r.at(0).get<std::uint64_t>(), r.at(1).get<std::uint64_t>());
  else if (size.clients > 0)
    sent.emplace_back(0, static_cast<std::uint64_t>(size.clients) - 1);
  const std::uint64_t n = count(sent);
  for (std::uint64_t parts = 2; n > 1 && parts <= std::min<std::uint64_t>(n, 64) * 2; parts *= 2) {
    const std::uint64_t p = std::min(parts, n), chunk = (n + p - 1) / p;
    for (std::uint64_t from = 0; from < n; from += chunk)
      out.push_back(with_set(t, "clients.traffic.only", ranges_json(without(sent, from, std::min(n, from + chunk)))));
    if (p == n) break;
  }
}

// The candidates one step smaller than `t`, in the order they are tried: whole parts of
// the run first (clients, operations, faults), then shorter pauses, then simpler choices.
std::vector<Token> candidates(const Token& t, const json& doc, const RunSize& size) {
  std::vector<Token> out;
  // Only a workload with clients has clients to take away.
  const bool has_clients = workload_kind_of(doc.value("workload", json())).has_clients();
  const json clients = doc.value("clients", json::object());
  if (has_clients && clients.is_object() && clients.contains("traffic")) {
    traffic_candidates(t, clients.at("traffic"), size, out);
  } else if (has_clients) {
    for (int c : smaller(clients.value("count", 10))) out.push_back(with_set(t, "clients.count", c));
    const json arrival = clients.value("arrival", json::object());
    if (arrival.value("kind", "") == "listed" && arrival.contains("times_ms")) {
      fewer_times(t, arrival.at("times_ms"), "clients.arrival.times_ms", out);
    } else {
      for (int ops : smaller(clients.value("operations", 1))) out.push_back(with_set(t, "clients.operations", ops));
    }
  }
  // Every kind's removals, then every kind's milder faults.
  const json faults = doc.value("faults", json::object());
  std::vector<Smaller> removals, reductions;
  for (const FaultKind* kind : fault_kinds()) kind->shrink(faults, removals, reductions);
  for (const auto& [path, value] : removals) out.push_back(with_set(t, path, value));
  for (const auto& [path, value] : reductions) out.push_back(with_set(t, path, value));
  const Schedule schedule = Schedule::parse(t.schedule);
  if (schedule.kind == Schedule::Kind::dfs) {
    // Each deviation dropped, then each lowered by one option.
    const Deviations& d = schedule.deviations;
    for (const auto& [i, v] : d) {
      Deviations fewer = d;
      fewer.erase(i);
      Token c = t;
      c.schedule = Schedule::dfs(std::move(fewer)).text();
      out.push_back(c);
    }
    for (const auto& [i, v] : d) {
      if (v < 2) continue;
      Deviations lower = d;
      --lower[i];
      Token c = t;
      c.schedule = Schedule::dfs(std::move(lower)).text();
      out.push_back(c);
    }
  }
  if (schedule.kind == Schedule::Kind::pct && schedule.depth > 1) {
    Token c = t;
    c.schedule = Schedule::pct(schedule.depth - 1, schedule.steps, schedule.agents, schedule.seed).text();
    out.push_back(c);
  }
  return out;
}

// Operations are numbered as they arrive, so those a traffic run sent (`sent`) are the first of
// `only`'s numbers: the rest (past the horizon) go, and `only` counts what is sent.
void trim_only(Token& candidate, Scenario& s, std::uint64_t sent) {
  const json doc = json::parse(s.resolved);
  const json& traffic = doc.at("clients").at("traffic");
  if (!traffic.contains("only")) return;
  Ranges only;
  for (const json& range : traffic.at("only")) only.emplace_back(range.at(0).get<std::uint64_t>(), range.at(1).get<std::uint64_t>());
  if (sent > 0 && count(only) > sent) {
    candidate = with_set(candidate, "clients.traffic.only", ranges_json(without(only, sent, count(only))));
    s = load_scenario(scenario_path(candidate.scenario), candidate.sets, {candidate.strategy});
    candidate.scenario_hash = s.hash;
  }
}

std::string first_metric(const std::vector<std::string>& fired) {
  return fired.empty() ? std::string() : fired.front().substr(0, fired.front().find(' '));
}

}  // namespace

RunSize size_of(const Token& t) { return size_of(load_scenario(scenario_path(t.scenario), t.sets, {t.strategy}), t); }

Shrunk shrink(const Token& found, const std::string& property, int budget, double time_s) {
  Shrunk r{found, {}, {}, 0, {}};
  // No trial starts once `time_s` has passed, and the one under way then is interrupted: the
  // shrink so far is the answer.
  const TrialsDeadline deadline(time_s);
  const auto out_of_time = [&] {
    r.timed_out = r.timed_out || deadline.passed();
    return r.timed_out;
  };
  const auto run_within_time = [&](const Scenario& s, const Token& t) -> std::optional<TrialOutcome> {
    try {
      return run_token(s, strategy_named(s, t.strategy), t, TraceKept::none);
    } catch (const sim::Interrupted&) {
      r.timed_out = true;
      return std::nullopt;
    }
  };
  Scenario current = load_scenario(scenario_path(found.scenario), found.sets, {found.strategy});
  r.before = r.after = size_of(current, found);
  const std::optional<TrialOutcome> confirmed = run_within_time(current, found);
  if (!confirmed) return r;
  const TrialOutcome& first = *confirmed;
  if (r.before.traffic) r.before.clients = r.after.clients = static_cast<int>(first.operations);
  r.before.pause_ms = r.after.pause_ms = r.before.pause_ms + first.placed_pause_ms;  // a search's placed pauses: known once run
  r.fired = fired_checkers(first, property);
  // "any" shrinks towards the checker that fired first, so the result shows the same failure.
  const std::string target = property == "any" ? first_metric(r.fired) : property;
  if (target.empty()) return r;  // the token does not violate: nothing to shrink

  // Passes over the candidates until none is kept (each kept one is strictly smaller in
  // some measure and no larger in any, so this ends) or the budget is spent.
  for (bool progress = true; progress && r.runs < static_cast<std::uint64_t>(budget) && !out_of_time();) {
    progress = false;
    for (Token candidate : candidates(r.token, json::parse(current.resolved), r.after)) {
      if (r.runs >= static_cast<std::uint64_t>(budget) || out_of_time()) break;
      Scenario s;
      try {
        s = load_scenario(scenario_path(candidate.scenario), candidate.sets, {candidate.strategy});
      } catch (const InputError&) {
        continue;  // a candidate the scenario rules refuse (a fault naming a node now gone, say)
      }
      candidate.scenario_hash = s.hash;
      RunSize size = size_of(s, candidate);
      if (size.traffic) size.clients = std::min(size.clients, r.after.clients);  // a shorter horizon sends no more
      if (!size.no_larger_than(r.after) || size == r.after) continue;
      // A random-mode run is its seed: a smaller scenario may need another seed to fail the
      // same way, so a few are tried. A schedule's run is kept on its own seed, and so is
      // traffic's, whose operations are numbered by what its seed drew.
      const int seeds = candidate.schedule.empty() && !size.traffic ? kSeedsPerCandidate : 1;
      std::vector<std::string> fired;
      TrialOutcome outcome;
      for (int k = 0; k < seeds && fired.empty() && r.runs < static_cast<std::uint64_t>(budget) && !out_of_time(); ++k) {
        if (k > 0) ++candidate.seed;
        ++r.runs;
        std::optional<TrialOutcome> ran = run_within_time(s, candidate);
        if (!ran) break;
        outcome = std::move(*ran);
        fired = fired_checkers(outcome, target);
      }
      if (fired.empty()) continue;
      size.pause_ms += outcome.placed_pause_ms;
      if (!size.no_larger_than(r.after) || size == r.after) continue;
      if (size.traffic) {
        size.clients = static_cast<int>(outcome.operations);  // what it sent
        trim_only(candidate, s, outcome.operations);
      }
      r.token = candidate;
      r.after = size;
      r.fired = fired_checkers(outcome, property);
      current = std::move(s);
      progress = true;
      break;  // candidates are recomputed from the smaller run
    }
  }
  return r;
}

}  // namespace locksim
