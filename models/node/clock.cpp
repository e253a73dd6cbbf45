#include "models/node/clock.hpp"

#include <cmath>

namespace models {
namespace {
// `d` scaled by the drift: rounded to whole nanoseconds the same way on every platform.
sim::Duration drifted(sim::Duration d, double ppm) {
  return d + sim::Duration{std::llround(static_cast<double>(d.count()) * ppm * 1e-6)};
}
}  // namespace

Clock::Clock(sim::Engine& engine, ClockConfig config)
    : engine_(engine), drift_ppm_(config.drift_ppm), anchor_true_(engine.now()), anchor_local_(engine.now() + config.offset), anchor_mono_(engine.now()) {
  if (!(std::abs(config.drift_ppm) < 1e6))
    throw sim::UsageError("models::Clock: drift must be within +-1e6 ppm (a clock that runs), got " +
                          std::to_string(config.drift_ppm));
}

sim::Time Clock::now() const { return anchor_local_ + drifted(engine_.now() - anchor_true_, drift_ppm_); }

sim::Time Clock::monotonic() const { return anchor_mono_ + drifted(engine_.now() - anchor_true_, drift_ppm_); }

void Clock::rebase() {
  anchor_mono_ = monotonic();
  anchor_local_ = now();
  anchor_true_ = engine_.now();
}

void Clock::step(sim::Duration by) {
  rebase();
  anchor_local_ += by;
}

void Clock::set_drift_ppm(double ppm) {
  if (!(std::abs(ppm) < 1e6))
    throw sim::UsageError("models::Clock::set_drift_ppm: drift must be within +-1e6 ppm, got " + std::to_string(ppm));
  rebase();
  drift_ppm_ = ppm;
}

sim::Duration Clock::true_duration(sim::Duration local) const {
  return sim::Duration{std::llround(static_cast<double>(local.count()) / (1.0 + drift_ppm_ * 1e-6))};
}

}  // namespace models
