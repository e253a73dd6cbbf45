#include "models/app/backoff.hpp"

#include <algorithm>

namespace models {
namespace {
// Uniform over whole nanoseconds in [low, high].
sim::Duration uniform_between(sim::Stream& s, sim::Duration low, sim::Duration high) {
  const auto span = static_cast<std::uint64_t>((high - low).count());
  return low + sim::Duration{static_cast<std::int64_t>(s.choose(span + 1))};
}

// min(cap, base * 2^n) without overflow.
sim::Duration capped_exponential(sim::Duration base, sim::Duration cap, int n) {
  if (n >= 62 || base.count() > (cap.count() >> n)) return cap;
  return std::min(cap, sim::Duration{base.count() << n});
}
}  // namespace

const char* to_string(Jitter jitter) {
  switch (jitter) {
    case Jitter::none: return "none";
    case Jitter::full: return "full";
    case Jitter::equal: return "equal";
    case Jitter::decorrelated: return "decorrelated";
  }
  return "?";
}

Backoff::Backoff(BackoffConfig config) : config_(config), previous_(config.base) {
  if (config_.base < sim::Duration::zero() || config_.cap < config_.base)
    throw sim::UsageError("models::Backoff: needs 0 <= base <= cap, got base " + sim::format_duration(config_.base) + ", cap " +
                          sim::format_duration(config_.cap));
}

sim::Duration Backoff::next(sim::Stream& s) {
  const int n = retries_++;
  const sim::Duration t = capped_exponential(config_.base, config_.cap, n);
  switch (config_.jitter) {
    case Jitter::none: return t;
    case Jitter::full: return uniform_between(s, sim::Duration::zero(), t);
    case Jitter::equal: return t / 2 + uniform_between(s, sim::Duration::zero(), t / 2);
    case Jitter::decorrelated: {
      const sim::Duration high = std::max(config_.base, previous_ * 3);
      previous_ = std::min(config_.cap, uniform_between(s, config_.base, high));
      return previous_;
    }
  }
  return t;
}

}  // namespace models
