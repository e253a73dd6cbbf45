// database.legacy: seeded rows generated as a year of check-then-insert left them (the vivo
// article, sources/003 (docs/sources.md), section 二: about 3% of OpenIDs duplicated, the copies with
// consecutive ids and one creation time), by the rule docs/scenario.md gives ("Legacy rows").

#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "app/database_input.hpp"
#include "app/runner.hpp"
#include "scenario_files.hpp"
#include "support.hpp"

namespace {

using nlohmann::json;
namespace db = models::db;

std::int64_t int_of(const models::SeedRow& row, const std::string& column) { return std::get<std::int64_t>(row.values.at(column)); }
std::string text_of(const models::SeedRow& row, const std::string& column) { return std::get<std::string>(row.values.at(column)); }

const char* kPlain = "CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, k VARCHAR(32) NOT NULL, created BIGINT NOT NULL DEFAULT 0)";

locksim::Scenario load(const json& doc) {
  test::TempScenario file(doc.dump());
  return locksim::load_scenario(file.path);
}

json legacy_doc(json legacy, json rows = json::object()) {
  json database = {{"tables", {kPlain}}, {"legacy", legacy}};
  if (!rows.empty()) database["rows"] = rows;
  return {{"name", "x"},
          {"workload", "sessions"},
          {"database", database},
          {"steps", {{{"session", "s1"}, {"sql", "SELECT 1 FROM t WHERE k = 'legacy:1'"}}}}};
}

}  // namespace

TEST_CASE("legacy rows: exactly floor(keys p) keys duplicated, evenly spread, half with 2 rows, a quarter with 3, up to "
          "max_copies",
          "[legacy]") {
  models::LegacyRows l{.table = "t", .column = "k", .keys = 1000, .duplicated_share = 0.03, .max_copies = 3};
  const auto rows = models::legacy_rows(l);
  std::map<std::string, int> copies;
  for (const auto& row : rows) ++copies[text_of(row, "k")];
  CHECK(copies.size() == 1000);
  std::vector<int> duplicated;  // the numbers n of duplicated keys, in order
  std::map<int, int> by_count;
  for (int n = 1; n <= 1000; ++n) {
    const int c = copies.at("legacy:" + std::to_string(n));
    if (c > 1) duplicated.push_back(n);
    ++by_count[c];
  }
  REQUIRE(duplicated.size() == 30);
  for (std::size_t j = 1; j < duplicated.size(); ++j) {  // one in every 33 or 34 keys
    CHECK(duplicated[j] - duplicated[j - 1] >= 33);
    CHECK(duplicated[j] - duplicated[j - 1] <= 34);
  }
  CHECK(by_count[2] == 15);  // j + 1 odd
  CHECK(by_count[3] == 15);  // capped at max_copies
  CHECK(rows.size() == 1000 + 15 + 2 * 15);
  CHECK(models::row_count(l) == static_cast<std::int64_t>(rows.size()));  // counted without making them
  l.max_copies = 100;
  std::map<std::string, int> uncapped;
  for (const auto& row : models::legacy_rows(l)) ++uncapped[text_of(row, "k")];
  std::map<int, int> counts;
  for (const auto& [key, c] : uncapped) ++counts[c];
  CHECK(counts == std::map<int, int>{{1, 970}, {2, 15}, {3, 8}, {4, 4}, {5, 2}, {6, 1}});
}

