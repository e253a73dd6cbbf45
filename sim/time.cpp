#include "sim/time.hpp"

#include <fmt/format.h>

namespace sim {

std::string format_duration(Duration d) {
  std::int64_t ns = d.count();
  const bool negative = ns < 0;
  // Work on the magnitude in unsigned arithmetic so INT64_MIN has no overflow.
  std::uint64_t mag = negative ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  std::string text = fmt::format("{}{}.{:09d}", negative ? "-" : "", mag / 1'000'000'000u,
                                 mag % 1'000'000'000u);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text + " s";
}

std::string format_time(Time t) { return "t=" + format_duration(t.time_since_epoch()); }

}  // namespace sim
