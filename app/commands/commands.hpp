#pragma once
// The commands of `locksim`, one file each in app/commands/: each adds its subcommand, with its
// options, to the command line and says how to run it once parsed.

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "app/search/token.hpp"

namespace locksim::commands {

struct Command {
  CLI::App* cli = nullptr;   // its subcommand: true once the command line chose it
  std::function<int()> run;  // runs it, once parsed; its exit code
  bool every_rank = false;   // over several ranks (app/exec/), every rank takes part; else the leader alone
};

Command list_command(CLI::App& app);
Command schema_command(CLI::App& app);
Command run_command(CLI::App& app);
Command sweep_command(CLI::App& app);
Command explore_command(CLI::App& app);
Command rows_command(CLI::App& app);
Command replay_command(CLI::App& app);
Command serve_command(CLI::App& app);

/// Reads the command line and runs the command it names: its exit code. Throws InputError for a
/// command line it cannot read.
int dispatch(int argc, char** argv);

/// Replays `token`, prints the narrated timeline and draws it. 3 when a checker fired.
/// `claim`: the verdict of the search that found it, for the page.
/// `property`: the checker the search looked for, which a long trial's story centres on.
/// `time_s` (> 0): the replay ends there, unfinished, and the story is left to `locksim replay`.
/// `history_file`: where --history writes the trial's history (none: nowhere).
int show_replay(const Token& token, bool check_determinism, bool shrunk = false, const std::string& claim = "",
                const std::string& property = "", double time_s = 0, const std::string& history_file = "");

}  // namespace locksim::commands