TEST_CASE("legacy rows: consecutive ids in key order, the copies of a key together with one creation time, times spread "
          "evenly over span_days before the start",
          "[legacy]") {
  const models::LegacyRows l{.table = "t", .column = "k", .keys = 100, .duplicated_share = 0.5, .span_days = 10, .time_column = "created", .first_id = 7};
  const auto rows = models::legacy_rows(l);
  std::int64_t id = 7;
  std::map<std::string, std::set<std::int64_t>> times;
  std::int64_t last_time = -1'000'000'000;
  for (const auto& row : rows) {
    CHECK(int_of(row, "id") == id++);
    const std::int64_t t = int_of(row, "created");
    CHECK(t >= last_time);  // key order is time order
    last_time = t;
    times[text_of(row, "k")].insert(t);
  }
  for (const auto& [key, t] : times) CHECK(t.size() == 1);
  CHECK(int_of(rows.front(), "created") == -864'000);                       // key 1: span_days before the start
  CHECK(*times.at("legacy:51").begin() == -864'000 + 50 * 864'000 / 100);  // key n at -span + (n-1) span / keys
  CHECK(rows.front().origin == "legacy row, created 10 days before the start");
  CHECK(text_of(rows[0], "k") == "legacy:1");
  CHECK(text_of(rows[1], "k") == "legacy:2");  // key 1 is not duplicated at p = 0.5: floor(0.5) = floor(0)
  CHECK(text_of(rows[2], "k") == "legacy:2");
}

TEST_CASE("database.legacy puts its rows after the listed rows of its table, and the scenario keeps the rule, not the rows",
          "[legacy]") {
  const auto s = load(legacy_doc({{"table", "t"}, {"column", "k"}, {"keys", 50}, {"time_column", "created"}},
                                 {{"t", {{{"k", "a"}}, {{"k", "b"}, {"id", 10}}}}}));
  const auto& setup = s.deployment.database;
  CHECK(setup.rows.size() == 2);  // the listed ones
  REQUIRE(setup.legacy);
  CHECK(setup.legacy->keys == 50);
  CHECK(setup.legacy->key_prefix == "legacy:");
  std::vector<models::SeedRow> rows;
  models::for_each_seed_row(setup.rows, setup.legacy, [&](const models::SeedRow& row) { rows.push_back(row); });
  REQUIRE(rows.size() == 2 + 50 + 1);  // floor(50 * 0.03) = 1 duplicated key, with 2 rows
  CHECK(int_of(rows[2], "id") == 11);
  CHECK(rows[2].origin.starts_with("legacy row, created 365 days"));
}

TEST_CASE("database.legacy refuses a bad table, column or number in one line with its JSON path", "[legacy]") {
  CHECK(test::refusal(legacy_doc({{"table", "u"}, {"column", "k"}, {"keys", 5}}).dump())
            .starts_with("/database/legacy/table: expected a table of database.tables, or t_account"));
  CHECK(test::refusal(legacy_doc({{"table", "t"}, {"keys", 5}}).dump())
            .starts_with("/database/legacy: expected \"column\": the column of t the keys go in"));
  CHECK(test::refusal(legacy_doc({{"table", "t"}, {"column", "w"}, {"keys", 5}}).dump())
            .starts_with("/database/legacy/column: expected a column of t other than id"));
  CHECK(test::refusal(legacy_doc({{"table", "t"}, {"column", "k"}, {"keys", 0}}).dump())
            .starts_with("/database/legacy/keys: expected an integer from 1 to 10000000"));
  CHECK(test::refusal(legacy_doc({{"table", "t"}, {"column", "k"}, {"keys", 5}, {"duplicated_share", 2}}).dump())
            .starts_with("/database/legacy/duplicated_share: expected a number from 0 to 1"));
  CHECK(test::refusal(legacy_doc({{"table", "t"}, {"column", "k"}, {"keys", 5}, {"max_copies", 1}}).dump())
            .starts_with("/database/legacy/max_copies: expected an integer from 2 to 100"));
  const char* unique = "CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, k VARCHAR(32) NOT NULL, UNIQUE KEY uk (k))";
  json doc = legacy_doc({{"table", "t"}, {"keys", 100}});
  doc["database"]["tables"] = {unique};
  CHECK(test::refusal(doc.dump()).starts_with("/database/legacy: expected a row the table takes"));
}

TEST_CASE("the seeded rows as SQL: one INSERT a row with its id, in id order", "[legacy]") {
  const auto s = load(legacy_doc({{"table", "t"}, {"column", "k"}, {"keys", 2}, {"key_prefix", "o'k:"}, {"span_days", 1}},
                                 {{"t", {{{"k", "z"}, {"id", 5}}, {{"k", "y"}, {"id", 2}}}}}));
  std::ostringstream sql;
  locksim::write_rows_sql(s.deployment.database, sql);
  CHECK(sql.str() ==
        "INSERT INTO t (id, k) VALUES (2, 'y');\n"
        "INSERT INTO t (id, k) VALUES (5, 'z');\n"
        "INSERT INTO t (id, k) VALUES (6, 'o''k:1');\n"
        "INSERT INTO t (id, k) VALUES (7, 'o''k:2');\n");
}

TEST_CASE("a statement over many seeded rows counts them against the trial's event budget and is stopped inside past it",
          "[legacy]") {
  json doc = legacy_doc({{"table", "t"}, {"column", "k"}, {"keys", 100000}});
  doc["steps"] = {{{"session", "s1"}, {"sql", "BEGIN"}},
                  {{"session", "s1"}, {"sql", "DELETE FROM t WHERE k <> 'zz'"}},
                  {{"session", "s1"}, {"sql", "COMMIT"}}};
  doc["trials"] = 1;
  const auto whole = locksim::run_scenario(load(doc));
  const auto& done = whole.strategies.front();
  CHECK(done.steps.at(1).affected > 100000);  // 100,000 keys' rows are about 1,000 events' worth: well inside the default budget
  CHECK((done.counts.count("unfinished_runs") == 0 || done.counts.at("unfinished_runs").total == 0));

  doc["event_budget"] = 1000;
  const auto cut = locksim::run_scenario(load(doc));
  const auto& stopped = cut.strategies.front();
  CHECK(stopped.counts.at("unfinished_runs").total == 1);
  CHECK(stopped.steps.at(1).finished_ms < 0);  // the DELETE never answered
  CHECK(stopped.steps.at(2).issued_ms < 0);    // nor did the script go on
}
