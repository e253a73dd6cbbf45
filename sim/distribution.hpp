#pragma once
// In-house probability distributions over the run's streams.
//
// Written here rather than taken from <random> because the standard distributions are
// allowed to differ between standard libraries; these give the same values for the same
// answers on every platform. The first draws for a fixed seed are pinned by a test.

#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "sim/random.hpp"
#include "sim/time.hpp"

namespace sim {

/// Always `value`.
struct Fixed {
  double value = 0;
};
/// Uniform on [low, high).
struct Uniform {
  double low = 0, high = 0;
};
/// Exponential with the given mean (inverse transform).
struct Exponential {
  double mean = 0;
};
/// Normal (Marsaglia's polar method; the second value of each pair is discarded to keep draws stateless).
struct Normal {
  double mean = 0, stddev = 0;
};
/// exp(N(mu, sigma)): the median is exp(mu).
struct LogNormal {
  double mu = 0, sigma = 0;
};
/// Pareto type I: scale x_m (the minimum) and shape alpha; heavy tail for alpha near 1.
struct Pareto {
  double scale = 0, shape = 0;
};
/// One of `values`, with integer `weights` (all equal when empty). Equal weights make the
/// draw a single choose(n), which the explorers can enumerate (for example fast / slow).
struct Empirical {
  std::vector<double> values;
  std::vector<std::uint32_t> weights;
};

class Distribution;
/// A draw from one of `parts`, picked with integer `weights` (all equal when empty): a
/// lognormal body with a rare Pareto tail, say, for GC pauses.
struct Mixture {
  std::vector<Distribution> parts;
  std::vector<std::uint32_t> weights;
};

/// A distribution of doubles; for durations the values are nanoseconds.
class Distribution {
 public:
  using Shape = std::variant<Fixed, Uniform, Exponential, Normal, LogNormal, Pareto, Empirical, Mixture>;

  /// Checks the parameters; throws UsageError naming the distribution if they are invalid.
  explicit Distribution(Shape shape);
  /// Any one shape is a distribution: `Distribution d = Uniform{1, 2};`.
  template <class S>
    requires std::is_constructible_v<Shape, S>
  Distribution(S shape)  // NOLINT(google-explicit-constructor)
      : Distribution(Shape(std::move(shape))) {}
  Distribution() : Distribution(Fixed{0}) {}

  double sample(Stream& stream) const;
  /// A sample read as nanoseconds, rounded to the nearest and clamped at zero.
  Duration sample_duration(Stream& stream) const;
  /// "uniform(1000, 100000)" and so on.
  std::string describe() const;
  const Shape& shape() const { return shape_; }

 private:
  Shape shape_;
  std::uint64_t total_weight_ = 0;  // Empirical and Mixture only
};

// Duration-valued shorthands (the values are stored as nanoseconds).
Distribution fixed(Duration value);
Distribution uniform(Duration low, Duration high);
Distribution exponential(Duration mean);
Distribution normal(Duration mean, Duration stddev);
/// A lognormal with the given median and log-space sigma.
Distribution lognormal_median(Duration median, double sigma);
Distribution pareto(Duration scale, double shape);
Distribution empirical(const std::vector<Duration>& values, std::vector<std::uint32_t> weights = {});
Distribution mixture(std::vector<Distribution> parts, std::vector<std::uint32_t> weights = {});

}  // namespace sim
