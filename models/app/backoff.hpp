#pragma once
// Delays between a client's retries: capped exponential backoff with jitter, the four
// variants of the AWS Architecture Blog's "Exponential Backoff And Jitter" (docs/models.md,
// Figures the models take), with n the retry number starting at 0:
//   none          min(cap, base * 2^n)
//   full          U(0, min(cap, base * 2^n))
//   equal         t/2 + U(0, t/2) with t = min(cap, base * 2^n)
//   decorrelated  min(cap, U(base, 3 * previous)), previous starting at base
// U(a, b) is uniform over whole nanoseconds in [a, b].

#include "sim/sim.hpp"

namespace models {

enum class Jitter { none, full, equal, decorrelated };
const char* to_string(Jitter jitter);

struct BackoffConfig {
  sim::Duration base = std::chrono::milliseconds(100);
  sim::Duration cap = std::chrono::seconds(10);
  Jitter jitter = Jitter::full;
};

/// The delays of one logical operation's retries, in order.
class Backoff {
 public:
  explicit Backoff(BackoffConfig config);
  /// The delay before the next retry.
  sim::Duration next(sim::Stream& stream);

 private:
  BackoffConfig config_;
  int retries_ = 0;
  sim::Duration previous_;
};

}  // namespace models
