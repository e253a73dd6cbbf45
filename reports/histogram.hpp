#pragma once
// A latency histogram with logarithmic buckets shared by every histogram, so histograms of
// trials, of threads or of runs merge by adding counts, in any order, to the same result.
// A bucket spans 1% of its lower bound (the precision of every percentile it reports), from
// 1 microsecond up; the maximum is kept exactly.

#include <cstdint>
#include <map>
#include <vector>

namespace locksim::reports {

class Histogram {
 public:
  /// Relative width of a bucket.
  static constexpr double kGrowth = 1.01;

  void add(double ms);
  void merge(const Histogram& other);
  std::uint64_t count() const { return count_; }
  double max_ms() const { return max_ms_; }
  /// The value below which a share p/100 of values fall: the upper bound of the bucket that
  /// holds the rank, never above the maximum (0 when empty).
  double percentile(double p) const;
  /// Non-empty buckets as (lower bound in ms, count), in order: a CDF's points.
  std::vector<std::pair<double, std::uint64_t>> buckets() const;
  bool operator==(const Histogram&) const = default;

  /// Everything it holds, to send to another process: its buckets' counts, in bucket order, and
  /// its maximum. restored(state()) is the same histogram.
  struct State {
    std::vector<std::pair<int, std::uint64_t>> counts;
    double max_ms = 0;
  };
  State state() const;
  static Histogram restored(const State& state);

  static int bucket_of(double ms);
  static double lower_bound_ms(int bucket);

 private:
  std::map<int, std::uint64_t> counts_;  // bucket -> count; bucket 0 holds everything under 1 us
  std::uint64_t count_ = 0;
  double max_ms_ = 0;
};

}  // namespace locksim::reports
