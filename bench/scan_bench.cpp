#include "bench/scan_bench.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <unistd.h>
#include <vector>

#include "bench/commands.hpp"
#include "models/db/database.hpp"
#include "models/seed_rows.hpp"
#include "models/workloads/account_bind/accounts.hpp"

#ifndef LOCKSIM_BIN
#define LOCKSIM_BIN "locksim"
#endif

namespace bench {
namespace {

std::optional<double> delete_all(int rows, int repeats) {
  const std::string folder = "/tmp/locksim-bench-scan";
  const std::string file = fmt::format("{}/delete-{}.json", folder, rows);
  std::system(fmt::format("mkdir -p {}", folder).c_str());
  std::ofstream(file) << fmt::format(
      R"json({{"name": "delete-{0}", "workload": "sessions", "trials": 1,
  "database": {{"tables": ["CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, k VARCHAR(32) NOT NULL)"],
               "legacy": {{"table": "t", "column": "k", "keys": {0}, "duplicated_share": 0}}}},
  "steps": [{{"session": "s1", "sql": "BEGIN"}}, {{"session": "s1", "sql": "DELETE FROM t WHERE k <> 'none'"}},
            {{"session": "s1", "sql": "COMMIT"}}]}})json",
      rows);
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i)
    if (const auto t = timed_command(in_scratch_folder("scan", fmt::format("'{}' run '{}' > /dev/null 2>&1", LOCKSIM_BIN, file))))
      times.push_back(*t);
  return median_of(times);
}

}  // namespace

ScanFigures scan_bench(int repeats) { return {delete_all(10'000, repeats), delete_all(100'000, repeats)}; }

RowBytes bytes_per_seeded_row(int rows) {
  const auto resident = [] {
    std::ifstream statm("/proc/self/statm");
    long size = 0, pages = 0;
    statm >> size >> pages;
    return static_cast<double>(pages) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  };
  namespace db = models::db;
  db::Database database;
  database.create_table(models::workloads::account_bind::accounts_table(db::KeyIndex::non_unique));
  models::LegacyRows legacy;
  legacy.table = models::workloads::account_bind::kAccounts;
  legacy.column = "open_id";
  legacy.keys = rows;
  std::int64_t loaded = 0;
  const double before = resident();
  models::generate(legacy, [&](const models::SeedRow& row) {
    database.load_row(row.table, row.values, row.origin);
    ++loaded;
  });
  const double n = static_cast<double>(loaded);
  return {(resident() - before) / n, static_cast<double>(database.bytes_held()) / n};
}

}  // namespace bench
