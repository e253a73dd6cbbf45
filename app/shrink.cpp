// Shrinking a violating run: the explorer's finding, made as small as it can be while the
// same property still fires. Every candidate is the token with one more `--set` override
// (or a smaller schedule), so the result replays like any token; a candidate is kept only
// if it is no larger than the current run in every measure of RunSize.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <tuple>

#include "app/explore.hpp"
#include "app/fault_kind.hpp"

namespace locksim {

using nlohmann::json;

bool RunSize::no_larger_than(const RunSize& o) const {
  return clients <= o.clients && operations <= o.operations && faults <= o.faults && pause_ms <= o.pause_ms &&
         choices <= o.choices && options <= o.options;
}

std::string RunSize::text() const {
  return fmt::format("{} client(s) x {} operation(s), {} fault(s), {:g} ms of scheduled pauses, {} deviating choice(s)",
                     clients, operations, faults, pause_ms, choices);
}

namespace {

constexpr int kSeedsPerCandidate = 4;

RunSize size_of(const Scenario& s, const Token& t) {
  RunSize z;
  z.clients = s.deployment.clients.clients;
  z.operations = s.deployment.clients.operations_per_client;
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

// The candidates one step smaller than `t`, in the order they are tried: whole parts of
// the run first (clients, operations, faults), then shorter pauses, then simpler choices.
std::vector<Token> candidates(const Token& t, const json& doc) {
  std::vector<Token> out;
  // Clients are the account-bind workload's: the others have none to take away.
  const json workload = doc.value("workload", json::object());
  const bool has_clients = !workload.is_object() || workload.value("kind", "account-bind") == "account-bind";
  const json clients = doc.value("clients", json::object());
  // Listed times: each one left out in turn.
  const auto fewer_times = [&](const json& times, const std::string& path) {
    for (std::size_t i = 0; times.is_array() && times.size() > 1 && i < times.size(); ++i) {
      json fewer = times;
      fewer.erase(i);
      out.push_back(with_set(t, path, fewer));
    }
  };
  if (has_clients && clients.is_object() && clients.contains("traffic")) {
    // The population's traffic: fewer arrivals.
    const json traffic = clients.at("traffic");
    if (traffic.is_object() && traffic.contains("operations") && traffic.at("operations").is_number_integer())
      for (int ops : smaller(traffic.at("operations").get<int>())) out.push_back(with_set(t, "clients.traffic.operations", ops));
    if (traffic.is_object() && traffic.contains("times_ms")) fewer_times(traffic.at("times_ms"), "clients.traffic.times_ms");
  } else if (has_clients) {
    for (int c : smaller(clients.value("count", 10))) out.push_back(with_set(t, "clients.count", c));
    const json arrival = clients.value("arrival", json::object());
    if (arrival.value("kind", "") == "listed" && arrival.contains("times_ms")) {
      fewer_times(arrival.at("times_ms"), "clients.arrival.times_ms");
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

std::string first_metric(const std::vector<std::string>& fired) {
  return fired.empty() ? std::string() : fired.front().substr(0, fired.front().find(' '));
}

}  // namespace

RunSize size_of(const Token& t) { return size_of(load_scenario(scenario_path(t.scenario), t.sets, {t.strategy}), t); }

Shrunk shrink(const Token& found, const std::string& property, int budget) {
  Shrunk r{found, {}, {}, 0, {}};
  Scenario current = load_scenario(scenario_path(found.scenario), found.sets, {found.strategy});
  r.before = r.after = size_of(current, found);
  r.fired = fired_checkers(run_token(current, strategy_named(current, found.strategy), found, TraceKept::none), property);
  // "any" shrinks towards the checker that fired first, so the result shows the same failure.
  const std::string target = property == "any" ? first_metric(r.fired) : property;
  if (target.empty()) return r;  // the token does not violate: nothing to shrink

  // Passes over the candidates until none is kept (each kept one is strictly smaller in
  // some measure and no larger in any, so this ends) or the budget is spent.
  for (bool progress = true; progress && r.runs < static_cast<std::uint64_t>(budget);) {
    progress = false;
    for (Token candidate : candidates(r.token, json::parse(current.resolved))) {
      if (r.runs >= static_cast<std::uint64_t>(budget)) break;
      Scenario s;
      try {
        s = load_scenario(scenario_path(candidate.scenario), candidate.sets, {candidate.strategy});
      } catch (const InputError&) {
        continue;  // a candidate the scenario rules refuse (a fault naming a node now gone, say)
      }
      candidate.scenario_hash = s.hash;
      const RunSize size = size_of(s, candidate);
      if (!size.no_larger_than(r.after) || size == r.after) continue;
      // A random-mode run is its seed: a smaller scenario may need another seed to fail the
      // same way, so a few are tried. A schedule's run is kept on its own seed.
      const int seeds = candidate.schedule.empty() ? kSeedsPerCandidate : 1;
      std::vector<std::string> fired;
      TrialOutcome outcome;
      for (int k = 0; k < seeds && fired.empty() && r.runs < static_cast<std::uint64_t>(budget); ++k) {
        if (k > 0) ++candidate.seed;
        ++r.runs;
        outcome = run_token(s, strategy_named(s, candidate.strategy), candidate, TraceKept::none);
        fired = fired_checkers(outcome, target);
      }
      if (fired.empty()) continue;
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
