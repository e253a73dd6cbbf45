// The `locksim` command.

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>

#include "app/demo.hpp"
#include "app/runner.hpp"
#include "app/scenario.hpp"
#include "reports/report.hpp"

namespace {

int list() {
  const char* shown = "";
  for (const auto& e : models::strategies::registry()) {
    if (std::string(shown) != e.workload()) fmt::print("strategies of the {} workload:\n", shown = e.workload());
    fmt::print("  {:<30} {}\n", e.info.name, e.info.description);
    fmt::print("  {:<30} source: {}; risks: {}\n", "", e.info.source, e.info.risks);
    for (const auto& p : e.info.params) fmt::print("  {:<30} --set param {} = {:g} ({})\n", "", p.name, p.value, p.meaning);
  }
  fmt::print("scenarios:\n");
  for (const auto& file : locksim::catalogue()) {
    const auto s = locksim::load_scenario(file);
    fmt::print("  {:<30} {}\n", s.name, s.description);
  }
  return 0;
}

struct RunOptions {
  std::string scenario;
  std::vector<std::string> strategies;
  std::vector<std::string> sets;
  std::optional<int> trials;
  std::optional<std::uint64_t> seed;
  bool json = false;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
};

int run(const RunOptions& o) {
  locksim::Scenario s = locksim::load_scenario(locksim::scenario_path(o.scenario), o.sets);
  if (o.trials) s.trials = *o.trials;
  if (o.seed) s.seed = *o.seed;
  if (!o.strategies.empty()) {
    std::vector<locksim::StrategyChoice> chosen;
    for (const auto& name : o.strategies) {
      auto it = std::find_if(s.strategies.begin(), s.strategies.end(), [&](const auto& c) { return c.shown() == name; });
      if (it != s.strategies.end()) {
        chosen.push_back(*it);
      } else if (const auto* entry = models::strategies::find(name)) {
        locksim::StrategyChoice c{name, {}};
        for (const auto& p : entry->info.params) c.params[p.name] = p.value;
        chosen.push_back(c);
      } else {
        throw locksim::InputError("--strategy " + name + ": expected a strategy name (see `locksim list`) or a label of the scenario");
      }
    }
    s.strategies = chosen;
  }
  if (!o.json) {
    fmt::print("scenario: {} ({})\n{}\n", s.name, s.file, s.description);
    fmt::print("seed: {}; trials per strategy: {} (seeds {}..{}); scenario hash {:016x}\n", s.seed, s.trials, s.seed,
               s.seed + static_cast<std::uint64_t>(s.trials) - 1, s.hash);
    fmt::print("configuration: {}\n\n", s.resolved);
  }
  const auto results = locksim::run_scenario(s, o.jobs);
  const std::string json = locksim::reports::to_json(results);
  const auto report = locksim::reports::write_report(results, "reports/out/" + s.name);
  if (o.json) {
    fmt::print("{}", json);
  } else {
    fmt::print("{}", locksim::reports::table(results));
    std::string first_duplicates;  // one per strategy; results.json has more
    for (const auto& st : results.strategies)
      if (!st.examples.empty()) first_duplicates += fmt::format("  {}: {}\n", st.name, st.examples.front());
    if (!first_duplicates.empty()) fmt::print("\nfirst duplicate of each strategy that made one:\n{}", first_duplicates);
    if (!s.lesson.empty()) fmt::print("\nlesson: {}\n", s.lesson);
    fmt::print("\nwritten: {}/report.md (and {} more files)\n", report.folder, report.written.size() - 1);
    if (!report.note.empty()) fmt::print("{}\n", report.note);
  }
  int failed = 0;
  for (const auto& e : results.expectations) {
    if (e.holds) continue;
    ++failed;
    fmt::print(stderr, "expectation not met: {} (measured {})\n", e.text,
               e.measured_at_all ? fmt::format("{:g}", e.measured) : std::string("nothing"));
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"locksim: a deterministic simulator of the ways services stop duplicate inserts"};
  app.require_subcommand(1);

  locksim::DemoOptions demo;
  auto* demo_cmd = app.add_subcommand("demo", "run the built-in demonstration: retries racing check-then-insert");
  demo_cmd->add_option("--seed", demo.seed, "seed of the first trial (trial i uses seed + i)");
  demo_cmd->add_option("--trials", demo.trials, "number of trials")->check(CLI::Range(1, 1'000'000));
  demo_cmd->add_option("--clients", demo.clients, "clients binding at start-up")->check(CLI::Range(1, 100'000));
  demo_cmd->add_option("--workers", demo.workers, "server worker threads")->check(CLI::Range(1, 10'000));

  auto* list_cmd = app.add_subcommand("list", "list the strategies and the scenario catalogue");
  RunOptions run_options;
  auto* run_cmd = app.add_subcommand("run", "run a scenario: every strategy it names, many trials, a comparison table");
  run_cmd->add_option("scenario", run_options.scenario, "a scenario file, or a name from scenarios/")->required();
  run_cmd->add_option("--strategy", run_options.strategies, "run only these strategies (repeatable)");
  run_cmd->add_option("--trials", run_options.trials, "trials per strategy")->check(CLI::Range(1, 10'000'000));
  run_cmd->add_option("--seed", run_options.seed, "seed of the first trial (trial i uses seed + i)");
  run_cmd->add_option("--set", run_options.sets, "override a scenario value: path=value, e.g. clients.count=50");
  run_cmd->add_flag("--json", run_options.json, "print results.json instead of the table");
  run_cmd->add_option("--jobs", run_options.jobs, "threads running trials (default: every core); results do not depend on it")
      ->check(CLI::Range(1, 1024));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "locksim: " << e.what() << " (see locksim --help)\n";
    return 2;
  }

  try {
    if (*list_cmd) return list();
    if (*run_cmd) return run(run_options);
  } catch (const locksim::InputError& e) {
    std::cerr << "locksim: " << e.what() << "\n";
    return 2;
  }

  if (*demo_cmd) {
    fmt::print("seed: {}\ntrials: {} (seeds {}..{}), {} clients, {} workers, client timeout 300 ms, 3 attempts\n",
               demo.seed, demo.trials, demo.seed, demo.seed + static_cast<std::uint64_t>(demo.trials) - 1,
               demo.clients, demo.workers);
    const auto r = locksim::run_demo(demo);
    fmt::print("strategy: check-then-insert without a unique index\n");
    fmt::print("logical operations: {}, requests handled by the server: {} ({:.2f} per operation)\n",
               r.logical_operations, r.requests_handled,
               static_cast<double>(r.requests_handled) / static_cast<double>(r.logical_operations));
    fmt::print("duplicate rows: {} ({:.1f}% of keys); trials with a duplicate: {} of {}\n", r.duplicate_rows,
               100.0 * static_cast<double>(r.duplicate_rows) / static_cast<double>(r.logical_operations),
               r.trials_with_duplicates, r.trials);
    fmt::print("events: {}; trace hash of the first trial: {:016x}\n", r.events, r.first_trace_hash);
  }
  return 0;
}
