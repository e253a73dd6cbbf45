// `locksim rows`: a scenario's seeded rows as SQL INSERTs.

#include <iostream>
#include <memory>

#include "app/commands/commands.hpp"
#include "app/database_input.hpp"
#include "app/scenario.hpp"

namespace locksim::commands {

namespace {

struct RowsOptions {
  std::string scenario;
  std::vector<std::string> sets;
};

}  // namespace

Command rows_command(CLI::App& app) {
  auto o = std::make_shared<RowsOptions>();
  auto* cli = app.add_subcommand("rows", "print the scenario's seeded rows (database.rows and database.legacy) as SQL INSERTs, "
                                         "to load the same data into a real database");
  cli->add_option("scenario", o->scenario, "a scenario file, or a name from scenarios/")->required();
  cli->add_option("--set", o->sets, "override a scenario value: path=value");
  return {cli, [o] {
            const Scenario s = load_scenario(scenario_path(o->scenario), o->sets);
            write_rows_sql(s.deployment.database, std::cout);
            return 0;
          }};
}

}  // namespace locksim::commands
