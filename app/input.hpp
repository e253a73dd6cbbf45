#pragma once
// What every edge of the command (files, flags, tokens) shares: the error that means "bad
// input" (one line, exit 2), the limits input is checked against before anything is built
// from it, and how a value the user gave is echoed back: cut short, invalid bytes escaped.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace locksim {

/// Bad input: `file: path: what was expected`, one line.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace limits {
/// Durations in a scenario, in ms: 1e12 ms is 31 years, and in nanoseconds (1e18) it stays
/// well inside int64 even when a few are added.
inline constexpr double max_ms = 1e12;
/// Nesting of a scenario document or an override value; the catalogue's deepest is 5.
inline constexpr int max_json_depth = 32;
/// A scenario file's size.
inline constexpr std::size_t max_file_bytes = 4u << 20;
/// Simulated operations in one trial (clients x operations each), and clients: each client
/// is a simulated process with its own stack.
inline constexpr std::int64_t max_clients = 100'000;
inline constexpr std::int64_t max_operations = 1'000'000;
/// A flag's or a token's length.
inline constexpr std::size_t max_argument_bytes = 64u << 10;
}  // namespace limits

/// `value` as an error message shows it: in double quotes, bytes that are not printable
/// UTF-8 as \xNN, cut after `max` bytes with "..." and the full length.
std::string quote_value(std::string_view value, std::size_t max = 60);

/// `text` as it is when it is short printable UTF-8, else as quote_value() shows it: for file
/// names and JSON paths in messages.
std::string shown(std::string_view text, std::size_t max = 120);

/// Whether `text` is well-formed UTF-8 (no overlong forms, no surrogates).
bool valid_utf8(std::string_view text);

/// A decimal integer with nothing else around it, no sign: "18446744073709551615" at most.
std::optional<std::uint64_t> parse_u64(std::string_view text);

/// FNV-1a, 64 bits: the scenario hash, and a replay token's check.
std::uint64_t fnv1a(std::string_view bytes);

/// Throws InputError naming `what` unless `value` is at most `limits::max_argument_bytes`.
void check_length(std::string_view what, std::string_view value);

}  // namespace locksim
