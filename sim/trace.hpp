#pragma once
// The run's structured trace: typed events, kept in full (replay, explanation) or
// folded into a running hash (bulk runs, determinism checks).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.hpp"

namespace sim {

/// A running 64-bit hash of a sequence of words: a trace's hash, a run's class of equivalent
/// runs (sim/footprints.hpp).
struct WordHash {
  std::uint64_t value = 0x84222325cbf29ce4ull;
  WordHash& operator<<(std::uint64_t x) {
    value ^= x + 0x9e3779b97f4a7c15ull + (value << 6) + (value >> 2);
    value *= 0xff51afd7ed558ccdull;
    return *this;
  }
};

enum class TraceMode { off, hash, full };

/// The type of a trace event. The engine's own kinds are below; models register
/// theirs by name (Trace::kind), so sim/ never needs to know what they mean.
using TraceKind = std::uint16_t;

namespace trace_kind {
inline constexpr TraceKind process_start = 1;
inline constexpr TraceKind process_resume = 2;  // a wake-up: every one is an event
inline constexpr TraceKind process_exit = 3;
inline constexpr TraceKind process_killed = 4;
inline constexpr TraceKind node_pause = 5;      // a = pause length in ns
inline constexpr TraceKind node_resume = 6;
inline constexpr TraceKind node_crash = 7;
inline constexpr TraceKind node_restart = 8;
inline constexpr TraceKind callback = 9;
inline constexpr TraceKind first_model_kind = 64;
}  // namespace trace_kind

/// One trace event. `process` is 0 for events not run by a process.
struct TraceEvent {
  Time at;
  std::uint32_t node = 0;
  std::uint32_t process = 0;
  TraceKind kind = 0;
  std::uint64_t key = 0;
  std::int64_t a = 0;
  std::int64_t b = 0;
  bool operator==(const TraceEvent&) const = default;
};

class Trace {
 public:
  explicit Trace(TraceMode mode);

  TraceMode mode() const { return mode_; }
  /// The kind registered under `name`, registering it on first use.
  TraceKind kind(std::string_view name);
  /// The name of a kind ("process_start", "redis.set", ...).
  const std::string& kind_name(TraceKind kind) const;

  void record(const TraceEvent& e) {
    if (mode_ == TraceMode::off) return;
    mix(e);
    if (mode_ == TraceMode::full) events_.push_back(e);
  }

  /// A hash of every event recorded so far (0 when the mode is off).
  std::uint64_t hash() const { return hash_.value; }
  std::uint64_t count() const { return count_; }
  const std::vector<TraceEvent>& events() const { return events_; }

 private:
  void mix(const TraceEvent& e) {
    ++count_;
    step(static_cast<std::uint64_t>(to_ns(e.at)));
    step((static_cast<std::uint64_t>(e.node) << 32) | e.process);
    step((static_cast<std::uint64_t>(e.kind) << 48) ^ e.key);
    step(static_cast<std::uint64_t>(e.a));
    step(static_cast<std::uint64_t>(e.b));
  }
  void step(std::uint64_t x) { hash_ << x; }

  TraceMode mode_;
  WordHash hash_;
  std::uint64_t count_ = 0;
  std::vector<TraceEvent> events_;
  std::vector<std::string> model_kind_names_;  // kind first_model_kind + i is the i-th
};

}  // namespace sim
