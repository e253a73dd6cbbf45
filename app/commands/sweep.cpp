// `locksim sweep`: a scenario over a grid of parameter values, a table and a plot of one metric.

#include <fmt/format.h>

#include <functional>
#include <memory>
#include <optional>

#include "app/commands/commands.hpp"
#include "app/commands/options.hpp"
#include "app/exec/executor.hpp"
#include "app/runner.hpp"
#include "app/sweep.hpp"
#include "reports/sweep_report.hpp"

namespace locksim::commands {

namespace {

struct SweepCommand {
  std::string scenario;
  std::vector<std::string> varies, strategies;
  ScenarioInputs inputs;
  std::string metric = "duplicate_rows";
  std::optional<int> trials;
  std::optional<std::uint64_t> seed;
  int jobs = default_jobs();
  bool resume = false;
  std::optional<double> time_s;  // wall seconds at most, over the whole sweep
};

int sweep(const SweepCommand& c) {
  const std::vector<std::string> sets = c.inputs.overrides();
  SweepOptions o{c.scenario, sets, c.strategies, {}, c.metric, c.trials, c.seed, c.jobs, c.resume, ""};
  for (const auto& v : c.varies) o.varies.push_back(parse_vary(v));
  if (c.time_s) {
    const RunControl deadline = run_deadline(*c.time_s, {});
    o.stop = deadline.stop;
    o.interrupt_at = deadline.interrupt_at;
  }
  const Scenario s = load_scenario(scenario_path(c.scenario), sets, c.strategies);
  running_file = s.file;
  o.folder = "reports/out/" + s.name + "/" + sweep_folder_name(o.varies, c.metric);
  reports::SweepResults results;
  {
    Progress progress("points");
    results = run_sweep(o, std::ref(progress));
  }
  if (!exec::leader()) return 0;  // its trials went to the leader, which reports
  fmt::print("sweep: {} ({}), metric {}\n\n{}", s.name, s.file, c.metric, reports::sweep_table(results));
  const std::string note = reports::write_sweep_report(results, o.folder);
  fmt::print("\nwritten: {}/sweep.md, report.html, points.json, sweep.dat, sweep.gp{}\n", o.folder, note.empty() ? ", sweep.png, sweep.svg" : "");
  if (!note.empty()) fmt::print("{}\n", note);
  return 0;
}

}  // namespace

Command sweep_command(CLI::App& app) {
  auto c = std::make_shared<SweepCommand>();
  auto* cli = app.add_subcommand("sweep", "run a scenario over a grid of parameter values: a table and a plot of one metric");
  add_scenario(*cli, c->scenario);
  cli->add_option("--vary", c->varies, "path=from:to:step, path=from:to:logN or path=a,b,c, e.g. redlock.ttl_ms=1000:30000:log6 (once or twice)")
      ->required();
  cli->add_option("--strategy", c->strategies, "only these strategies (repeatable)");
  cli->add_option("--metric", c->metric, "the metric to plot (default duplicate_rows)");
  add_trials_and_seed(*cli, c->trials, c->seed, "trials per strategy and point", "seed of the first trial at each point");
  add_inputs(*cli, c->inputs, "override a scenario value: path=value", kStrategyFileHelp);
  add_jobs(*cli, c->jobs, "threads running trials (default: every core)");
  cli->add_flag("--resume", c->resume, "keep the points an interrupted sweep already wrote");
  add_time(*cli, c->time_s, "wall seconds at most for the whole sweep: points not reached are not run");
  return {cli, [c] { return sweep(*c); }, true};
}

}  // namespace locksim::commands
