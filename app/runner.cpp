#include "app/runner.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>
#include <optional>
#include <set>
#include <stop_token>
#include <thread>

#include "app/exec/executor.hpp"
#include "app/fault_kind.hpp"
#include "app/metrics.hpp"
#include "app/exec/outcome_codec.hpp"
#include "app/trial.hpp"
#include "app/workload_kind.hpp"
#include "models/checkers/checker.hpp"
#include "models/deployment.hpp"
#include "models/strategies/script.hpp"
#include "reports/explain.hpp"

namespace locksim {

namespace strategies = models::strategies;

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

  // The first trial in which a finding fired, its findings in the order findings() tells
  // them; a later trial in which a Lua workload's own finding fired replaces one in which only
  // a built-in one did, since the workload's check is what its scenario asks about.
  void note_violation(std::uint64_t trial, const TrialOutcome& o) {
    reports::StrategyResult& r = result;
    const auto own = [](const std::vector<std::string>& fired) {
      return !fired.empty() && workload_finding(fired.front().substr(0, fired.front().find(' ')));
    };
    if (r.first_violation && own(r.first_violation->fired)) return;
    std::vector<std::pair<std::size_t, std::string>> ranked;
    for (const auto& [name, v] : o.counts)
      if (const MetricInfo& info = metric(name); info.finding && v > info.fires_above)
        ranked.emplace_back(finding_rank(name), fmt::format("{} {:g}", name, v));
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> fired;
    for (auto& [rank, text] : ranked) fired.push_back(std::move(text));
    if (!fired.empty() && (!r.first_violation || own(fired)))
      r.first_violation = reports::StrategyResult::FirstViolation{trial, std::move(fired), trial == 0 ? o.timeline : reports::Timeline{}};
  }

  void add(std::uint64_t trial, std::uint64_t seed, TrialOutcome&& o, double wall_s) {
    reports::StrategyResult& r = result;
    note_violation(trial, o);
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
  // `seeds_rows`: the scenario loads rows before each trial (listed or legacy), which the
  // table's counts include.
  reports::StrategyResult finish(bool seeds_rows) && {
    reports::StrategyResult& r = result;
    for (auto& [name, m] : r.counts) {
      m.mean = sums[name] / static_cast<double>(r.trials);
      m.share = reports::wilson(m.fired, r.trials);
      const MetricInfo& info = metric(name);
      const bool rate = info.aggregate == models::checkers::Aggregate::sum && info.kind == models::checkers::MetricKind::count &&
                        info.per_operation && !(info.counts_seeded_rows && seeds_rows);
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
  bool interrupted = false;  // RunControl::interrupt_at cut it short: no outcome
};

}  // namespace

RunControl run_deadline(double seconds, RunControl control) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                              std::chrono::duration<double>(seconds));
  control.stop = [deadline] { return std::chrono::steady_clock::now() >= deadline; };
  control.interrupt_at = deadline;
  return control;
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
  if (s.kind != nullptr) results.headline = s.kind->headline(s);  // (a scenario load_document made has one)
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
    run.folds[k].result.family = needs.redis ? "Redis" : needs.zookeeper || needs.etcd || needs.consul ? "ZooKeeper / etcd" : "database";
    run.folds[k].result.params = choice.params;
    if (s.kind != nullptr) s.kind->describe(choice, run.folds[k].result);
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
  const models::DatabaseSetup& database = s.deployment.database;
  const bool seeds_rows = !database.rows.empty() || database.legacy.has_value();
  for (StrategyFold& f : folds) results.strategies.push_back(std::move(f).finish(seeds_rows));

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

namespace {

// Several scenarios' runs as one queue of items: item `first_item[k] + i` is scenario k's item
// i, its trial i / strategies of strategy i % strategies.
struct Batch {
  std::vector<ScenarioRun> runs;
  std::vector<std::size_t> first_item;  // the queue's first item of each scenario
  std::size_t items = 0;

  explicit Batch(const std::vector<const Scenario*>& scenarios) {
    for (const Scenario* s : scenarios) {
      runs.push_back(start_run(*s));
      first_item.push_back(items);
      items += runs.back().items;
    }
  }

  // The scenario of `item`, and its item there.
  std::pair<std::size_t, std::size_t> locate(std::size_t item) const {
    const auto k = static_cast<std::size_t>(std::upper_bound(first_item.begin(), first_item.end(), item) - first_item.begin()) - 1;
    return std::pair{k, item - first_item[k]};
  }

