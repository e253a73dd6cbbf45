#include "app/explore.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <set>
#include <sstream>

#include "reports/report.hpp"

namespace locksim {

namespace {

// The trial's checkers, as the property asks: one metric, or any checker.
bool fires(const TrialOutcome& o, const std::string& property, const std::string& metric) {
  if (property != "any" && property != metric) return false;
  auto it = o.counts.find(metric);
  return it != o.counts.end() && it->second > 0;
}

// Tokens carry --set overrides, which may hold any character: hex-encode each.
std::string hex(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out += fmt::format("{:02x}", c);
  return out;
}
std::string unhex(const std::string& s) {
  if (s.size() % 2 != 0) throw InputError("");
  std::string out;
  for (std::size_t i = 0; i < s.size(); i += 2) out += static_cast<char>(std::stoi(s.substr(i, 2), nullptr, 16));
  return out;
}

}  // namespace

const StrategyChoice& strategy_named(const Scenario& s, const std::string& name) {
  for (const auto& c : s.strategies)
    if (c.shown() == name) return c;
  throw InputError(fmt::format("--strategy {}: expected a strategy this scenario runs", name));
}

std::vector<std::string> fired_checkers(const TrialOutcome& o, const std::string& property) {
  std::vector<std::string> out;
  for (const auto& metric : reports::checker_metrics())
    if (fires(o, property, metric)) out.push_back(fmt::format("{} {:g}", metric, o.counts.at(metric)));
  return out;
}

std::string Token::text() const {
  std::string sets_part;
  for (const auto& s : sets) sets_part += (sets_part.empty() ? "" : ",") + hex(s);
  return fmt::format("locksim:{}:{}:{:016x}:{}:{}:{}:{}", engine, scenario, scenario_hash, strategy, seed, sets_part, schedule);
}

sim::TieBreak pct_schedule(int depth, std::uint64_t steps, std::uint64_t seed) {
  struct State {
    sim::Xoshiro256 rng;
    int depth;
    std::vector<std::uint64_t> change_points;  // the steps after which the running agent drops
    std::map<std::uint64_t, double> priority;  // by agent; initial ones >= depth
    std::uint64_t step = 0;
  };
  auto state = std::make_shared<State>(State{sim::Xoshiro256(seed), depth, {}, {}, 0});
  for (int i = 1; i < depth && steps > 0; ++i) state->change_points.push_back(1 + state->rng.next() % steps);
  return [state](const std::vector<std::uint64_t>& agents) {
    State& st = *state;
    ++st.step;
    std::size_t pick = 0;
    for (std::size_t i = 0; i < agents.size(); ++i) {
      auto [it, fresh] = st.priority.try_emplace(agents[i], 0.0);
      if (fresh) it->second = st.depth + static_cast<double>(st.rng.next() >> 11) * 0x1.0p-53;  // a random rank
      if (it->second > st.priority.at(agents[pick])) pick = i;
    }
    for (std::size_t j = 0; j < st.change_points.size(); ++j)
      if (st.change_points[j] == st.step) st.priority[agents[pick]] = static_cast<double>(st.depth) - 1.0 - static_cast<double>(j);
    return pick;
  };
}

namespace {

bool is_dfs(const std::string& schedule) { return schedule == "dfs" || schedule.rfind("dfs.", 0) == 0; }

}  // namespace

std::string dfs_text(const Deviations& d) {
  std::string out = "dfs";
  for (const auto& [i, v] : d) out += fmt::format(".{}={}", i, v);
  return out;
}

Deviations parse_dfs(const std::string& schedule) {
  Deviations d;
  std::stringstream in(schedule.substr(3));
  std::string part;
  std::getline(in, part, '.');  // the empty piece before the first dot
  while (std::getline(in, part, '.')) {
    unsigned long long i = 0, v = 0;
    char end = 0;
    if (std::sscanf(part.c_str(), "%llu=%llu%c", &i, &v, &end) != 2 || v == 0)
      throw InputError(fmt::format("{}: expected a schedule as dfs.<choice>=<option>... with options >= 1", schedule));
    d[i] = v;
  }
  return d;
}

sim::Chooser chooser_of(const Token& t) {
  if (!is_dfs(t.schedule)) return {};
  struct State {
    Deviations deviations;
    std::uint64_t asked = 0;
  };
  auto state = std::make_shared<State>(State{parse_dfs(t.schedule), 0});
  return [state](const std::string&, std::uint64_t n) -> std::uint64_t {
    const auto it = state->deviations.find(state->asked++);
    // An option beyond this run's choice (a token shrunk on a smaller scenario): the default.
    return it == state->deviations.end() || it->second >= n ? 0 : it->second;
  };
}

TrialOutcome run_token(const Scenario& s, const StrategyChoice& choice, const Token& t, TraceKept kept) {
  return run_trial(s, choice, t.seed, kept, schedule_of(t), chooser_of(t));
}

sim::TieBreak schedule_of(const Token& t) {
  if (t.schedule.empty()) return {};
  if (is_dfs(t.schedule)) {
    parse_dfs(t.schedule);  // only to refuse a malformed one
    return {};
  }
  int depth = 0;
  unsigned long long steps = 0, agents = 0, seed = 0;
  if (std::sscanf(t.schedule.c_str(), "pct.%d.%llu.%llu.%llu", &depth, &steps, &agents, &seed) != 4 || depth < 1)
    throw InputError(fmt::format("{}: expected a schedule as pct.<d>.<k>.<n>.<seed> or dfs[.<choice>=<option>...]", t.schedule));
  return pct_schedule(depth, steps, seed);
}

Token parse_token(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ':');) parts.push_back(part);
  if (!text.empty() && text.back() == ':') parts.push_back("");
  const auto fail = [&] {
    throw InputError(fmt::format("{}: expected a replay token as `locksim explore` prints it "
                                 "(locksim:<engine>:<scenario>:<hash>:<strategy>:<seed>:<overrides>:<schedule>)",
                                 text));
  };
  if (parts.size() == 7) parts.push_back("");  // a token without a schedule
  if (parts.size() != 8 || parts[0] != "locksim") fail();
  Token t;
  try {
    t.engine = std::stoi(parts[1]);
    t.scenario = parts[2];
    t.scenario_hash = std::stoull(parts[3], nullptr, 16);
    t.strategy = parts[4];
    t.seed = std::stoull(parts[5]);
    std::stringstream sets(parts[6]);
    for (std::string one; std::getline(sets, one, ',');) t.sets.push_back(unhex(one));
    t.schedule = parts[7];
  } catch (const std::exception&) {
    fail();
  }
  return t;
}

