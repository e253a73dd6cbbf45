#include "app/search/replay.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "app/metrics.hpp"

namespace locksim {

namespace {

// The trial's findings, as the property asks: one metric, or any finding.
bool fired(const TrialOutcome& o, const std::string& property, const MetricInfo& finding) {
  if (property != "any" && property != finding.name) return false;
  auto it = o.counts.find(finding.name);
  return it != o.counts.end() && it->second > finding.fires_above;
}

}  // namespace

const StrategyChoice& strategy_named(const Scenario& s, const std::string& name) {
  for (const auto& c : s.strategies)
    if (c.shown() == name) return c;
  throw InputError(fmt::format("--strategy {}: expected a strategy this scenario runs", quote_value(name)));
}

std::vector<std::string> fired_checkers(const TrialOutcome& o, const std::string& property) {
  std::vector<std::string> out;
  for (const MetricInfo* finding : findings())
    if (fired(o, property, *finding)) out.push_back(fmt::format("{} {:g}", finding->name, o.counts.at(finding->name)));
  return out;
}
TrialOutcome run_token(const Scenario& s, const StrategyChoice& choice, const Token& t, TraceKept kept) {
  return run_trial(s, choice, t.seed, kept, schedule_of(t), chooser_of(t));
}
Replay replay(const Token& t) {
  if (t.engine != LOCKSIM_ENGINE_VERSION)
    throw InputError(fmt::format("the token was made by engine version {}, this is version {}: its run cannot be "
                                 "reproduced here",
                                 t.engine, LOCKSIM_ENGINE_VERSION));
  // The token names the scenario, its overrides and the strategy: a mistake there is the token's.
  const auto of_token = [](const InputError& e) { return InputError(std::string("replay token: ") + e.what()); };
  Scenario s;
  try {
    s = load_scenario(scenario_path(t.scenario), t.sets, {t.strategy});
    strategy_named(s, t.strategy);
  } catch (const InputError& e) {
    throw of_token(e);
  }
  if (s.hash != t.scenario_hash)
    throw InputError(fmt::format("{}: the scenario{} has changed since the token was made (hash {:016x}, the token says "
                                 "{:016x}): its run cannot be reproduced",
                                 shown(s.file),
                                 std::any_of(s.strategies.begin(), s.strategies.end(), [](const auto& c) { return c.script != nullptr; })
                                     ? " or a script it runs"
                                     : "",
                                 s.hash, t.scenario_hash));
  Replay r{s, strategy_named(s, t.strategy), {}, {}, {}};
  r.outcome = run_trial(s, r.strategy, t.seed, TraceKept::timeline, schedule_of(t), chooser_of(t, &r.asked));
  r.outcome.timeline.schedule = describe_schedule(t.schedule, &r.asked, &r.outcome.timeline);
  r.fired = fired_checkers(r.outcome, "any");
  return r;
}

}  // namespace locksim
