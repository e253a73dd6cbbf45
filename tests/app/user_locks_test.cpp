// MariaDB's user locks (GET_LOCK and its family, models/db/innodb/user_locks.hpp) and the sessions
// workload's disconnect step, run as a user writes them. Each test pins a behaviour that a
// conformance script (conformance/sql-scripts/user-lock-*.json) checks on MariaDB 10.11.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "scenario_files.hpp"
#include "support.hpp"
#include "app/runner.hpp"
#include "app/scenario.hpp"

namespace {

using nlohmann::json;
using locksim::reports::Cell;

const char* kTable = "CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, k VARCHAR(32) NOT NULL, UNIQUE KEY uk_k (k))";

json step(const std::string& session, const std::string& sql) { return {{"session", session}, {"sql", sql}}; }
json disconnect(const std::string& session) { return {{"session", session}, {"disconnect", true}}; }

json sessions(json steps) {
  return {{"name", "x"}, {"workload", "sessions"}, {"database", {{"tables", {kTable}}}}, {"steps", steps}, {"trials", 1}};
}

locksim::reports::RunResults run(const json& doc) { return test::run_text(doc.dump()); }

using test::step_of;

// The one value a step's one-row, one-column SELECT answered.
Cell answer(const locksim::reports::RunResults& r, std::size_t n) {
  const auto& s = step_of(r, n);
  INFO("step " << n << ": " << s.sql << " " << s.message);
  REQUIRE(s.error == 0);
  REQUIRE(s.rows.size() == 1);
  REQUIRE(s.rows[0].size() == 1);
  return s.rows[0][0];
}

const Cell kOne{std::int64_t{1}};
const Cell kZero{std::int64_t{0}};
const Cell kNull{nullptr};

}  // namespace

TEST_CASE("GET_LOCK of a name the session holds takes it again, another session gets it only after as many releases") {
  const auto r = run(sessions({step("s1", "SELECT GET_LOCK('a', 0)"), step("s1", "SELECT GET_LOCK('a', 0)"),
                               step("s2", "SELECT GET_LOCK('a', 0)"), step("s1", "SELECT RELEASE_LOCK('a')"),
                               step("s2", "SELECT GET_LOCK('a', 0)"), step("s1", "SELECT RELEASE_LOCK('a')"),
                               step("s2", "SELECT GET_LOCK('a', 0)"), step("s1", "SELECT RELEASE_LOCK('a')"),
                               step("s1", "SELECT RELEASE_LOCK('never')"), step("s2", "SELECT RELEASE_ALL_LOCKS()")}));
  CHECK(answer(r, 1) == kOne);
  CHECK(answer(r, 2) == kOne);
  CHECK(answer(r, 3) == kZero);
  CHECK(answer(r, 5) == kZero);  // s1 still holds one taking
  CHECK(answer(r, 7) == kOne);
  CHECK(answer(r, 8) == kZero);  // s2's now
  CHECK(answer(r, 9) == kNull);
  CHECK(answer(r, 10) == kOne);
  CHECK(step_of(r, 1).columns == std::vector<std::string>{"GET_LOCK('a', 0)"});  // named as written
}

TEST_CASE("user-lock names compare byte by byte, and NULL, '', a negative timeout or a name over 192 bytes take nothing") {
  const std::string longest(192, 'n');
  const auto r = run(sessions({step("s1", "SELECT GET_LOCK('a', 0)"), step("s2", "SELECT GET_LOCK('A', 0)"),
                               step("s1", "SELECT GET_LOCK('', 0) IS NULL AND GET_LOCK(NULL, 0) IS NULL AND GET_LOCK('x', -1) IS NULL"),
                               step("s2", "SELECT IS_FREE_LOCK('x')"), step("s1", "SELECT GET_LOCK('" + longest + "', 0)"),
                               step("s1", "SELECT GET_LOCK('" + longest + "n', 0)"), step("s1", "SELECT GET_LOCK(5, 0)"),
                               step("s1", "SELECT RELEASE_ALL_LOCKS()")}));
  CHECK(answer(r, 2) == kOne);
  CHECK(answer(r, 3) == kOne);
  CHECK(answer(r, 4) == kOne);
  CHECK(answer(r, 5) == kOne);
  CHECK(step_of(r, 6).error == 1059);
  CHECK(step_of(r, 7).error == 4079);
  CHECK(answer(r, 8) == Cell{std::int64_t{2}});  // 'a' and the 192-byte name
}

