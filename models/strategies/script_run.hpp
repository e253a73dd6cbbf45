#pragma once
// The two halves of a strategy written in Lua (script.hpp), and what passes between them:
// loading (script_load.cpp) compiles a script and reads its contract; running (script_run.cpp)
// gives each trial a fresh state with the API installed and calls its bind or handle per request.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/strategies/script.hpp"

struct lua_State;

namespace models::strategies {

/// What load_script keeps of a script for its trials: the compiled chunk and what it declared.
struct Compiled {
  std::string file;
  std::string bytecode;
  ScriptLimits limits;
  std::map<std::string, ParamKind> kinds;  // of the script's params
  std::vector<db::TableSchema> tables{};   // every table of its world: statements are checked against them
  std::string workload{};                  // the Lua workload it handles requests of; empty: account-bind
  std::vector<std::string> outcomes{};     // the answers of its own it may return ("seat_taken"), sorted
  const char* handler() const { return workload.empty() ? "bind" : "handle"; }
};

/// Installs the API a script calls (`db`, `redis`, `locks`, `hold`, `work`, ...) in `L`. Loading
/// runs the top level with it, as each trial does; its functions refuse to work outside a request.
void install_api(lua_State* L);
/// The sandbox's question whether a running call must stop: the budget is spent, or the process
/// running it is being torn down (lua::Runtime::stopping).
int stopping(lua_State* L);
/// A strategy that runs `compiled` in a state of its own for the trial `env` belongs to.
std::unique_ptr<Strategy> make_script_strategy(Env& env, const Params& params, std::shared_ptr<const Compiled> compiled);

}  // namespace models::strategies
