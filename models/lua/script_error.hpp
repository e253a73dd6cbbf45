#pragma once
// What every Lua script's loader and runtime share with their callers, without Lua's headers:
// the error a script's mistake is, and the budgets a script runs under (sandbox.hpp).

#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace models::lua {

/// A script that cannot be loaded or run, as one line: "file:line: message" or "file: what is wrong".
class ScriptError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Limits {
  /// Lua instructions per trial, every call together; beyond, the trial stops and counts as
  /// unfinished, with a script error naming where the script was.
  std::uint64_t instructions = 200'000'000;
  /// Bytes one trial's Lua state may hold.
  std::size_t memory_bytes = std::size_t{64} << 20;
};

}  // namespace models::lua
