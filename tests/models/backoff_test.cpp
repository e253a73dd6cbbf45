// Retry backoff: the four jitter formulas of the AWS Architecture Blog, on many draws.

#include <catch2/catch.hpp>

#include <algorithm>

#include "models/app/backoff.hpp"
#include "support.hpp"

using namespace test;
using models::Jitter;

namespace {
constexpr int kDraws = 20'000;
const models::BackoffConfig kConfig{10ms, 1s, Jitter::none};

// The first `retries` delays of `draws` independent operations: [draw][retry].
std::vector<std::vector<sim::Duration>> delays(Jitter jitter, int retries, int draws = kDraws) {
  sim::ChoiceSource source(3);
  auto stream = source.stream("backoff");
  auto c = kConfig;
  c.jitter = jitter;
  std::vector<std::vector<sim::Duration>> out;
  for (int d = 0; d < draws; ++d) {
    models::Backoff backoff(c);
    auto& row = out.emplace_back();
    for (int r = 0; r < retries; ++r) row.push_back(backoff.next(stream));
  }
  return out;
}

sim::Duration exponential(int n) { return std::min<sim::Duration>(1s, 10ms * (1 << n)); }

double mean_ms(const std::vector<std::vector<sim::Duration>>& d, int retry) {
  double sum = 0;
  for (const auto& row : d) sum += std::chrono::duration<double, std::milli>(row[static_cast<std::size_t>(retry)]).count();
  return sum / static_cast<double>(d.size());
}
}  // namespace

TEST_CASE("no jitter: min(cap, base * 2^n), exactly") {
  const auto d = delays(Jitter::none, 9, 1);
  CHECK(d[0] == std::vector<sim::Duration>{10ms, 20ms, 40ms, 80ms, 160ms, 320ms, 640ms, 1s, 1s});
}

TEST_CASE("full jitter: uniform between 0 and min(cap, base * 2^n)") {
  const auto d = delays(Jitter::full, 8);
  for (int n = 0; n < 8; ++n) {
    for (const auto& row : d) {
      CHECK(row[static_cast<std::size_t>(n)] >= 0ms);
      CHECK(row[static_cast<std::size_t>(n)] <= exponential(n));
    }
    CHECK(mean_ms(d, n) == Approx(sim::to_ns(sim::Time{exponential(n)}) / 2e6).epsilon(0.02));
  }
}

TEST_CASE("equal jitter: half the exponential delay plus uniform over the other half") {
  const auto d = delays(Jitter::equal, 8);
  for (int n = 0; n < 8; ++n) {
    for (const auto& row : d) {
      CHECK(row[static_cast<std::size_t>(n)] >= exponential(n) / 2);
      CHECK(row[static_cast<std::size_t>(n)] <= exponential(n));
    }
    CHECK(mean_ms(d, n) == Approx(sim::to_ns(sim::Time{exponential(n)}) * 0.75 / 1e6).epsilon(0.02));
  }
}

TEST_CASE("decorrelated jitter: min(cap, uniform between base and three times the previous delay)") {
  const auto d = delays(Jitter::decorrelated, 10);
  for (const auto& row : d) {
    sim::Duration previous = 10ms;
    for (const auto& delay : row) {
      CHECK(delay >= 10ms);
      CHECK(delay <= std::min<sim::Duration>(1s, previous * 3));
      previous = delay;
    }
  }
  CHECK(mean_ms(d, 0) == Approx(20).epsilon(0.02));  // U(10, 30)
}

TEST_CASE("a backoff with the cap below the base is refused") {
  CHECK_THROWS_WITH(models::Backoff({1s, 10ms, Jitter::full}), Catch::Contains("needs 0 <= base <= cap"));
}
