#include "app/search/explore.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "app/metrics.hpp"
#include "app/search/runs.hpp"
#include "app/search/swarm.hpp"

namespace locksim {

namespace search {

namespace {

// The runs of a random, pct or swarm search: run i takes seed s.seed + i (and, for pct, its
// own schedule), so the finding is the first seed that fires, whatever --jobs. Swarm: the
// seed's faults too; each run's token carries them as an override.
class SeedRuns {
 public:
  // PCT needs k (tie decisions in a run) and n (agents): counted in one run first, which gives
  // `pct_bound`.
  SeedRuns(const ExploreOptions& o, const Scenario& s, const StrategyChoice& choice, double& pct_bound)
      : o_(o), s_(s), choice_(choice) {
    if (o.mode == "pct") {
      run_trial(s, choice, s.seed, TraceKept::none, [&](const std::vector<std::uint64_t>& ready) {
        ++steps_;
        agents_.insert(ready.begin(), ready.end());
        return std::size_t{0};
      });
      const double n = static_cast<double>(std::max<std::size_t>(1, agents_.size()));
      pct_bound = 1.0 / (n * std::pow(static_cast<double>(std::max<std::uint64_t>(1, steps_)), o.depth - 1));
    }
    if (o.mode == "swarm") swarm_.emplace(o, s);
  }

  Token token_of(std::uint64_t i) {
    const std::uint64_t seed = s_.seed + i;
    Token token{LOCKSIM_ENGINE_VERSION, o_.scenario, s_.hash, o_.sets, choice_.shown(), seed, ""};
    if (o_.mode == "pct") token.schedule = Schedule::pct(o_.depth, steps_, agents_.size(), seed * 0x9e3779b97f4a7c15ull).text();
    if (swarm_)
      if (const auto run = swarm_->run(seed); !run->set.empty()) {
        token.sets.push_back(run->set);
        token.scenario_hash = run->scenario.hash;
      }
    return token;
  }

  // The checkers that fired in run i (the checkers only).
  std::vector<std::string> fired_in(std::uint64_t i) {
    if (swarm_) {
      const auto run = swarm_->run(s_.seed + i);
      return fired_checkers(run_token(run->scenario, strategy_named(run->scenario, o_.strategy), token_of(i), TraceKept::none),
                            o_.property);
    }
    return fired_checkers(run_token(s_, choice_, token_of(i), TraceKept::none), o_.property);
  }

  std::string fingerprint() const { return search_fingerprint(o_, s_, choice_, steps_, agents_.size()); }

  // Swarm: the faults on in the run of `seed`.
  std::vector<std::string> faults_on(std::uint64_t seed) { return swarm_ ? swarm_->run(seed)->on : std::vector<std::string>{}; }

 private:
  const ExploreOptions& o_;
  const Scenario& s_;
  const StrategyChoice& choice_;
  std::uint64_t steps_ = 0;
  std::set<std::uint64_t> agents_;
  std::optional<Swarm> swarm_;
};

// The random, pct and swarm searches; on a rank that does not lead, its share of the runs.
Finding explore_seeds(const ExploreOptions& o, const Scenario& s, const StrategyChoice& choice, Clock::time_point started) {
  Finding f;
  f.scenario = s.name;
  SeedRuns runs(o, s, choice, f.pct_bound);
  const std::string fingerprint = runs.fingerprint();
  if (!exec::leader()) {  // the runs the leader hands out
    exec::serve(fingerprint, o.jobs, [&](std::uint64_t i, const std::string&) { return nlohmann::json(runs.fired_in(i)).dump(); });
    return {};
  }
  std::mutex fired_mutex;
  std::map<std::uint64_t, std::vector<std::string>> fired;  // by run, the runs that fired
  const auto keep = [&](std::uint64_t i, std::vector<std::string>&& which) {
    if (which.empty()) return false;
    const std::lock_guard lock(fired_mutex);
    fired[i] = std::move(which);
    return true;
  };
  exec::Ranks ranks(fingerprint, kSearchAhead);
  const RemoteRuns remote{ranks, [](std::uint64_t) { return std::string(); }, [&](std::uint64_t i, std::string&& answer) {
                            return keep(i, nlohmann::json::parse(answer).get<std::vector<std::string>>());
                          }};
  const FirstHit hit = first_hit(
      o.jobs, static_cast<std::uint64_t>(o.budget), [&] { return seconds_since(started) > o.time_s; },
      [&](std::uint64_t i) { return keep(i, runs.fired_in(i)); }, remote);
  f.runs = hit.ran;
  if (hit.hit) {
    f.found = true;
    f.token = runs.token_of(*hit.hit);
    f.fired = fired.at(*hit.hit);
    f.faults_on = runs.faults_on(f.token.seed);
  }
  f.wall_s = seconds_since(started);
  return f;
}

}  // namespace

}  // namespace search

Finding explore(const ExploreOptions& o) {
  if (o.mode != "random" && o.mode != "pct" && o.mode != "dfs" && o.mode != "swarm")
    throw InputError(fmt::format("--mode {}: expected random, pct, dfs or swarm", quote_value(o.mode)));
  if (o.depth < 1 || o.depth > kMaxPctDepth) throw InputError(fmt::format("--depth {}: expected 1 to {}", o.depth, kMaxPctDepth));
  if (o.bound < 0 || o.bound > 10) throw InputError(fmt::format("--bound {}: expected 0 to 10", o.bound));
  if (o.jobs < 1 || o.jobs > 1024) throw InputError(fmt::format("--jobs {}: expected 1 to 1024", o.jobs));
  const Scenario s = load_scenario(scenario_path(o.scenario), o.sets, {o.strategy});
  // After the scenario: a Lua workload's findings are properties too.
  if (const auto& properties = findings();
      o.property != "any" && std::none_of(properties.begin(), properties.end(), [&](const MetricInfo* m) { return m->name == o.property; })) {
    std::string names;
    for (const MetricInfo* m : properties) names += (names.empty() ? "" : ", ") + m->name;
    throw InputError(fmt::format("--property {}: expected any or a finding: {} (docs/metrics.md)", quote_value(o.property), names));
  }
  const StrategyChoice& choice = strategy_named(s, o.strategy);
  const auto started = search::Clock::now();
  if (o.mode != "dfs") return search::explore_seeds(o, s, choice, started);
  Finding f = search::explore_dfs(o, s, choice, started);
  f.scenario = s.name;
  return f;
}

std::vector<std::string> swarm_faults(const ExploreOptions& o, std::uint64_t seed) {
  const Scenario s = load_scenario(scenario_path(o.scenario), o.sets, {o.strategy});
  search::Swarm swarm(o, s);
  return swarm.run(seed)->on;
}

double schedules_within(const std::vector<std::uint32_t>& options, int most) {
  // e[k]: the runs with exactly k deviations among the choices seen so far.
  std::vector<double> e(static_cast<std::size_t>(std::max(most, 0)) + 1, 0.0);
  e[0] = 1;
  for (const std::uint32_t n : options)
    for (std::size_t k = e.size() - 1; k >= 1; --k) e[k] += e[k - 1] * (n > 0 ? n - 1.0 : 0.0);
  double out = 0;
  for (const double x : e) out += x;
  return out;
}

}  // namespace locksim