namespace {

using Clock = std::chrono::steady_clock;  // the wall budget only

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Depth-first over the tree of enumerable choices, by re-execution: each run follows
// `prefix`, then takes option 0 at every later choice; the next run deviates at the
// deepest choice that still has an untried option and whose deviation keeps at most
// `bound` choices off their default. The runs are distinct, and when none is left the
// bounded space is covered.
Finding explore_dfs(const ExploreOptions& o, const Scenario& s, const StrategyChoice& choice, Clock::time_point started) {
  struct Point {
    std::uint64_t options, taken;
  };
  Finding f;
  std::vector<std::uint64_t> prefix;
  std::vector<Point> trail;
  const sim::Chooser chooser = [&](const std::string& stream, std::uint64_t n) -> std::uint64_t {
    const std::size_t i = trail.size();
    const std::uint64_t v = i < prefix.size() ? prefix[i] : 0;
    if (v >= n)
      throw std::logic_error(fmt::format("dfs: choice #{} ({}) offers {} options where an earlier run had more: the "
                                         "run is not a function of its choices",
                                         i, stream, n));
    trail.push_back({n, v});
    return v;
  };
  std::vector<int> deviating_before;
  while (f.runs < static_cast<std::uint64_t>(o.budget) && seconds_since(started) <= o.time_s) {
    trail.clear();
    const TrialOutcome outcome = run_trial(s, choice, s.seed, TraceKept::none, {}, chooser);
    ++f.runs;
    f.events += outcome.events;
    f.choice_points = std::max<std::uint64_t>(f.choice_points, trail.size());
    f.fired = fired_checkers(outcome, o.property);
    if (!f.fired.empty()) {
      Deviations d;
      for (std::size_t i = 0; i < trail.size(); ++i)
        if (trail[i].taken != 0) d[i] = trail[i].taken;
      f.found = true;
      f.token = Token{LOCKSIM_ENGINE_VERSION, o.scenario, s.hash, o.sets, choice.shown(), s.seed, dfs_text(d)};
      break;
    }
    deviating_before.assign(trail.size() + 1, 0);
    for (std::size_t i = 0; i < trail.size(); ++i) deviating_before[i + 1] = deviating_before[i] + (trail[i].taken != 0 ? 1 : 0);
    std::size_t j = trail.size();
    while (j > 0 && !(trail[j - 1].taken + 1 < trail[j - 1].options && deviating_before[j - 1] + 1 <= o.bound)) --j;
    if (j == 0) {
      f.exhausted = true;
      break;
    }
    prefix.clear();
    for (std::size_t i = 0; i + 1 < j; ++i) prefix.push_back(trail[i].taken);
    prefix.push_back(trail[j - 1].taken + 1);
  }
  f.wall_s = seconds_since(started);
  return f;
}

}  // namespace

