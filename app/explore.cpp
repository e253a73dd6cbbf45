#include "app/explore.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <sstream>

#include "reports/report.hpp"

namespace locksim {

namespace {

// The trial's checkers, as the property asks: one metric, or any checker.
bool fires(const TrialOutcome& o, const std::string& property, const std::string& metric) {
  auto it = o.counts.find(metric);
  return it != o.counts.end() && it->second > 0 && (property == "any" || property == metric);
}

const StrategyChoice& choose(const Scenario& s, const std::string& name) {
  for (const auto& c : s.strategies)
    if (c.shown() == name) return c;
  throw InputError(fmt::format("--strategy {}: expected a strategy this scenario runs", name));
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

std::vector<std::string> fired_checkers(const TrialOutcome& o, const std::string& property) {
  std::vector<std::string> out;
  for (const auto& metric : reports::checker_metrics())
    if (fires(o, property, metric)) out.push_back(fmt::format("{} {:g}", metric, o.counts.at(metric)));
  return out;
}

std::string Token::text() const {
  std::string sets_part;
  for (const auto& s : sets) sets_part += (sets_part.empty() ? "" : ",") + hex(s);
  return fmt::format("locksim:{}:{}:{:016x}:{}:{}:{}", engine, scenario, scenario_hash, strategy, seed, sets_part);
}

Token parse_token(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ':');) parts.push_back(part);
  if (!text.empty() && text.back() == ':') parts.push_back("");
  const auto fail = [&] {
    throw InputError(fmt::format("{}: expected a replay token as `locksim explore` prints it "
                                 "(locksim:<engine>:<scenario>:<hash>:<strategy>:<seed>:<overrides>)",
                                 text));
  };
  if (parts.size() != 7 || parts[0] != "locksim") fail();
  Token t;
  try {
    t.engine = std::stoi(parts[1]);
    t.scenario = parts[2];
    t.scenario_hash = std::stoull(parts[3], nullptr, 16);
    t.strategy = parts[4];
    t.seed = std::stoull(parts[5]);
    std::stringstream sets(parts[6]);
    for (std::string one; std::getline(sets, one, ',');) t.sets.push_back(unhex(one));
  } catch (const std::exception&) {
    fail();
  }
  return t;
}

Finding explore(const ExploreOptions& o) {
  if (o.mode != "random")
    throw InputError(fmt::format("--mode {}: expected random (pct and dfs are not built yet)", o.mode));
  if (o.property != "any" &&
      std::find(reports::checker_metrics().begin(), reports::checker_metrics().end(), o.property) == reports::checker_metrics().end())
    throw InputError(fmt::format("--property {}: expected any or a checker: duplicate_rows, overlapping_holders, "
                                 "lease_expiry_violations, stale_writes_accepted, wrong_unlocks, stuck_locks, lost_updates, ...",
                                 o.property));
  const Scenario s = load_scenario(scenario_path(o.scenario), o.sets);
  const StrategyChoice& choice = choose(s, o.strategy);
  const auto started = std::chrono::steady_clock::now();  // the wall budget only
  Finding f;
  for (std::uint64_t seed = s.seed; f.runs < static_cast<std::uint64_t>(o.budget); ++seed) {
    f.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (f.wall_s > o.time_s) break;
    const TrialOutcome outcome = run_trial(s, choice, seed);
    ++f.runs;
    f.fired = fired_checkers(outcome, o.property);
    if (!f.fired.empty()) {
      f.found = true;
      f.token = {LOCKSIM_ENGINE_VERSION, o.scenario, s.hash, o.sets, choice.shown(), seed};
      break;
    }
  }
  f.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
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
  Replay r{s, choose(s, t.strategy), {}, {}};
  r.outcome = run_trial(s, r.strategy, t.seed, true);
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