TEST_CASE("a GET_LOCK of a held name waits to its timeout and answers 0, or gets the name when the holder releases it") {
  json release = step("s1", "SELECT RELEASE_LOCK('a')");
  release["at_ms"] = 3000;  // after s2's wait has ended, within s3's
  const auto r = run(sessions({step("s1", "SELECT GET_LOCK('a', 0)"), step("s2", "SELECT GET_LOCK('a', 2)"),
                               step("s3", "SELECT GET_LOCK('a', 10)"), release,
                               step("s3", "SELECT IS_USED_LOCK('a') = CONNECTION_ID()")}));
  CHECK(answer(r, 2) == kZero);
  CHECK(step_of(r, 2).waited_ms >= 2000);
  CHECK(step_of(r, 2).waited_for == std::vector<std::string>{"s1"});
  CHECK(answer(r, 3) == kOne);
  CHECK(answer(r, 5) == kOne);
}

TEST_CASE("a disconnect releases the session's user locks to a waiter and rolls back its transaction, its next step opens a new "
          "connection") {
  const auto r = run(sessions({step("s1", "SELECT GET_LOCK('a', 0)"), step("s1", "BEGIN"), step("s1", "INSERT INTO t (k) VALUES ('a')"),
                               step("s2", "SELECT GET_LOCK('a', 10)"), disconnect("s1"),
                               step("s1", "SELECT IS_USED_LOCK('a') = CONNECTION_ID()"), step("s1", "SELECT COUNT(*) FROM t")}));
  CHECK(answer(r, 4) == kOne);
  CHECK(step_of(r, 4).waited_ms > 0);
  CHECK(step_of(r, 5).sql == "disconnect");
  CHECK(step_of(r, 5).error == 0);
  CHECK(answer(r, 6) == kZero);
  CHECK(answer(r, 7) == kZero);
}

TEST_CASE("the GET_LOCK that closes a cycle of user-lock waits fails with 1213 and leaves its transaction open, its row kept") {
  const auto r = run(sessions({step("s1", "SELECT GET_LOCK('x', 0)"), step("s2", "BEGIN"), step("s2", "INSERT INTO t (k) VALUES ('b')"),
                               step("s2", "SELECT GET_LOCK('y', 0)"), step("s1", "SELECT GET_LOCK('y', 2)"),
                               step("s2", "SELECT GET_LOCK('x', 2)"), step("s2", "COMMIT"), step("s1", "SELECT COUNT(*) FROM t")}));
  CHECK(step_of(r, 6).error == 1213);
  CHECK(step_of(r, 6).undone.empty());
  CHECK(answer(r, 5) == kZero);  // waited on to its timeout: s2 kept 'y'
  CHECK(answer(r, 8) == kOne);
}

TEST_CASE("GET_LOCK in a statement that reads a table, and a step with both sql and disconnect, are refused with where they are") {
  CHECK_THROWS_WITH(run(sessions({step("s1", "SELECT k FROM t WHERE GET_LOCK('a', 0) = 1")})),
                    Catch::Contains("/steps/0/sql") && Catch::Contains("GET_LOCK() is modelled in a SELECT without a table"));
  json both = disconnect("s1");
  both["sql"] = "BEGIN";
  CHECK_THROWS_WITH(run(sessions({both})), Catch::Contains("/steps/0/disconnect") && Catch::Contains("not both"));
  CHECK_THROWS_WITH(run(sessions({{{"session", "s1"}, {"disconnect", false}}})), Catch::Contains("/steps/0/disconnect"));
}
