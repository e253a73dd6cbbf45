// `locksim schema`: the JSON Schema of scenario files (docs/scenario.schema.json).

#include <iostream>

#include "app/commands/commands.hpp"
#include "app/schema.hpp"

namespace locksim::commands {

Command schema_command(CLI::App& app) {
  auto* cli = app.add_subcommand("schema", "print the JSON Schema of scenario files, for editors and validators "
                                           "(docs/scenario.schema.json)");
  return {cli, [] {
            std::cout << scenario_schema().dump(2) << "\n";
            return 0;
          }};
}

}  // namespace locksim::commands
