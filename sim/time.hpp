#pragma once
// Simulated time: integer nanoseconds, never floating point, never the host's clock.

#include <chrono>
#include <cstdint>
#include <string>

namespace sim {

/// A span of simulated time in integer nanoseconds.
using Duration = std::chrono::nanoseconds;

/// The simulated clock. It has no now(): the engine owns the current time.
struct SimClock {
  using rep = std::int64_t;
  using period = std::nano;
  using duration = Duration;
  using time_point = std::chrono::time_point<SimClock>;
  static constexpr bool is_steady = true;
};

/// An instant of simulated (true) time; the run starts at Time{}.
using Time = SimClock::time_point;

/// Largest representable instant, used as "no deadline".
inline constexpr Time kNever = Time::max();

/// Nanoseconds since the start of the run.
constexpr std::int64_t to_ns(Time t) { return t.time_since_epoch().count(); }
constexpr Time from_ns(std::int64_t ns) { return Time{Duration{ns}}; }

/// "1.234567891 s" style text with trailing zeros trimmed, for messages and reports.
std::string format_duration(Duration d);
/// "t=1.5 s".
std::string format_time(Time t);

}  // namespace sim
