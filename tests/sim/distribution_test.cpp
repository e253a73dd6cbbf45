// Distributions: pinned first draws (a platform or library change that alters results
// fails here), and the shapes they promise (checked on many draws).

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "support.hpp"

using namespace test;

namespace {
std::vector<double> first_draws(const sim::Distribution& d, int n = 4) {
  sim::ChoiceSource source(42);
  auto s = source.stream("golden");
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(d.sample(s));
  return out;
}

std::vector<double> many(const sim::Distribution& d, int n = 200'000) {
  sim::ChoiceSource source(7);
  auto s = source.stream("shape");
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) out.push_back(d.sample(s));
  return out;
}

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}
}  // namespace

TEST_CASE("the first draws of each distribution for seed 42 are pinned") {
  auto pinned = [](const sim::Distribution& d, std::vector<double> expected) {
    const auto got = first_draws(d);
    INFO(d.describe());
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(expected[i]).epsilon(1e-12));
  };
  pinned(sim::Fixed{3.5}, {3.5, 3.5, 3.5, 3.5});
  pinned(sim::Uniform{1000, 100000}, {75495.072474935427, 47893.969699717811, 78766.799304273358, 12965.278715079949});
  pinned(sim::Exponential{1e6}, {1396245.6293344994, 641839.16334606754, 1539553.8229131675, 128812.71586835844});
  pinned(sim::Normal{10, 2}, {13.275602634021734, 10.549151294514315, 6.9750517950185085, 7.6941252224295544});
  pinned(sim::LogNormal{std::log(2e7), 0.5}, {45360103.087064259, 22943165.605340809, 9388590.9398726001, 11237580.678388495});
  pinned(sim::Pareto{1e6, 1.5}, {2536614.7577411095, 1534021.5875494126, 2790914.2079916359, 1089670.2678447242});
  pinned(sim::Empirical{{1, 2, 3}, {}}, {3, 2, 3, 1});
  pinned(sim::Empirical{{10, 20}, {1, 3}}, {20, 20, 20, 10});
}

TEST_CASE("duration samples are whole nanoseconds, rounded, never negative") {
  sim::ChoiceSource source(1);
  auto s = source.stream("d");
  CHECK(sim::fixed(1500us).sample_duration(s) == 1500us);
  CHECK(sim::Distribution(sim::Fixed{2.6}).sample_duration(s) == 3ns);
  CHECK(sim::Distribution(sim::Normal{-1e6, 1}).sample_duration(s) == 0ns);
  const auto d = sim::uniform(1us, 100us).sample_duration(s);
  CHECK((d >= 1us && d < 100us));
}

TEST_CASE("a duration sample rounds half away from zero, as std::llround, including at the halves") {
  sim::ChoiceSource source(1);
  auto s = source.stream("d");
  const std::vector<double> values{0.49999999999999994, 0.5, 1.5, 2.5, 2.4999999999999996, 1e15 + 0.5,
                                   4503599627370495.5, 9007199254740993.0, 123456.49999999999};
  for (double v : values) {
    INFO(v);
    CHECK(sim::Distribution(sim::Fixed{v}).sample_duration(s).count() == std::llround(v));
  }
  sim::ChoiceSource draws(7);
  auto u = draws.stream("u");
  int differ = 0;
  for (int i = 0; i < 100'000; ++i) {
    const double v = std::ldexp(u.uniform01(), static_cast<int>(u.choose(60)));
    differ += sim::Distribution(sim::Fixed{v}).sample_duration(s).count() != std::llround(v);
  }
  CHECK(differ == 0);
}

TEST_CASE("each distribution has the shape it promises") {
  const auto u = many(sim::Uniform{10, 20});
  CHECK(*std::min_element(u.begin(), u.end()) >= 10);
  CHECK(*std::max_element(u.begin(), u.end()) < 20);
  CHECK(mean(u) == Approx(15).epsilon(0.01));

  const auto e = many(sim::Exponential{5});
  CHECK(mean(e) == Approx(5).epsilon(0.02));
  CHECK(quantile(e, 0.5) == Approx(5 * std::log(2.0)).epsilon(0.02));

  const auto n = many(sim::Normal{100, 15});
  CHECK(mean(n) == Approx(100).epsilon(0.005));
  CHECK(quantile(n, 0.8413) == Approx(115).epsilon(0.01));

  const auto ln = many(sim::LogNormal{std::log(20.0), 0.5});
  CHECK(quantile(ln, 0.5) == Approx(20).epsilon(0.02));
  CHECK(*std::min_element(ln.begin(), ln.end()) > 0);

  const auto p = many(sim::Pareto{2, 3});
  CHECK(*std::min_element(p.begin(), p.end()) >= 2);
  CHECK(mean(p) == Approx(3).epsilon(0.03));  // shape * scale / (shape - 1)
  CHECK(quantile(p, 0.5) == Approx(2 * std::pow(2.0, 1.0 / 3)).epsilon(0.02));

  const auto w = many(sim::Empirical{{10, 20}, {1, 3}});
  const auto twenties = std::count(w.begin(), w.end(), 20.0);
  CHECK(static_cast<double>(twenties) / static_cast<double>(w.size()) == Approx(0.75).epsilon(0.01));
}

TEST_CASE("a mixture draws each part with its weight: a lognormal body with a rare heavy tail") {
  const auto m = many(sim::mixture({sim::Uniform{0, 10}, sim::Pareto{1000, 1.5}}, {99, 1}));
  const auto tail = std::count_if(m.begin(), m.end(), [](double x) { return x >= 1000; });
  CHECK(static_cast<double>(tail) / static_cast<double>(m.size()) == Approx(0.01).epsilon(0.05));
  CHECK(std::count_if(m.begin(), m.end(), [](double x) { return x >= 10 && x < 1000; }) == 0);
  CHECK(sim::mixture({sim::Fixed{1}, sim::Fixed{2}}, {3, 1}).describe() == "mixture(3 x fixed(1), 1 x fixed(2))");
}

TEST_CASE("invalid distribution parameters are refused with a message naming the distribution") {
  using Catch::Contains;
  CHECK_THROWS_WITH(sim::Distribution(sim::Uniform{5, 1}), Contains("uniform needs finite low <= high"));
  CHECK_THROWS_WITH(sim::Distribution(sim::Exponential{0}), Contains("exponential mean must be > 0"));
  CHECK_THROWS_WITH(sim::Distribution(sim::Pareto{1, 0}), Contains("pareto"));
  CHECK_THROWS_WITH(sim::Distribution(sim::Empirical{{1, 2}, {1}}), Contains("2 values but 1 weights"));
  CHECK_THROWS_WITH(sim::Distribution(sim::Empirical{{}, {}}), Contains("at least one value"));
  CHECK_THROWS_WITH(sim::Distribution(sim::Normal{0, -1}), Contains("stddev >= 0"));
  CHECK_THROWS_WITH(sim::mixture({}), Contains("mixture needs at least one part"));
  CHECK_THROWS_WITH(sim::mixture({sim::Fixed{1}}, {0}), Contains("mixture weights must not all be zero"));
}
