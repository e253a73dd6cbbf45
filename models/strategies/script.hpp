#pragma once
// Strategies written in Lua 5.4: a design as a page of the code its engineer already writes,
// run without touching C++ (docs/writing-strategies.md is the contract).
//
// A script sets `description` and `bind(req)` (and optionally `params`, `tables`, `uses`,
// `source`, `risks`); bind talks to the world through `db`, `redis`, `locks`, `hold`, `work`,
// `sleep`, `now_ms`, `unique` and `remote`, which call the same clients the C++ strategies
// use: the same statements, the same lock holds reported to the checkers, the same waits.
//
// Each bind runs in the worker's simulated process, on a Lua thread of its trial's state;
// a call that waits (a statement, a Redis command) suspends that process, and the others run
// meanwhile. The state is fresh per trial and sandboxed: no os, io, require or load; pairs
// and next iterate in a fixed order, table.sort is stable, math.random draws from the
// worker's stream, tostring shows no address, so a script's results depend on the seed
// alone. An instruction budget per trial and a memory limit bound it; a process running a
// script gets a stack deep enough for Lua's own C-call limit, so deep recursion is a clean
// Lua error.

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "models/lua/script_error.hpp"
#include "models/strategies/strategy.hpp"

namespace models::strategies {

/// A script that cannot be loaded, as one line: "file:line: message" or "file: what is wrong".
using ScriptError = lua::ScriptError;
/// Instructions and memory per trial.
using ScriptLimits = lua::Limits;

/// The stack of each simulated process in a trial that runs a script: Lua's C-call limit
/// (200 nested C calls: metamethods, pcall, string.gsub callbacks) fits in it.
inline constexpr std::size_t kScriptStackBytes = std::size_t{1} << 20;

/// Compiles the script `text` read from `file` and runs its top level once to read its
/// contract; returns its registry entry, named `name`, whose strategies each run the script in
/// a fresh state. Throws ScriptError.
std::shared_ptr<const Entry> load_script(const std::string& name, const std::string& file, std::string_view text,
                                         ScriptLimits limits = {});

}  // namespace models::strategies
