// The `locksim` command: its commands are in app/commands/, one file each; the search in
// app/search/; the executor of trials and runs, on threads and other ranks, in app/exec/.

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <new>
#include <string>
#include <string_view>

#include "app/commands/commands.hpp"
#include "app/commands/options.hpp"
#include "app/exec/executor.hpp"
#include "app/input.hpp"
#include "reports/report_folder.hpp"

namespace {

// Exit codes: 0 done, 1 an expectation not met, 2 bad input, 3 a checker fired (explore,
// replay), 70 an internal error (a defect of locksim, never of the input).
constexpr int kBadInput = 2;
constexpr int kInternalError = 70;

// The command line, as a user would paste it back into a shell: for an internal error's report.
std::string command_line(int argc, char** argv) {
  std::string out = "locksim";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("-_.,:=/+@%").find(c) != std::string_view::npos;
    });
    out += " " + (plain ? arg : locksim::quote_value(arg, 200));
  }
  return out;
}

}  // namespace

// One handler for every failure: bad input is one line and exit 2; anything else is a
// defect, reported as one line with the command that reproduces it, and exit 70.
// Over several ranks, only the leader prints: another rank's failure goes to the leader, which
// reports it (app/exec/).
int main(int argc, char** argv) {
  locksim::exec::Session session(argc, argv);
  const auto fail = [&](const std::string& message, int code) {
    if (!locksim::exec::leader()) {
      session.failed(message, code);
      return code;
    }
    std::cerr << "locksim: " << message << "\n";
    return code;
  };
  try {
    return locksim::commands::dispatch(argc, argv);
  } catch (const locksim::exec::Quit& quit) {  // the leader failed, and says why
    return quit.exit_code;
  } catch (const locksim::InputError& e) {
    return fail(locksim::shown(e.what(), 2000), kBadInput);
  } catch (const locksim::reports::FolderError& e) {  // where the report goes is in the way
    return fail(locksim::shown(e.what(), 2000), kBadInput);
  } catch (const std::bad_alloc&) {
    const std::string& file = locksim::commands::running_file;
    return fail(fmt::format("{}out of memory: the run needs more than this machine gives it (less of clients.count, "
                            "clients.operations, topology.app_servers, topology.workers (each client and worker is a simulated "
                            "process with its own stack), trials or --jobs needs less)",
                            file.empty() ? "" : file + ": "),
                kBadInput);
  } catch (const std::exception& e) {
    return fail(fmt::format("internal error: {}; this is a defect of locksim, not of the input: please report it with the command {}",
                            locksim::shown(e.what(), 2000), command_line(argc, argv)),
                kInternalError);
  } catch (...) {
    return fail("internal error of an unknown kind; please report it with the command " + command_line(argc, argv), kInternalError);
  }
}