  // What every rank must agree the work is.
  std::string fingerprint() const {
    std::string out = fmt::format("run_scenarios {}", items);
    for (const ScenarioRun& run : runs)
      out += fmt::format(" {}:{:016x}:{}:{}:{}", run.s->name, run.s->hash, run.s->seed, run.s->trials, run.s->strategies.size());
    return out;
  }
};

// The deadline reaching the trials under way: a watchdog raises a flag at it, which each
// trial's engine reads (InterruptTrials). Only the leader's: another rank's answer is an
// outcome, never a trial cut short.
class Watchdog {
 public:
  explicit Watchdog(const RunControl& control)
      : on_(control.interrupt_at && exec::leader()), interrupt_(on_ && std::chrono::steady_clock::now() >= *control.interrupt_at) {
    if (on_ && !interrupt_)
      thread_ = std::jthread([this, at = *control.interrupt_at](std::stop_token over) {
        std::mutex m;
        std::condition_variable_any cv;
        std::unique_lock lock(m);
        cv.wait_until(lock, over, at, [] { return false; });
        if (!over.stop_requested()) interrupt_ = true;
      });
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // What a trial reads (none: it runs to its end).
  std::atomic<bool>* flag() { return on_ ? &interrupt_ : nullptr; }
  // Stopped and joined: no trial runs any more.
  void stop() { thread_ = {}; }

 private:
  bool on_;
  std::atomic<bool> interrupt_;
  std::jthread thread_;
};

Finished run_item(const Batch& batch, std::size_t item, std::atomic<bool>* interrupt) {
  const auto [k, i] = batch.locate(item);
  const Scenario& s = *batch.runs[k].s;
  const std::size_t strategies = s.strategies.size();
  const auto trial = i / strategies;
  const auto trial_started = std::chrono::steady_clock::now();
  const InterruptTrials scope(interrupt);
  try {
    Finished f{run_trial(s, s.strategies[i % strategies], s.seed + trial, trial == 0 ? TraceKept::timeline : TraceKept::hash)};
    f.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - trial_started).count();
    return f;
  } catch (const sim::Interrupted&) {
    return Finished{.outcome = {}, .wall_s = 0, .interrupted = true};
  }
}

// Each strategy's first violating trial past the first, once more with its timeline.
void draw_first_violations(const std::vector<const Scenario*>& scenarios, std::vector<std::optional<reports::RunResults>>& finished) {
  for (std::size_t k = 0; k < finished.size(); ++k) {
    if (!finished[k]) continue;
    const Scenario& s = *scenarios[k];
    for (std::size_t i = 0; i < finished[k]->strategies.size(); ++i)
      if (auto& v = finished[k]->strategies[i].first_violation; v && v->trial > 0)
        v->timeline = run_trial(s, s.strategies[i], s.seed + v->trial, TraceKept::timeline).timeline;
  }
}

}  // namespace

std::vector<reports::RunResults> run_scenarios(const std::vector<const Scenario*>& scenarios, const RunControl& control,
                                               const std::function<void(std::size_t, const reports::RunResults&)>& scenario_done) {
  const auto started = std::chrono::steady_clock::now();
  Batch batch(scenarios);
  std::vector<std::optional<reports::RunResults>> finished(scenarios.size());
  std::optional<std::chrono::steady_clock::time_point> stopped_at;
  auto stop = [&]() {
    if (!control.stop()) return false;
    stopped_at = std::chrono::steady_clock::now();
    return true;
  };
  const int jobs = std::max(1, control.jobs);
  Watchdog watchdog(control);
  // With other ranks: the leader hands them items too, and folds their answers with its own
  // threads' results; another rank runs the items it is handed, and returns.
  if (!exec::leader()) {
    exec::serve(batch.fingerprint(), jobs, [&](std::uint64_t item, const std::string&) {
      const Finished f = run_item(batch, item, watchdog.flag());
      return fmt::format("{:a}\n", f.wall_s) + encode(f.outcome);
    });
    return std::vector<reports::RunResults>(scenarios.size());
  }
  exec::Ranks ranks(batch.fingerprint(), 4);  // a trial takes a millisecond or more
  const int threads = jobs + ranks.threads();
  OrderedWork<Finished> work(
      batch.items, control.window > 0 ? control.window : 4 * static_cast<std::size_t>(threads) + 64,
      [&](std::size_t item, Finished&& f) {
        const auto [k, i] = batch.locate(item);
        ScenarioRun& run = batch.runs[k];
        const std::size_t strategies = run.s->strategies.size();
        run.folds[i % strategies].add(i / strategies, run.s->seed, std::move(f.outcome), f.wall_s);
        if (control.progress) control.progress(item + 1, batch.items);
        if (++run.folded == run.items) {
          finished[k] = finish_run(std::move(run));
          if (scenario_done) scenario_done(k, *finished[k]);
        }
      },
      control.stop ? std::function<bool()>(stop) : std::function<bool()>());
  ranks.run<Finished>(
      work, jobs,
      [&](std::size_t item) -> std::optional<Finished> {
        Finished f = run_item(batch, item, watchdog.flag());
        if (f.interrupted) return std::nullopt;  // dropped: the results stop before it
        return f;
      },
      [](std::uint64_t) { return std::string(); },
      [](std::uint64_t, std::string&& answer) {
        const auto newline = answer.find('\n');
        return Finished{decode_outcome(answer.substr(newline + 1)), std::strtod(answer.c_str(), nullptr)};
      });
  watchdog.stop();
  if (control.draw_first_violation) draw_first_violations(scenarios, finished);
  std::vector<reports::RunResults> out;
  for (std::size_t k = 0; k < batch.runs.size(); ++k) {
    if (finished[k]) {
      out.push_back(std::move(*finished[k]));
      continue;
    }
    out.push_back(finish_run(std::move(batch.runs[k])));  // the deadline came before its last trial
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
