#include "models/seed_rows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

namespace models {

namespace {
// p to nine decimals, so the rule is integer arithmetic: floor(n p) = n q / 10^9.
constexpr std::int64_t kScale = 1'000'000'000;
std::int64_t share(const LegacyRows& legacy) { return static_cast<std::int64_t>(std::llround(legacy.duplicated_share * kScale)); }
// Key n is duplicated when floor(n p) steps up at n: evenly spread, floor(keys p) keys in all.
bool duplicated(std::int64_t n, std::int64_t q) { return n * q / kScale > (n - 1) * q / kScale; }
// The j-th duplicated key's copies (j from 1): half of them 2, a quarter 3, ..., at most `most`.
std::int64_t copies(std::uint64_t j, std::int64_t most) { return std::min<std::int64_t>(most, 2 + std::countr_zero(j)); }
}  // namespace

void generate(const LegacyRows& legacy, const std::function<void(const SeedRow&)>& row) {
  const std::int64_t q = share(legacy);
  const std::int64_t span_s = legacy.span_days * 86'400;
  std::int64_t id = legacy.first_id;
  std::uint64_t j = 0;  // how many keys so far were duplicated
  SeedRow out{legacy.table, {}, {}};
  for (std::int64_t n = 1; n <= legacy.keys; ++n) {
    const std::int64_t n_copies = duplicated(n, q) ? copies(++j, legacy.max_copies) : 1;
    const std::int64_t created_s = -span_s + (n - 1) * span_s / legacy.keys;
    out.origin = fmt::format("legacy row, created {} days before the start", -created_s / 86'400);
    for (std::int64_t c = 0; c < n_copies; ++c) {
      out.values.clear();
      out.values["id"] = id++;
      out.values[legacy.column] = legacy.key_prefix + std::to_string(n);
      if (!legacy.time_column.empty()) out.values[legacy.time_column] = created_s;
      row(out);
    }
  }
}

std::vector<SeedRow> legacy_rows(const LegacyRows& legacy) {
  std::vector<SeedRow> rows;
  rows.reserve(static_cast<std::size_t>(row_count(legacy)));
  generate(legacy, [&](const SeedRow& r) { rows.push_back(r); });
  return rows;
}

std::int64_t row_count(const LegacyRows& legacy) {
  const std::int64_t q = share(legacy);
  std::int64_t rows = 0;
  std::uint64_t j = 0;
  for (std::int64_t n = 1; n <= legacy.keys; ++n) rows += duplicated(n, q) ? copies(++j, legacy.max_copies) : 1;
  return rows;
}

void for_each_seed_row(const std::vector<SeedRow>& listed, const std::optional<LegacyRows>& legacy,
                       const std::function<void(const SeedRow&)>& row) {
  for (const SeedRow& r : listed) row(r);
  if (legacy) generate(*legacy, row);
}

}  // namespace models
