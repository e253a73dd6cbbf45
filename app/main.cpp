// The `locksim` command.

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>

#include "app/demo.hpp"

int main(int argc, char** argv) {
  CLI::App app{"locksim: a deterministic simulator of the ways services stop duplicate inserts"};
  app.require_subcommand(1);

  locksim::DemoOptions demo;
  auto* demo_cmd = app.add_subcommand("demo", "run the built-in demonstration: retries racing check-then-insert");
  demo_cmd->add_option("--seed", demo.seed, "seed of the first trial (trial i uses seed + i)");
  demo_cmd->add_option("--trials", demo.trials, "number of trials")->check(CLI::Range(1, 1'000'000));
  demo_cmd->add_option("--clients", demo.clients, "clients binding at start-up")->check(CLI::Range(1, 100'000));
  demo_cmd->add_option("--workers", demo.workers, "server worker threads")->check(CLI::Range(1, 10'000));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "locksim: " << e.what() << " (see locksim --help)\n";
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
