// The command line: every command's subcommand, read, and the one it names run.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include "app/commands/commands.hpp"
#include "app/exec/executor.hpp"
#include "app/input.hpp"

namespace locksim::commands {

namespace {

// A memory ceiling: nine tenths of the machine's memory, as the process's address-space
// limit, so that a run too large for the machine ends with one line (an allocation fails and
// main says so) instead of the machine swapping or the kernel killing it. Sanitized builds
// reserve terabytes of shadow memory up front and are left unlimited.
void limit_memory() {
#if !defined(__SANITIZE_ADDRESS__)
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return;
  const rlim_t ceiling = static_cast<rlim_t>(pages) / 10 * 9 * static_cast<rlim_t>(page);
  rlimit now{};
  if (::getrlimit(RLIMIT_AS, &now) != 0 || (now.rlim_cur != RLIM_INFINITY && now.rlim_cur <= ceiling)) return;
  now.rlim_cur = ceiling;
  ::setrlimit(RLIMIT_AS, &now);
#endif
}

// A first word that is no command is named as such, not as a missing command.
void refuse_unknown_command(CLI::App& app, int argc, char** argv) {
  if (argc <= 1 || argv[1][0] == '-') return;
  std::vector<std::string> names;
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(command->get_name());
  if (std::find(names.begin(), names.end(), argv[1]) == names.end())
    throw InputError(fmt::format("{}: no such command; the commands: {} (see locksim --help)", shown(argv[1], 64), fmt::join(names, ", ")));
}

}  // namespace

int dispatch(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) check_length("an argument", argv[i]);
  CLI::App app{"locksim: a deterministic simulator of the ways services stop duplicate inserts"};
  app.require_subcommand(1);
  const std::vector<Command> commands{list_command(app),    schema_command(app), run_command(app),    sweep_command(app),
                                      explore_command(app), rows_command(app),   replay_command(app), serve_command(app)};
  refuse_unknown_command(app, argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    throw InputError(shown(e.what(), 300) + " (see locksim --help)");
  }
  limit_memory();
  for (const Command& command : commands) {
    if (!*command.cli) continue;
    // Over several ranks, the others take part in run, sweep and explore; in the rest, the leader alone.
    if (!exec::leader() && !command.every_rank) return 0;
    return command.run();
  }
  return 0;
}

}  // namespace locksim::commands
