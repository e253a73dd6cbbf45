#include "sim/distribution.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include <fmt/format.h>

#include "sim/errors.hpp"

namespace sim {
namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

void require(bool ok, const char* what) {
  if (!ok) throw UsageError(std::string("sim::Distribution: ") + what);
}
// The message formatted only when the check fails: models build distributions per run.
template <class Describe>
  requires std::is_invocable_r_v<std::string, Describe>
void require(bool ok, Describe&& describe) {
  if (!ok) throw UsageError("sim::Distribution: " + describe());
}

bool finite(double x) { return std::isfinite(x); }

// The index drawn from `weights` (uniform over `n` when empty); `total` is their sum.
std::size_t weighted_index(Stream& s, std::size_t n, const std::vector<std::uint32_t>& weights, std::uint64_t total) {
  if (weights.empty()) return static_cast<std::size_t>(s.pick(n));
  std::uint64_t pick = s.choose(total);
  std::size_t i = 0;
  while (pick >= weights[i]) pick -= weights[i++];
  return i;
}

// A uniform double in (0, 1]: safe to take the logarithm of.
double open_uniform(Stream& s) { return 1.0 - s.uniform01(); }

double standard_normal(Stream& s) {
  for (;;) {
    const double u = 2.0 * s.uniform01() - 1.0;
    const double v = 2.0 * s.uniform01() - 1.0;
    const double q = u * u + v * v;
    if (q > 0.0 && q < 1.0) return u * std::sqrt(-2.0 * std::log(q) / q);
  }
}

}  // namespace

Distribution::Distribution(Shape shape) : shape_(std::move(shape)) {
  std::visit(Overloaded{
                 [](const Fixed& d) { require(finite(d.value), "fixed value must be finite"); },
                 [](const Uniform& d) {
                   require(finite(d.low) && finite(d.high) && d.low <= d.high,
                           [&] { return fmt::format("uniform needs finite low <= high, got [{}, {})", d.low, d.high); });
                 },
                 [](const Exponential& d) {
                   require(finite(d.mean) && d.mean > 0, [&] { return fmt::format("exponential mean must be > 0, got {}", d.mean); });
                 },
                 [](const Normal& d) {
                   require(finite(d.mean) && finite(d.stddev) && d.stddev >= 0,
                           [&] { return fmt::format("normal needs a finite mean and stddev >= 0, got {}, {}", d.mean, d.stddev); });
                 },
                 [](const LogNormal& d) {
                   require(finite(d.mu) && finite(d.sigma) && d.sigma >= 0,
                           [&] { return fmt::format("lognormal needs finite mu and sigma >= 0, got {}, {}", d.mu, d.sigma); });
                 },
                 [](const Pareto& d) {
                   require(finite(d.scale) && d.scale > 0 && finite(d.shape) && d.shape > 0,
                           [&] { return fmt::format("pareto needs scale > 0 and shape > 0, got {}, {}", d.scale, d.shape); });
                 },
                 [this](const Empirical& d) {
                   require(!d.values.empty(), "empirical needs at least one value");
                   require(d.weights.empty() || d.weights.size() == d.values.size(),
                           [&] { return fmt::format("empirical has {} values but {} weights", d.values.size(), d.weights.size()); });
                   for (double v : d.values) require(finite(v), "empirical values must be finite");
                   for (auto w : d.weights) total_weight_ += w;
                   require(d.weights.empty() || total_weight_ > 0, "empirical weights must not all be zero");
                 },
                 [this](const Mixture& d) {
                   require(!d.parts.empty(), "mixture needs at least one part");
                   require(d.weights.empty() || d.weights.size() == d.parts.size(),
                           [&] { return fmt::format("mixture has {} parts but {} weights", d.parts.size(), d.weights.size()); });
                   for (auto w : d.weights) total_weight_ += w;
                   require(d.weights.empty() || total_weight_ > 0, "mixture weights must not all be zero");
                 },
             },
             shape_);
}