Finding explore(const ExploreOptions& o) {
  if (o.mode != "random" && o.mode != "pct" && o.mode != "dfs")
    throw InputError(fmt::format("--mode {}: expected random, pct or dfs", o.mode));
  if (o.depth < 1 || o.depth > 10) throw InputError(fmt::format("--depth {}: expected 1 to 10", o.depth));
  if (o.bound < 0 || o.bound > 10) throw InputError(fmt::format("--bound {}: expected 0 to 10", o.bound));
  if (o.property != "any" &&
      std::find(reports::checker_metrics().begin(), reports::checker_metrics().end(), o.property) == reports::checker_metrics().end())
    throw InputError(fmt::format("--property {}: expected any or a checker: duplicate_rows, overlapping_holders, "
                                 "lease_expiry_violations, stale_writes_accepted, wrong_unlocks, stuck_locks, lost_updates, ...",
                                 o.property));
  const Scenario s = load_scenario(scenario_path(o.scenario), o.sets);
  const StrategyChoice& choice = strategy_named(s, o.strategy);
  const auto started = Clock::now();
  if (o.mode == "dfs") return explore_dfs(o, s, choice, started);
  Finding f;
  // PCT needs k (tie decisions in a run) and n (agents): counted in one run first.
  std::uint64_t steps = 0;
  std::set<std::uint64_t> agents;
  if (o.mode == "pct") {
    run_trial(s, choice, s.seed, TraceKept::none, [&](const std::vector<std::uint64_t>& ready) {
      ++steps;
      agents.insert(ready.begin(), ready.end());
      return std::size_t{0};
    });
    const double n = static_cast<double>(std::max<std::size_t>(1, agents.size()));
    f.pct_bound = 1.0 / (n * std::pow(static_cast<double>(std::max<std::uint64_t>(1, steps)), o.depth - 1));
  }
  for (std::uint64_t seed = s.seed; f.runs < static_cast<std::uint64_t>(o.budget); ++seed) {
    f.wall_s = seconds_since(started);
    if (f.wall_s > o.time_s) break;
    Token token{LOCKSIM_ENGINE_VERSION, o.scenario, s.hash, o.sets, choice.shown(), seed, ""};
    if (o.mode == "pct") token.schedule = fmt::format("pct.{}.{}.{}.{}", o.depth, steps, agents.size(), seed * 0x9e3779b97f4a7c15ull);
    const TrialOutcome outcome = run_token(s, choice, token, TraceKept::none);  // the checkers only
    ++f.runs;
    f.fired = fired_checkers(outcome, o.property);
    if (!f.fired.empty()) {
      f.found = true;
      f.token = token;
      break;
    }
  }
  f.wall_s = seconds_since(started);
  return f;
}

Replay replay(const Token& t) {
  if (t.engine != LOCKSIM_ENGINE_VERSION)
    throw InputError(fmt::format("the token was made by engine version {}, this is version {}: its run cannot be "
                                 "reproduced here",
                                 t.engine, LOCKSIM_ENGINE_VERSION));
  Scenario s = load_scenario(scenario_path(t.scenario), t.sets);
  if (s.hash != t.scenario_hash)
    throw InputError(fmt::format("{}: the scenario has changed since the token was made (hash {:016x}, the token says "
                                 "{:016x}): its run cannot be reproduced",
                                 s.file, s.hash, t.scenario_hash));
  Replay r{s, strategy_named(s, t.strategy), {}, {}};
  r.outcome = run_token(s, r.strategy, t, TraceKept::timeline);
  r.fired = fired_checkers(r.outcome, "any");
  return r;
}

std::vector<std::string> narrate(const reports::Timeline& t) {
  std::vector<std::pair<double, std::string>> lines;
  for (const auto& b : t.bands)
    lines.emplace_back(b.from_s, b.kind == "paused" ? fmt::format("{} paused {:.3f} s (a stop-the-world pause)", b.node, b.to_s - b.from_s)
                                                    : fmt::format("{} crashed; back at t={:.3f} s", b.node, b.to_s));
  for (const auto& b : t.bars) {
    lines.emplace_back(b.from_s, fmt::format("{} acquired it", b.row));
    if (b.lease_to_s >= 0 && b.lease_to_s < b.to_s)  // only a lease that ran out while its holder still held on
      lines.emplace_back(b.lease_to_s, fmt::format("{}: its lease ran out at the lock service", b.row));
    lines.emplace_back(b.to_s, fmt::format("{} stopped believing it holds it", b.row));
  }
  for (const auto& m : t.inserts) lines.emplace_back(m.at_s, fmt::format("inserted {} (a duplicated key)", m.label));
  std::stable_sort(lines.begin(), lines.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [at, text] : lines) out.push_back(fmt::format("t={:.3f} s  {}", at, text));
  return out;
}

}  // namespace locksim
