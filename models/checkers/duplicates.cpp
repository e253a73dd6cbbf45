#include "models/checkers/duplicates.hpp"

#include "models/checkers/checker.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <map>

namespace models::checkers {

Duplicates find_duplicates(const std::vector<db::RowRecord>& rows, const std::string& key_column, std::size_t examples) {
  std::map<db::Value, std::vector<const db::RowRecord*>> by_key;
  for (const auto& r : rows)  // NULL is no business key: a unique index admits any number of NULLs
    if (const db::Value& key = r.row.values.at(key_column); !db::is_null(key)) by_key[key].push_back(&r);
  Duplicates out;
  for (const auto& [key, group] : by_key) {
    if (group.size() < 2) continue;
    ++out.duplicated_keys;
    out.duplicate_rows += group.size() - 1;
    if (out.examples.size() >= examples) continue;
    std::string ids, who;
    for (const auto* r : group) {
      ids += (ids.empty() ? "" : ", ") + std::to_string(r->row.id);
      who += fmt::format(FMT_COMPILE("{}{} (t={:.3f} s)"), who.empty() ? "" : "; ", r->origin.who,
                         std::chrono::duration<double>(r->origin.inserted_at.time_since_epoch()).count());
    }
    const auto apart = group.back()->origin.inserted_at - group.front()->origin.inserted_at;
    out.examples.push_back(fmt::format(FMT_COMPILE("rows {}, same {} {}, inserted {:.1f} ms apart by {}"), ids, key_column,
                                       db::to_string(key),
                                       std::chrono::duration<double, std::milli>(apart < sim::Duration{} ? -apart : apart).count(),
                                       who));
  }
  return out;
}

Duplicates find_duplicates(const db::Database& database, const std::string& table, const std::string& key_column,
                           std::size_t examples) {
  return find_duplicates(database.rows_sharing(table, key_column), key_column, examples);
}

}  // namespace models::checkers

namespace models::checkers {
namespace {
class DuplicateRows : public Checker {
 public:
  std::vector<MetricInfo> metrics() const override {
    return {{.name = "duplicate_rows", .unit = "rows", .meaning = "rows beyond the first for one business key: the duplicate inserts",
             .finding = true, .counts_seeded_rows = true},
            {.name = "duplicated_keys", .unit = "keys", .meaning = "business keys with more than one row", .counts_seeded_rows = true}};
  }
  void check(const Trial& trial, Findings& out) const override {
    for (const KeyedTable& t : trial.keyed_tables) {
      const Duplicates d = find_duplicates(*trial.database, t.table, t.key_column);
      out.add("duplicate_rows", static_cast<double>(d.duplicate_rows));
      out.add("duplicated_keys", static_cast<double>(d.duplicated_keys));
      out.examples.insert(out.examples.end(), d.examples.begin(), d.examples.end());
    }
  }
};
}  // namespace

const Checker& duplicate_rows() {
  static const DuplicateRows checker;
  return checker;
}
}  // namespace models::checkers
