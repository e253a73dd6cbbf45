// `locksim run`: every strategy a scenario names, many trials, a comparison table.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <set>

#include "app/commands/commands.hpp"
#include "app/commands/options.hpp"
#include "app/exec/executor.hpp"
#include "app/fault_kind.hpp"
#include "app/metrics.hpp"
#include "app/runner.hpp"
#include "reports/report.hpp"

namespace locksim::commands {

namespace {

struct RunOptions {
  std::string scenario;
  std::vector<std::string> strategies;
  ScenarioInputs inputs;
  std::optional<int> trials;
  std::optional<std::uint64_t> seed;
  bool json = false;
  bool check_determinism = false;
  bool print_config = false;
  bool no_expect = false;  // a live variation: the scenario's expectations are not judged
  int jobs = default_jobs();
  std::optional<double> time_s;  // wall seconds at most
  std::string history;           // --history FILE: the first trial's client-visible history, Jepsen's form
};

void print_heading(const Scenario& s) {
  fmt::print("scenario: {} ({})\n{}\n", s.name, s.file, s.description);
  fmt::print("seed: {}; trials per strategy: {} (seeds {}..{}); scenario hash {:016x}\n", s.seed, s.trials, s.seed,
             s.seed + static_cast<std::uint64_t>(s.trials) - 1, s.hash);
  fmt::print("configuration, every value in effect (--print-config shows it alone):\n{}\n\n", effective_config(s).dump());
  for (const auto& f : s.faults)
    if (const std::string placed = f.faults->placed_text(); !placed.empty())
      fmt::print("note: faults.explore ({}) is placed by `locksim explore {} --mode dfs`; these trials run without it\n\n", placed,
                 s.name);
}

// --check-determinism: the same trials again, also when --time stopped the run. False when a
// trace hash differs.
bool same_again(const Scenario& s, const RunOptions& o, const reports::RunResults& results) {
  const reports::RunResults again = run_scenario(s, {.jobs = o.jobs, .stop = same_trials_as(results)});
  for (std::size_t i = 0; i < results.strategies.size(); ++i) {
    const auto &a = results.strategies[i], &b = again.strategies[i];
    if (a.trace_hash != b.trace_hash) {
      fmt::print(stderr, "determinism check failed: {}: trace hashes {:016x} and {:016x}\n", a.name, a.trace_hash, b.trace_hash);
      return false;
    }
  }
  if (!o.json) fmt::print("determinism check: every strategy's trials ran twice, the same trace hashes both times\n\n");
  return true;
}

// What the table leaves out: each strategy's first finding, and a full accept queue.
void print_findings(const reports::RunResults& results) {
  std::string first_duplicates;  // one per strategy; results.json has more
  for (const auto& st : results.strategies) {
    // A Lua workload's own finding is its check's count, which has no example of its own.
    const auto& v = st.first_violation;
    if (v && workload_finding(v->fired.front().substr(0, v->fired.front().find(' '))))
      first_duplicates += fmt::format("  {}: seed {}: {} (the workload's check)\n", st.name, results.seed + v->trial,
                                      fmt::join(v->fired, ", "));
    else if (!st.examples.empty())
      first_duplicates += fmt::format("  {}: {}\n", st.name, st.examples.front());
  }
  if (!first_duplicates.empty()) fmt::print("\nfirst finding of each strategy that had one:\n{}", first_duplicates);
  std::string overloaded;  // a full accept queue: the offered load passed what the servers serve
  for (const auto& st : results.strategies)
    if (auto it = st.counts.find("errors.rejected"); it != st.counts.end() && it->second.total > 0)
      overloaded += fmt::format("{}{} {:g} of {}", overloaded.empty() ? "" : ", ", st.name, it->second.total, st.operations);
  if (!overloaded.empty())
    fmt::print("\nwarning: operations rejected by a full accept queue ({}): the offered load exceeds what the app servers "
               "serve, at least at times (topology.workers, topology.accept_queue, clients.traffic.rate_per_s)\n",
               overloaded);
}

void print_tables(const Scenario& s, const reports::RunResults& results, const reports::ReportFiles& report) {
  fmt::print("{}", reports::table(results));
  if (const std::string steps = reports::steps_table(results); !steps.empty()) fmt::print("\n{}", steps);
  if (const std::string phases = reports::phases_table(results); !phases.empty()) fmt::print("\n{}", phases);
  print_findings(results);
  if (!s.lesson.empty()) fmt::print("\nlesson: {}\n", s.lesson);
  fmt::print("\nwritten: {}/report.md (and {} more files)\n", report.folder, report.written.size() - 1);
  if (!report.note.empty()) fmt::print("{}\n", report.note);
}

// The expectations judged: 0 when every one holds (or was skipped), else 1.
int judge(const reports::RunResults& results, bool json) {
  std::set<std::string> not_run;  // strategies whose expectations were skipped
  for (const auto& e : results.expectations)
    if (e.skipped) not_run.insert(e.text.substr(0, e.text.find(' ')));
  if (!not_run.empty() && !json) fmt::print("expectations skipped, their strategies were not run: {}\n", fmt::join(not_run, ", "));
  // --time so short that no trial finished: there is nothing to judge an expectation on.
  const bool none_finished = results.stopped == "time" && std::all_of(results.strategies.begin(), results.strategies.end(),
                                                                      [](const auto& st) { return st.trials == 0; });
  if (none_finished) {
    fmt::print(stderr, "no trial finished within --time ({:.3g} s): no expectation judged; give it more time\n", results.stopped_after_s);
    return 1;
  }
  int failed = 0;
  for (const auto& e : results.expectations) {
    if (e.holds || e.skipped) continue;
    ++failed;
    fmt::print(stderr, "expectation not met: {} (measured {})\n", e.text,
               e.measured_at_all ? fmt::format("{:g}", e.measured) : std::string("nothing"));
  }
  return failed == 0 ? 0 : 1;
}

int run(const RunOptions& o) {
  Scenario s = load_scenario(scenario_path(o.scenario), o.inputs.overrides(), o.strategies);
  running_file = s.file;
  if (o.trials) s.trials = *o.trials;
  if (o.seed) s.seed = *o.seed;
  if (o.no_expect) s.expect.clear();
  const auto history = o.history.empty() ? std::nullopt : std::optional(history_format(o.history, s));
  if (o.print_config) {
    fmt::print("{}\n", effective_config(s).dump(2));
    return 0;
  }
  if (!o.json) print_heading(s);
  reports::RunResults results;
  {
    Progress progress("trials");
    const RunControl control{.jobs = o.jobs, .progress = std::ref(progress), .draw_first_violation = true};
    results = run_scenario(s, o.time_s ? run_deadline(*o.time_s, control) : control);
  }
  if (o.check_determinism && !same_again(s, o, results)) return 1;
  if (!exec::leader()) return 0;  // its trials went to the leader, which reports
  const std::string json = reports::to_json(results);
  const auto report = reports::write_report(results, "reports/out/" + s.name);
  if (history) write_history(o.history, *history, results.strategies.front().timeline, results.strategies.front().name, o.json);
  if (o.json)
    fmt::print("{}", json);
  else
    print_tables(s, results, report);
  return judge(results, o.json);
}

}  // namespace

Command run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  auto* cli = app.add_subcommand("run", "run a scenario: every strategy it names, many trials, a comparison table");
  add_scenario(*cli, o->scenario);
  cli->add_option("--strategy", o->strategies, "run only these strategies (repeatable)");
  add_trials_and_seed(*cli, o->trials, o->seed, "trials per strategy", "seed of the first trial (trial i uses seed + i)");
  add_inputs(*cli, o->inputs, "override a scenario value: path=value, e.g. clients.count=50", kStrategyFileHelp);
  cli->add_flag("--json", o->json, "print results.json instead of the table");
  cli->add_option("--history", o->history,
                  "write the first trial's client-visible history to FILE.edn or FILE.json, in Jepsen's form (one strategy)");
  cli->add_flag("--print-config", o->print_config, "print the scenario with every value in effect, defaults included, and exit");
  cli->add_flag("--check-determinism", o->check_determinism, "run every trial twice and compare trace hashes");
  cli->add_flag("--no-expect", o->no_expect,
                "judge none of the scenario's expectations (a variation of a catalogue scenario, say, with --set)");
  add_jobs(*cli, o->jobs, "threads running trials (default: every core); results do not depend on it");
  add_time(*cli, o->time_s,
           "wall seconds at most: no trial starts after and those under way stop, the results are of the trials done");
  return {cli, [o] { return run(*o); }, true};
}

}  // namespace locksim::commands
