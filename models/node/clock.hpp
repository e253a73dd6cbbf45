#pragma once
// A machine's local clock: an offset from true time, a drift rate, and steps.
//
// Imitates a host clock disciplined (or not) by NTP (docs/models.md, Figures the models
// take): quartz drifts up to ~200 ppm, ntpd slews at most 500 ppm and steps the clock when
// the offset exceeds 128 ms, and an operator can set it by hand. The wall clock (now) sees
// steps; timers (sleep_for) run on the monotonic clock, which drifts but is never stepped,
// as with CLOCK_MONOTONIC. True time (sim::now) is for checkers only.

#include "sim/sim.hpp"

namespace models {

struct ClockConfig {
  /// Local minus true time at the start of the run.
  sim::Duration offset{};
  /// How fast the clock runs: +100 gains 100 us per true second.
  double drift_ppm = 0;
};

class Clock {
 public:
  Clock(sim::Engine& engine, ClockConfig config);

  /// The node's wall-clock time: what gettimeofday returns there.
  sim::Time now() const;
  /// The monotonic clock's reading (CLOCK_MONOTONIC): drifts with the clock, never stepped.
  /// For timeouts a node judges on its own, such as session expiry.
  sim::Time monotonic() const;
  /// Local minus true time, now.
  sim::Duration offset() const { return now() - engine_.now(); }
  double drift_ppm() const { return drift_ppm_; }

  /// Jumps the wall clock by `by` (negative: backward), as ntpd's step or `date -s` does.
  void step(sim::Duration by);
  /// Changes the drift rate from now on.
  void set_drift_ppm(double ppm);

  /// The true time that passes while this clock's monotonic time advances by `local`.
  sim::Duration true_duration(sim::Duration local) const;
  /// The calling process sleeps `local` as measured by this node's timers.
  void sleep_for(sim::Duration local) const { sim::sleep_for(true_duration(local)); }

 private:
  void rebase();

  sim::Engine& engine_;
  double drift_ppm_ = 0;
  sim::Time anchor_true_;   // the true time of the last change
  sim::Time anchor_local_;  // the wall-clock reading then
  sim::Time anchor_mono_;   // the monotonic reading then
};

}  // namespace models
