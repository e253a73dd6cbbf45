#include "reports/histogram.hpp"

#include <algorithm>
#include <cmath>

namespace locksim::reports {

namespace {
constexpr double kFirstMs = 0.001;  // bucket 1 starts at 1 us
}

int Histogram::bucket_of(double ms) {
  if (!(ms >= kFirstMs)) return 0;
  return 1 + static_cast<int>(std::floor(std::log(ms / kFirstMs) / std::log(kGrowth)));
}

double Histogram::lower_bound_ms(int bucket) {
  return bucket <= 0 ? 0.0 : kFirstMs * std::pow(kGrowth, bucket - 1);
}

void Histogram::add(double ms) {
  ++counts_[bucket_of(ms)];
  ++count_;
  max_ms_ = std::max(max_ms_, ms);
}

void Histogram::merge(const Histogram& other) {
  for (const auto& [bucket, n] : other.counts_) counts_[bucket] += n;
  count_ += other.count_;
  max_ms_ = std::max(max_ms_, other.max_ms_);
}

double Histogram::percentile(double p) const {
  if (count_ == 0) return 0;
  const auto rank = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_))));
  std::uint64_t seen = 0;
  for (const auto& [bucket, n] : counts_) {
    seen += n;
    if (seen >= rank) return std::min(max_ms_, lower_bound_ms(bucket + 1));
  }
  return max_ms_;
}

std::vector<std::pair<double, std::uint64_t>> Histogram::buckets() const {
  std::vector<std::pair<double, std::uint64_t>> out;
  out.reserve(counts_.size());
  for (const auto& [bucket, n] : counts_) out.emplace_back(lower_bound_ms(bucket), n);
  return out;
}

Histogram::State Histogram::state() const {
  return {{counts_.begin(), counts_.end()}, max_ms_};
}

Histogram Histogram::restored(const State& state) {
  Histogram h;
  for (const auto& [bucket, n] : state.counts) {
    h.counts_[bucket] += n;
    h.count_ += n;
  }
  h.max_ms_ = state.max_ms;
  return h;
}

}  // namespace locksim::reports
