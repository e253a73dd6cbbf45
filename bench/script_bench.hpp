#pragma once
// Strategies written in Lua measured against their C++ originals: trials per second side by
// side on account-bind, the memory of one trial's Lua state, and how long a new script takes
// from its text to the end of its first trial.

#include <string>
#include <vector>

namespace bench {

struct TwinFigures {
  std::string strategy;
  double cpp_trials_per_s = 0;
  double lua_trials_per_s = 0;
};

/// The account-bind operation as a Lua workload (bench/workloads/bind-openid.lua) against the
/// built-in workload running the same strategy, trials/s side by side.
struct WorkloadFigures {
  double builtin_cpp_trials_per_s = 0;  // account-bind, select-for-update (C++)
  double builtin_lua_trials_per_s = 0;  // account-bind, strategies/select-for-update.lua
  double workload_trials_per_s = 0;     // bind-openid.lua, its select-for-update.lua
};

struct ScriptFigures {
  std::vector<TwinFigures> twins;  // redis-token-cas-unlock, select-for-update
  WorkloadFigures workload;
  double state_bytes = 0;          // resident bytes per live script state (a strategy instance)
  double first_trial_ms = 0;       // parse, load, one trial of account-bind
};

ScriptFigures script_bench(int trials, int repeats);

}  // namespace bench
