#pragma once
// Clock faults of one node: steps (ntpd stepping an offset over 128 ms, an operator's
// `date -s`, a VM resumed from a snapshot) and drift changes (docs/models.md, Figures the
// models take: quartz ~200 ppm, NTP slews up to 500 ppm). Only the node's own clock changes.

#include <vector>

#include "models/faults/schedule.hpp"
#include "models/node/node.hpp"

namespace models {

struct ClockFault {
  enum class Kind { step, drift };
  sim::Time at;
  Kind kind = Kind::step;
  sim::Duration step{};  // step: how far the wall clock jumps (negative: backward)
  double drift_ppm = 0;  // drift: the new rate
};

struct RandomClockStepsConfig {
  sim::Distribution interval = sim::exponential(std::chrono::minutes(1));
  /// Signed, in nanoseconds: a normal around zero steps both ways.
  sim::Distribution step = sim::normal(sim::Duration::zero(), std::chrono::milliseconds(200));
  FaultWindow window;
};

/// Applies the faults at their times ("faults.clock.<node>").
void inject_clock_faults(Node& node, std::vector<ClockFault> faults);
/// Steps the node's clock by drawn amounts again and again ("faults.clock-steps.<node>").
void inject_random_clock_steps(Node& node, RandomClockStepsConfig config);

}  // namespace models
