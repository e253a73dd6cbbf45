// `locksim serve`: the workbench in the browser (app/serve.hpp, docs/workbench.md).

#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "app/commands/commands.hpp"
#include "app/serve.hpp"

namespace locksim::commands {

Command serve_command(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  auto* cli = app.add_subcommand("serve", "the workbench in the browser: run, step through and branch trials (docs/workbench.md)");
  cli->add_option("--bind", o->bind, "the address to listen on (default 127.0.0.1: this machine alone)");
  cli->add_option("--port", o->port, "the port (default 8080; 0: any free one)")->check(CLI::Range(0, 65535));
  cli->add_option("--dir", o->dir, "your own folder of scenarios and Lua files, which the page may open and save into");
  return {cli, [o] {
            return serve(*o, [](const std::string& url) {
              fmt::print("locksim serve: {}  (Ctrl-C stops it)\n", url);
              std::fflush(stdout);
            });
          }};
}

}  // namespace locksim::commands