double Distribution::sample(Stream& s) const {
  return std::visit(
      Overloaded{
          [](const Fixed& d) { return d.value; },
          [&](const Uniform& d) { return d.low + (d.high - d.low) * s.uniform01(); },
          [&](const Exponential& d) { return -d.mean * std::log(open_uniform(s)); },
          [&](const Normal& d) { return d.mean + d.stddev * standard_normal(s); },
          [&](const LogNormal& d) { return std::exp(d.mu + d.sigma * standard_normal(s)); },
          [&](const Pareto& d) { return d.scale * std::exp(-std::log(open_uniform(s)) / d.shape); },
          [&](const Empirical& d) { return d.values[weighted_index(s, d.values.size(), d.weights, total_weight_)]; },
          [&](const Mixture& d) { return d.parts[weighted_index(s, d.parts.size(), d.weights, total_weight_)].sample(s); },
      },
      shape_);
}

Duration Distribution::sample_duration(Stream& s) const {
  const double ns = sample(s);
  if (!(ns > 0)) return Duration{0};
  constexpr double kMax = static_cast<double>(std::numeric_limits<std::int64_t>::max() / 4);
  // Rounds half away from zero as std::llround does, without its call: for a positive
  // double the fraction ns - trunc(ns) is exact, so the comparison decides as llround would.
  const double clamped = ns < kMax ? ns : kMax;
  auto whole = static_cast<std::int64_t>(clamped);
  if (clamped - static_cast<double>(whole) >= 0.5) ++whole;
  return Duration{whole};
}

std::string Distribution::describe() const {
  return std::visit(Overloaded{
                        [](const Fixed& d) { return fmt::format("fixed({})", d.value); },
                        [](const Uniform& d) { return fmt::format("uniform({}, {})", d.low, d.high); },
                        [](const Exponential& d) { return fmt::format("exponential(mean {})", d.mean); },
                        [](const Normal& d) { return fmt::format("normal({}, {})", d.mean, d.stddev); },
                        [](const LogNormal& d) { return fmt::format("lognormal(mu {}, sigma {})", d.mu, d.sigma); },
                        [](const Pareto& d) { return fmt::format("pareto(scale {}, shape {})", d.scale, d.shape); },
                        [](const Empirical& d) { return fmt::format("empirical({} values)", d.values.size()); },
                        [](const Mixture& d) {
                          std::string out = "mixture(";
                          for (std::size_t i = 0; i < d.parts.size(); ++i) {
                            if (i > 0) out += ", ";
                            out += d.weights.empty() ? "" : fmt::format("{} x ", d.weights[i]);
                            out += d.parts[i].describe();
                          }
                          return out + ")";
                        },
                    },
                    shape_);
}

namespace {
double ns(Duration d) { return static_cast<double>(d.count()); }
}  // namespace

Distribution fixed(Duration value) { return Fixed{ns(value)}; }
Distribution uniform(Duration low, Duration high) { return Uniform{ns(low), ns(high)}; }
Distribution exponential(Duration mean) { return Exponential{ns(mean)}; }
Distribution normal(Duration mean, Duration stddev) { return Normal{ns(mean), ns(stddev)}; }
Distribution lognormal_median(Duration median, double sigma) {
  require(median.count() > 0, "lognormal median must be > 0");
  return LogNormal{std::log(ns(median)), sigma};
}
Distribution pareto(Duration scale, double shape) { return Pareto{ns(scale), shape}; }
Distribution empirical(const std::vector<Duration>& values, std::vector<std::uint32_t> weights) {
  Empirical e;
  for (Duration v : values) e.values.push_back(ns(v));
  e.weights = std::move(weights);
  return e;
}

Distribution mixture(std::vector<Distribution> parts, std::vector<std::uint32_t> weights) {
  return Mixture{std::move(parts), std::move(weights)};
}

}  // namespace sim
