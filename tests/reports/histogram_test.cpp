// Latency histograms: percentiles within a bucket's 1%, and merging in any order equals
// recording everything in one.

#include <catch2/catch.hpp>
#include <rapidcheck/catch.h>

#include <algorithm>
#include <cmath>

#include "reports/histogram.hpp"

using locksim::reports::Histogram;

TEST_CASE("a percentile is within 1% above the exact one, and never above the maximum") {
  Histogram h;
  std::vector<double> values;
  for (int i = 1; i <= 10'000; ++i) values.push_back(0.01 * i * std::sqrt(static_cast<double>(i)));
  for (double v : values) h.add(v);
  std::sort(values.begin(), values.end());
  for (double p : {50.0, 90.0, 99.0, 99.9}) {
    const double exact = values[static_cast<std::size_t>(std::ceil(p / 100 * values.size())) - 1];
    INFO("p" << p);
    CHECK(h.percentile(p) >= exact);
    CHECK(h.percentile(p) <= exact * Histogram::kGrowth);
  }
  CHECK(h.percentile(100) == values.back());
  CHECK(h.max_ms() == values.back());
  CHECK(h.count() == values.size());
}

TEST_CASE("values under a microsecond and an empty histogram have sensible percentiles") {
  Histogram h;
  CHECK(h.percentile(50) == 0);
  h.add(0.0);
  h.add(0.0004);
  CHECK(h.percentile(50) == 0.0004);  // the first bucket's bound is capped by the maximum
}

TEST_CASE("merging histograms gives the histogram of all their values, whatever the split") {
  rc::prop("merge is recording everything in one", [](const std::vector<std::uint32_t>& raw, std::uint8_t split) {
    Histogram all, left, right;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      const double ms = raw[i] / 1000.0;
      all.add(ms);
      (i % (split + 1u) == 0 ? left : right).add(ms);
    }
    Histogram merged = right;
    merged.merge(left);
    RC_ASSERT(merged == all);
    RC_ASSERT(merged.percentile(99) == all.percentile(99));
  });
}
