// The PostgreSQL engine (models/db/postgres/), run through the sessions workload as a user
// writes it: PostgreSQL's SQL on named sessions. Each test pins a behaviour of PostgreSQL 15 that
// its manual documents and conformance/pg-scripts checks on a real server, and most of them one
// where it differs from InnoDB.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "scenario_files.hpp"
#include "support.hpp"
#include "app/runner.hpp"
#include "app/scenario.hpp"

namespace {

using nlohmann::json;

const char* kUnique = "CREATE TABLE t (id SERIAL PRIMARY KEY, k VARCHAR(32) NOT NULL UNIQUE, v INT NOT NULL DEFAULT 0)";
const char* kPlain = "CREATE TABLE t (id SERIAL PRIMARY KEY, k VARCHAR(32) NOT NULL, v INT NOT NULL DEFAULT 0)";

json step(const std::string& session, const std::string& sql) { return {{"session", session}, {"sql", sql}}; }

json pg(json steps, const char* table = kUnique, json rows = nullptr) {
  json database = {{"engine", "postgresql"}, {"tables", {table}}};
  if (!rows.is_null()) database["rows"] = {{"t", rows}};
  return {{"name", "x"}, {"workload", "sessions"}, {"database", database}, {"steps", steps}, {"trials", 1}};
}

locksim::reports::RunResults run(const json& doc) { return test::run_text(doc.dump()); }

using test::step_of;

std::size_t rows_of(const locksim::reports::RunResults& r, const std::string& table) {
  for (const auto& t : r.strategies.front().tables)
    if (t.name == table) return static_cast<std::size_t>(t.row_count);
  FAIL("no table " << table);
  return 0;
}

}  // namespace

TEST_CASE("PostgreSQL: an insert of a key another open transaction inserted waits, then gets 23505 if it commits") {
  const auto r = run(pg({step("s1", "BEGIN"), step("s1", "INSERT INTO t (k) VALUES ('a')"), step("s2", "INSERT INTO t (k) VALUES ('a')"),
                         step("s1", "COMMIT")}));
  CHECK(step_of(r, 3).waited_for == std::vector<std::string>{"s1"});
  CHECK(step_of(r, 3).code == "23505");
  CHECK(step_of(r, 3).message == "duplicate key value violates unique constraint \"t_k_key\"");
  CHECK(rows_of(r, "t") == 1);
}

TEST_CASE("PostgreSQL: a row locked FOR SHARE is updated by its holder at once, though another session waits for it: no deadlock") {
  const auto r = run(pg({step("s1", "BEGIN"), step("s1", "SELECT v FROM t WHERE k = 'a' FOR SHARE"),
                         step("s2", "UPDATE t SET v = v - 1 WHERE k = 'a'"), step("s1", "UPDATE t SET v = 10 WHERE k = 'a'"),
                         step("s1", "COMMIT"), step("s2", "SELECT v FROM t WHERE k = 'a'")},
                        kUnique, json::array({{{"k", "a"}, {"v", 5}}})));
  CHECK(step_of(r, 3).waited_for == std::vector<std::string>{"s1"});
  CHECK(step_of(r, 3).code.empty());
  CHECK(step_of(r, 4).waited_for.empty());
  CHECK(step_of(r, 6).rows == std::vector<std::vector<locksim::reports::Cell>>{{std::int64_t{9}}});
}

TEST_CASE("PostgreSQL: a row locked FOR UPDATE is updated by its holder at once, though another session waits for it: no deadlock") {
  const auto r = run(pg({step("s1", "BEGIN"), step("s1", "SELECT k, v + 1 AS next_v FROM t WHERE k = 'a' FOR UPDATE"),
                         step("s2", "UPDATE t SET v = v - 1 WHERE k = 'a'"), step("s1", "UPDATE t SET v = 4 WHERE k = 'a'"),
                         step("s1", "COMMIT"), step("s2", "SELECT v FROM t WHERE k = 'a'")},
                        kUnique, json::array({{{"k", "a"}, {"v", 5}}})));
  CHECK(step_of(r, 2).columns == std::vector<std::string>{"k", "next_v"});
  CHECK(step_of(r, 2).rows == std::vector<std::vector<locksim::reports::Cell>>{{std::string("a"), std::int64_t{6}}});
  CHECK(step_of(r, 3).waited_for == std::vector<std::string>{"s1"});
  CHECK(step_of(r, 3).code.empty());
  CHECK(step_of(r, 4).waited_for.empty());
  CHECK(step_of(r, 6).rows == std::vector<std::vector<locksim::reports::Cell>>{{std::int64_t{3}}});
}

TEST_CASE("PostgreSQL: a unique index, on one column or several, takes a NULL for no conflict: neither insert waits, ON CONFLICT "
          "inserts, NULL into a NOT NULL column is 23502") {
  const char* table = "CREATE TABLE t (id SERIAL PRIMARY KEY, k VARCHAR(32) UNIQUE, v INT NOT NULL DEFAULT 0, c TEXT, UNIQUE (v, c))";
  const auto r = run(pg({step("s1", "BEGIN"), step("s1", "INSERT INTO t (k) VALUES (NULL)"), step("s2", "INSERT INTO t (k) VALUES (NULL)"),
                         step("s2", "INSERT INTO t (k, v) VALUES (NULL, 1) ON CONFLICT (k) DO NOTHING"), step("s1", "COMMIT"),
                         step("s1", "INSERT INTO t (k, v) VALUES ('b', NULL)"), step("s1", "SELECT id FROM t ORDER BY k, id")},
                        table));
  CHECK(step_of(r, 3).waited_for.empty());
  CHECK(step_of(r, 3).affected == 1);
  CHECK(step_of(r, 4).affected == 1);
  CHECK(step_of(r, 6).code == "23502");
  CHECK(step_of(r, 6).message == "null value in column \"v\" of relation \"t\" violates not-null constraint");
  CHECK(rows_of(r, "t") == 3);
}

TEST_CASE("PostgreSQL: an aggregate's alias names its column and the value stays the aggregate's") {
  const auto r = run(pg({step("s1", "INSERT INTO t (k, v) VALUES ('a', 3), ('b', 4)"), step("s1", "SELECT count(*) AS n FROM t"),
                         step("s1", "SELECT sum(v) AS total FROM t")}));
  CHECK(step_of(r, 2).columns == std::vector<std::string>{"n"});
  CHECK(step_of(r, 2).rows == std::vector<std::vector<locksim::reports::Cell>>{{std::int64_t{2}}});
  CHECK(step_of(r, 3).rows == std::vector<std::vector<locksim::reports::Cell>>{{std::int64_t{7}}});
}

TEST_CASE("PostgreSQL: COALESCE gives the first value that is not NULL, in an UPDATE's SET and a WHERE") {
  const auto r = run(pg({step("s1", "INSERT INTO t (k, v) VALUES ('a', 3), ('b', NULL)"),
                         step("s1", "UPDATE t SET v = COALESCE(v, 0) + 1"),
                         step("s1", "SELECT k FROM t WHERE COALESCE(v, 0) = 1"),
                         step("s1", "SELECT sum(v) FROM t")},
                        "CREATE TABLE t (id SERIAL PRIMARY KEY, k VARCHAR(32) NOT NULL UNIQUE, v INT)"));
  CHECK(step_of(r, 2).affected == 2);
  CHECK(step_of(r, 3).rows == std::vector<std::vector<locksim::reports::Cell>>{{std::string("b")}});
  CHECK(step_of(r, 4).rows == std::vector<std::vector<locksim::reports::Cell>>{{std::int64_t{5}}});
}

TEST_CASE("PostgreSQL: GROUP BY with HAVING finds the keys held twice, ordered by the aggregate's alias") {
  const auto r = run(pg({step("s1", "INSERT INTO t (k, v) VALUES ('a', 1), ('b', 2), ('a', 3), ('c', 4), ('b', 5), ('a', 6)"),
                         step("s1", "SELECT k, count(*) AS n FROM t GROUP BY k HAVING count(*) > 1 ORDER BY n DESC"),
                         step("s1", "SELECT k FROM t GROUP BY k HAVING sum(v) < 5 ORDER BY k")},
                        kPlain));
  using Rows = std::vector<std::vector<locksim::reports::Cell>>;
  CHECK(step_of(r, 2).columns == std::vector<std::string>{"k", "n"});
  CHECK(step_of(r, 2).rows == Rows{{std::string("a"), std::int64_t{3}}, {std::string("b"), std::int64_t{2}}});
  CHECK(step_of(r, 3).rows == Rows{{std::string("c")}});
}

TEST_CASE("PostgreSQL: an insert waiting on a key inserts it when the other transaction rolls back") {
  const auto r = run(pg({step("s1", "BEGIN"), step("s1", "INSERT INTO t (k) VALUES ('a')"), step("s2", "INSERT INTO t (k) VALUES ('a')"),
                         step("s1", "ROLLBACK")}));
  CHECK(step_of(r, 3).waited_for == std::vector<std::string>{"s1"});
  CHECK(step_of(r, 3).code.empty());
  CHECK(step_of(r, 3).affected == 1);
}

TEST_CASE("PostgreSQL: three inserts of one key with the first rolled back never deadlock, one waiter gets 23505") {
  const auto r = run(pg({step("s1", "BEGIN"), step("s1", "INSERT INTO t (k) VALUES ('a')"), step("s2", "BEGIN"),
                         step("s2", "INSERT INTO t (k) VALUES ('a')"), step("s3", "BEGIN"), step("s3", "INSERT INTO t (k) VALUES ('a')"),
                         step("s1", "ROLLBACK"), step("s2", "COMMIT"), step("s3", "COMMIT")}));
  CHECK(step_of(r, 4).deadlock_cycle.empty());
  CHECK(step_of(r, 6).deadlock_cycle.empty());
  const int refused = (step_of(r, 4).code == "23505") + (step_of(r, 6).code == "23505");
  CHECK(refused == 1);
  CHECK(rows_of(r, "t") == 1);
}

TEST_CASE("PostgreSQL: SELECT ... FOR UPDATE of an absent key locks nothing, so two sessions both insert it") {
  const auto r = run(pg({step("s1", "BEGIN"), step("s1", "SELECT id FROM t WHERE k = 'a' FOR UPDATE"), step("s2", "BEGIN"),
                         step("s2", "SELECT id FROM t WHERE k = 'a' FOR UPDATE"), step("s1", "INSERT INTO t (k) VALUES ('a')"),
                         step("s2", "INSERT INTO t (k) VALUES ('a')"), step("s1", "COMMIT"), step("s2", "COMMIT")},
                        kPlain));
  for (std::size_t n = 1; n <= 8; ++n) CHECK(step_of(r, n).waited_for.empty());
  CHECK(rows_of(r, "t") == 2);
}

TEST_CASE("PostgreSQL: ON CONFLICT DO NOTHING waits, then inserts nothing under READ COMMITTED and fails with 40001 under "
          "REPEATABLE READ") {
  const auto r = run(pg({step("s1", "BEGIN"), step("s1", "INSERT INTO t (k, v) VALUES ('a', 1)"),
                         step("s2", "INSERT INTO t (k, v) VALUES ('a', 2) ON CONFLICT (k) DO NOTHING"),
                         step("s3", "BEGIN ISOLATION LEVEL REPEATABLE READ"),
                         step("s3", "INSERT INTO t (k, v) VALUES ('a', 3) ON CONFLICT (k) DO NOTHING"), step("s1", "COMMIT")}));
  CHECK(step_of(r, 3).waited_for == std::vector<std::string>{"s1"});
  CHECK(step_of(r, 3).code.empty());
  CHECK(step_of(r, 3).affected == 0);
  CHECK(step_of(r, 5).code == "40001");
}

TEST_CASE("PostgreSQL: ON CONFLICT DO UPDATE updates the row with EXCLUDED where its WHERE holds, and RETURNING shows it") {
  const auto r = run(pg({step("s1", "INSERT INTO t (k, v) VALUES ('a', 5) ON CONFLICT (k) DO UPDATE SET v = t.v + excluded.v "
                                    "WHERE t.v < 10 RETURNING k, v"),
                         step("s1", "INSERT INTO t (k, v) VALUES ('a', 5) ON CONFLICT (k) DO UPDATE SET v = t.v + excluded.v "
                                    "WHERE t.v < 10 RETURNING k, v")},
                        kUnique, json::array({{{"k", "a"}, {"v", 7}}})));
  const auto& first = step_of(r, 1);
  CHECK(first.columns == std::vector<std::string>{"k", "v"});
  REQUIRE(first.rows.size() == 1);
  CHECK(first.rows[0] == std::vector<locksim::reports::Cell>{std::string("a"), std::int64_t{12}});
  CHECK(step_of(r, 2).affected == 0);  // 12 is not below 10: the row is left as it is
  CHECK(step_of(r, 2).rows.empty());
}

TEST_CASE("PostgreSQL: a multi-row ON CONFLICT DO UPDATE that proposes one key twice is 21000, and undoes the statement") {
  const auto r = run(pg({step("s1", "INSERT INTO t (k, v) VALUES ('b', 1), ('b', 2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v"),
                         step("s1", "INSERT INTO t (k, v) VALUES ('a', 1), ('a', 2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v"),
                         step("s1", "INSERT INTO t (k, v) VALUES ('a', 5), ('c', 6) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v"),
                         step("s1", "INSERT INTO t (k, v) VALUES ('d', 1), ('d', 2) ON CONFLICT (k) DO NOTHING")},
                        kUnique, json::array({{{"k", "a"}}})));
  CHECK(step_of(r, 1).code == "21000");  // the first row inserted b
  CHECK(step_of(r, 2).code == "21000");  // the first row updated a
  CHECK(step_of(r, 3).affected == 2);
  CHECK(step_of(r, 4).affected == 1);
  CHECK(rows_of(r, "t") == 3);  // a, c, d: no b
}

TEST_CASE("PostgreSQL: ON CONFLICT naming a column without a unique index is 42P10") {
  const auto r = run(pg({step("s1", "INSERT INTO t (k, v) VALUES ('a', 1) ON CONFLICT (v) DO NOTHING")}));
  CHECK(step_of(r, 1).code == "42P10");
}

TEST_CASE("PostgreSQL: under READ COMMITTED an UPDATE that waited re-reads the row: v = v + 1 after a committed increment "
          "gives the sum, and a WHERE the new version fails updates nothing") {
  const auto r = run(pg({step("s1", "BEGIN"), step("s1", "UPDATE t SET v = v + 1 WHERE id = 1"),
                         step("s2", "UPDATE t SET v = v + 1 WHERE id = 1"), step("s3", "BEGIN"),
                         step("s3", "UPDATE t SET v = 100 WHERE id = 1 AND v = 0"), step("s1", "COMMIT"),
                         step("s2", "SELECT v FROM t WHERE id = 1")},  // after s2's UPDATE: a session runs its steps in order
                        kUnique, json::array({{{"k", "a"}, {"v", 0}}})));
  CHECK(step_of(r, 3).waited_for == std::vector<std::string>{"s1"});
  CHECK(step_of(r, 3).affected == 1);
  CHECK(step_of(r, 5).affected == 0);
  REQUIRE(step_of(r, 7).rows.size() == 1);
  CHECK(step_of(r, 7).rows[0][0] == locksim::reports::Cell{std::int64_t{2}});
}

TEST_CASE("PostgreSQL: under REPEATABLE READ an UPDATE of a row another transaction changed since the snapshot is 40001") {
  const auto r = run(pg({step("s1", "BEGIN ISOLATION LEVEL REPEATABLE READ"), step("s1", "SELECT v FROM t WHERE id = 1"),
                         step("s2", "UPDATE t SET v = 5 WHERE id = 1"), step("s1", "UPDATE t SET v = 6 WHERE id = 1"),
                         step("s1", "SELECT v FROM t WHERE id = 1"), step("s1", "ROLLBACK")},
                        kUnique, json::array({{{"k", "a"}, {"v", 0}}})));
  CHECK(step_of(r, 4).code == "40001");
  CHECK(step_of(r, 4).message == "could not serialize access due to concurrent update");
  CHECK(step_of(r, 5).code == "25P02");  // the error aborted the transaction
}

TEST_CASE("PostgreSQL: an error inside a transaction aborts it: 25P02 until ROLLBACK, and its changes are gone") {
  const auto r = run(pg({step("s1", "BEGIN"), step("s1", "INSERT INTO t (k) VALUES ('b')"), step("s1", "INSERT INTO t (k) VALUES ('a')"),
                         step("s1", "SELECT * FROM t"), step("s1", "COMMIT"), step("s1", "SELECT k FROM t")},
                        kUnique, json::array({{{"k", "a"}}})));
  CHECK(step_of(r, 3).code == "23505");
  CHECK(step_of(r, 4).code == "25P02");
  CHECK(step_of(r, 5).code.empty());  // COMMIT of an aborted transaction rolls it back
  CHECK(step_of(r, 6).rows.size() == 1);
}

TEST_CASE("PostgreSQL: FOR KEY SHARE and FOR NO KEY UPDATE do not conflict, FOR KEY SHARE and FOR UPDATE do, NOWAIT is 55P03 "
          "and SKIP LOCKED leaves the row") {
  const auto r = run(pg({step("s1", "BEGIN"), step("s1", "SELECT id FROM t WHERE id = 1 FOR NO KEY UPDATE"),
                         step("s2", "SELECT id FROM t WHERE id = 1 FOR KEY SHARE"), step("s2", "SELECT id FROM t WHERE id = 1 FOR UPDATE NOWAIT"),
                         step("s2", "SELECT id FROM t ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED"), step("s1", "COMMIT")},
                        kUnique, json::array({{{"k", "a"}}, {{"k", "b"}}})));
  CHECK(step_of(r, 3).waited_for.empty());
  CHECK(step_of(r, 3).rows.size() == 1);
  CHECK(step_of(r, 4).code == "55P03");
  REQUIRE(step_of(r, 5).rows.size() == 1);
  CHECK(step_of(r, 5).rows[0][0] == locksim::reports::Cell{std::int64_t{2}});
}

TEST_CASE("PostgreSQL: two transactions updating two rows in opposite orders deadlock, the waiter that looks after "
          "deadlock_timeout gets 40P01") {
  const auto r = run(pg({step("s1", "BEGIN"), step("s1", "UPDATE t SET v = 1 WHERE id = 1"), step("s2", "BEGIN"),
                         step("s2", "UPDATE t SET v = 2 WHERE id = 2"), step("s1", "UPDATE t SET v = 1 WHERE id = 2"),
                         step("s2", "UPDATE t SET v = 2 WHERE id = 1"), step("s1", "COMMIT")},
                        kUnique, json::array({{{"k", "a"}}, {{"k", "b"}}})));
  const auto& first = step_of(r, 5);
  const auto& second = step_of(r, 6);
  // s1 waited first, so its deadlock_timeout (1 s) ends first: it finds the cycle and is the victim.
  CHECK(first.code == "40P01");
  CHECK(first.waited_ms >= 999.0);
  CHECK(second.code.empty());
  CHECK(second.waited_for == std::vector<std::string>{"s1"});
}

TEST_CASE("PostgreSQL: lock_timeout ends a lock wait with 55P03") {
  const auto r = run(pg({step("s1", "BEGIN"), step("s1", "UPDATE t SET v = 1 WHERE id = 1"), step("s2", "SET lock_timeout = '150ms'"),
                         step("s2", "UPDATE t SET v = 2 WHERE id = 1")},
                        kUnique, json::array({{{"k", "a"}}})));
  CHECK(step_of(r, 4).code == "55P03");
  CHECK(step_of(r, 4).message == "canceling statement due to lock timeout");
  CHECK(step_of(r, 4).waited_ms == Approx(150.0).margin(0.5));
}

TEST_CASE("PostgreSQL: a session-level advisory lock outlives COMMIT and ROLLBACK, a transaction-level one ends with them") {
  const auto r = run(pg({step("s1", "BEGIN"), step("s1", "SELECT pg_advisory_lock(7)"), step("s1", "SELECT pg_advisory_xact_lock(8)"),
                         step("s1", "ROLLBACK"), step("s2", "SELECT pg_try_advisory_lock(7)"), step("s2", "SELECT pg_try_advisory_lock(8)"),
                         step("s1", "SELECT pg_advisory_unlock(7)"), step("s1", "SELECT pg_advisory_unlock(7)"),
                         step("s2", "SELECT pg_try_advisory_lock(7)")}));
  CHECK(step_of(r, 5).rows[0][0] == locksim::reports::Cell{std::int64_t{0}});  // still held by s1
  CHECK(step_of(r, 6).rows[0][0] == locksim::reports::Cell{std::int64_t{1}});  // released by the ROLLBACK
  CHECK(step_of(r, 7).rows[0][0] == locksim::reports::Cell{std::int64_t{1}});
  CHECK(step_of(r, 8).rows[0][0] == locksim::reports::Cell{std::int64_t{0}});  // not held any more
  CHECK(step_of(r, 9).rows[0][0] == locksim::reports::Cell{std::int64_t{1}});
}

TEST_CASE("PostgreSQL: a sequence never rolls back, and an explicit id does not move it") {
  const auto r = run(pg({step("s1", "BEGIN"), step("s1", "INSERT INTO t (k) VALUES ('a')"), step("s1", "ROLLBACK"),
                         step("s1", "INSERT INTO t (id, k) VALUES (3, 'b')"), step("s1", "INSERT INTO t (k) VALUES ('c') RETURNING id"),
                         step("s1", "INSERT INTO t (k) VALUES ('d') RETURNING id")}));
  CHECK(step_of(r, 5).rows[0][0] == locksim::reports::Cell{std::int64_t{2}});
  CHECK(step_of(r, 6).code == "23505");  // nextval gave 3, which the explicit insert took
}

TEST_CASE("PostgreSQL: ROLLBACK TO SAVEPOINT after a 23505 ends the 25P02 and keeps what came before the savepoint") {
  const auto r = run(pg({step("s1", "BEGIN"), step("s1", "INSERT INTO t (k) VALUES ('b')"), step("s1", "SAVEPOINT sp"),
                         step("s1", "INSERT INTO t (k) VALUES ('a')"), step("s1", "SELECT k FROM t"),
                         step("s1", "ROLLBACK TO SAVEPOINT sp"), step("s1", "SELECT k FROM t ORDER BY k"), step("s1", "COMMIT")},
                        kUnique, json::array({{{"k", "a"}}})));
  CHECK(step_of(r, 4).code == "23505");
  CHECK(step_of(r, 5).code == "25P02");
  CHECK(step_of(r, 6).code.empty());
  CHECK(step_of(r, 7).rows.size() == 2);  // a, and s1's own b
  CHECK(rows_of(r, "t") == 2);
  // Without the savepoint the 23505 undoes b with the whole transaction.
  const auto whole = run(pg({step("s1", "BEGIN"), step("s1", "INSERT INTO t (k) VALUES ('b')"), step("s1", "INSERT INTO t (k) VALUES ('a')"),
                             step("s1", "ROLLBACK TO SAVEPOINT sp"), step("s1", "COMMIT")},
                            kUnique, json::array({{{"k", "a"}}})));
  CHECK(step_of(whole, 4).code == "3B001");
  CHECK(rows_of(whole, "t") == 1);
}

TEST_CASE("PostgreSQL: a row lock taken after a savepoint ends at ROLLBACK TO it, one taken before stays to the COMMIT") {
  const auto r = run(pg({step("s1", "BEGIN"), step("s1", "UPDATE t SET v = 5 WHERE k = 'a'"), step("s1", "SAVEPOINT sp"),
                         step("s1", "SELECT k FROM t WHERE k = 'b' FOR UPDATE"), step("s2", "UPDATE t SET v = 2 WHERE k = 'b'"),
                         step("s1", "ROLLBACK TO SAVEPOINT sp"), step("s3", "UPDATE t SET v = 3 WHERE k = 'a'"), step("s1", "COMMIT")},
                        kUnique, json::array({{{"k", "a"}}, {{"k", "b"}}})));
  CHECK(step_of(r, 5).finished_ms < step_of(r, 8).issued_ms);  // s2 went on at the ROLLBACK TO
  CHECK(step_of(r, 5).finished_ms >= step_of(r, 6).issued_ms);
  CHECK(step_of(r, 7).finished_ms >= step_of(r, 8).issued_ms);  // s3 waited for s1's COMMIT
  CHECK(step_of(r, 7).waited_ms > 0);
}

TEST_CASE("PostgreSQL: CREATE UNIQUE INDEX after its table in database.tables is that table's index, another column's is a "
          "further one") {
  json doc = pg({step("s1", "INSERT INTO t (k) VALUES ('a')"), step("s2", "INSERT INTO t (k) VALUES ('a')")}, kPlain);
  const auto plain = run(doc);
  CHECK(step_of(plain, 2).code.empty());
  doc["database"]["tables"].push_back("CREATE UNIQUE INDEX t_k_key ON t (k)");
  const auto indexed = run(doc);
  CHECK(step_of(indexed, 2).code == "23505");
  CHECK_THAT(step_of(indexed, 2).message, Catch::Contains("t_k_key"));
  json second = pg({step("s1", "INSERT INTO t (k, v) VALUES ('a', 1)"), step("s1", "INSERT INTO t (k, v) VALUES ('b', 1)")});
  second["database"]["tables"].push_back("CREATE UNIQUE INDEX t_v ON t (v)");
  const auto on_v = run(second);
  CHECK(step_of(on_v, 2).code == "23505");
  CHECK(step_of(on_v, 2).message == "duplicate key value violates unique constraint \"t_v\"");
  json same_name = pg({step("s1", "SELECT k FROM t")});
  same_name["database"]["tables"].push_back("CREATE INDEX t_k_key ON t (v)");
  CHECK_THAT(test::refusal(same_name.dump()), Catch::Contains("/database/tables/1: expected an index of a name of its own"));
  json elsewhere = pg({step("s1", "SELECT k FROM t")});
  elsewhere["database"]["tables"].push_back("CREATE INDEX u_v ON u (v)");
  CHECK_THAT(test::refusal(elsewhere.dump()), Catch::Contains("a CREATE INDEX on a table created above it, not on \"u\""));
}

TEST_CASE("PostgreSQL's SQL is refused on the MariaDB engine, and a bad engine name names the two choices") {
  json doc = pg({step("s1", "INSERT INTO t (k) VALUES ('a') ON CONFLICT (k) DO NOTHING")});
  doc["database"]["engine"] = "oracle";
  const std::string bad = test::refusal(doc.dump());
  CHECK_THAT(bad, Catch::Contains("/database/engine"));
  CHECK_THAT(bad, Catch::Contains("mariadb"));
  CHECK_THAT(bad, Catch::Contains("postgresql"));
  json syntax = pg({step("s1", "SELECT * FORM t")});
  const std::string refused = test::refusal(syntax.dump());
  CHECK_THAT(refused, Catch::Contains("/steps/0/sql: 42601 syntax error at or near \"FORM\""));
  json unsupported = pg({step("s1", "PREPARE TRANSACTION 'x'")});
  CHECK_THAT(test::refusal(unsupported.dump()), Catch::Contains("0A000"));
}

TEST_CASE("PostgreSQL: the same seed gives the same steps, trial after trial") {
  json doc = pg({step("s1", "BEGIN"), step("s1", "INSERT INTO t (k) VALUES ('a')"), step("s2", "BEGIN"),
                 step("s2", "INSERT INTO t (k) VALUES ('a')"), step("s3", "BEGIN"), step("s3", "INSERT INTO t (k) VALUES ('a')"),
                 step("s1", "ROLLBACK"), step("s2", "COMMIT"), step("s3", "COMMIT")});
  doc["trials"] = 10;
  const auto a = run(doc), b = run(doc);
  CHECK(a.strategies.front().trace_hash == b.strategies.front().trace_hash);
  CHECK(a.strategies.front().trace_hash != 0);
}

TEST_CASE("PostgreSQL: a rollout, whose steps are MariaDB's online ALTER TABLE, is refused on the PostgreSQL engine") {
  CHECK_THROWS_WITH(locksim::load_scenario(locksim::scenario_path("vivo-rollout"), {"database.engine=postgresql"}),
                    Catch::Contains("\"rollout\" only on the MariaDB engine"));
  CHECK_NOTHROW(locksim::load_scenario(locksim::scenario_path("vivo-rollout")));
}

// --- Further unique indexes: on several columns, partial --------------------------------------

namespace {

const char* kPayments = "CREATE TABLE t (id SERIAL PRIMARY KEY, m TEXT NOT NULL, r TEXT NOT NULL, v INT NOT NULL DEFAULT 0, UNIQUE (m, r))";
const char* kJobs = "CREATE TABLE t (id SERIAL PRIMARY KEY, k TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'active')";
json jobs(json steps, json rows = nullptr) {
  json doc = pg(std::move(steps), kJobs, std::move(rows));
  doc["database"]["tables"].push_back("CREATE UNIQUE INDEX one_active ON t (k) WHERE status = 'active'");
  return doc;
}

}  // namespace

TEST_CASE("PostgreSQL: UNIQUE (m, r) refuses a second row of both values and takes one differing in either, ON CONFLICT "
          "arbitrates on it when its target names the same columns, in any order") {
  const auto r = run(pg({step("s1", "INSERT INTO t (m, r) VALUES ('m1', 'r1')"), step("s1", "INSERT INTO t (m, r) VALUES ('m2', 'r1')"),
                         step("s1", "INSERT INTO t (m, r) VALUES ('m1', 'r1')"),
                         step("s1", "INSERT INTO t (m, r, v) VALUES ('m1', 'r1', 5) ON CONFLICT (r, m) DO UPDATE SET v = EXCLUDED.v"),
                         step("s1", "INSERT INTO t (m, r) VALUES ('m1', 'r9') ON CONFLICT (m) DO NOTHING"),
                         step("s1", "SELECT v FROM t WHERE m = 'm1' AND r = 'r1'")},
                        kPayments));
  CHECK(step_of(r, 2).code.empty());
  CHECK(step_of(r, 3).code == "23505");
  CHECK(step_of(r, 3).message == "duplicate key value violates unique constraint \"t_m_r_key\"");
  CHECK(step_of(r, 4).code.empty());
  CHECK(step_of(r, 4).affected == 1);
  CHECK(step_of(r, 5).code == "42P10");
  CHECK(step_of(r, 6).rows == std::vector<std::vector<locksim::reports::Cell>>{{std::int64_t{5}}});
  CHECK(rows_of(r, "t") == 2);
}

TEST_CASE("PostgreSQL: an insert of the pair another open transaction inserted waits for it, and inserts nothing after its COMMIT") {
  const auto r = run(pg({step("s1", "BEGIN"), step("s1", "INSERT INTO t (m, r) VALUES ('m1', 'r1')"),
                         step("s2", "INSERT INTO t (m, r) VALUES ('m1', 'r1') ON CONFLICT (m, r) DO NOTHING"), step("s1", "COMMIT")},
                        kPayments));
  CHECK(step_of(r, 3).waited_for == std::vector<std::string>{"s1"});
  CHECK(step_of(r, 3).code.empty());
  CHECK(step_of(r, 3).affected == 0);
  CHECK(rows_of(r, "t") == 1);
}

TEST_CASE("PostgreSQL: a partial unique index refuses a second active row of a key, takes finished ones, and frees the key "
          "when the active row finishes") {
  const auto r = run(jobs({step("s1", "INSERT INTO t (k) VALUES ('a')"), step("s1", "INSERT INTO t (k, status) VALUES ('a', 'done')"),
                           step("s1", "INSERT INTO t (k) VALUES ('a')"), step("s1", "UPDATE t SET status = 'done' WHERE k = 'a'"),
                           step("s1", "INSERT INTO t (k) VALUES ('a')"), step("s1", "UPDATE t SET status = 'active' WHERE status = 'done'")}));
  CHECK(step_of(r, 2).code.empty());
  CHECK(step_of(r, 3).code == "23505");
  CHECK(step_of(r, 3).message == "duplicate key value violates unique constraint \"one_active\"");
  CHECK(step_of(r, 5).code.empty());
  CHECK(step_of(r, 6).code == "23505");  // an UPDATE into the index checks it as an INSERT does
  CHECK(rows_of(r, "t") == 3);
}

TEST_CASE("PostgreSQL: ON CONFLICT (k) arbitrates on a partial unique index only with the index's WHERE, without a target, "
          "on every unique index") {
  const auto r = run(jobs({step("s1", "INSERT INTO t (k) VALUES ('a')"), step("s1", "INSERT INTO t (k) VALUES ('a') ON CONFLICT (k) DO NOTHING"),
                           step("s1", "INSERT INTO t (k) VALUES ('a') ON CONFLICT (k) WHERE status = 'active' DO NOTHING"),
                           step("s1", "INSERT INTO t (k) VALUES ('a') ON CONFLICT DO NOTHING")}));
  CHECK(step_of(r, 2).code == "42P10");
  CHECK(step_of(r, 3).code.empty());
  CHECK(step_of(r, 3).affected == 0);
  CHECK(step_of(r, 4).code.empty());
  CHECK(step_of(r, 4).affected == 0);
  CHECK(rows_of(r, "t") == 1);
}

TEST_CASE("PostgreSQL: an insert of a key whose active row another transaction is finishing waits for it: inserted after its "
          "COMMIT, 23505 after its ROLLBACK") {
  const auto r = run(jobs({step("s1", "BEGIN"), step("s1", "UPDATE t SET status = 'done' WHERE k = 'a'"), step("s2", "INSERT INTO t (k) VALUES ('a')"),
                           step("s1", "COMMIT"), step("s1", "BEGIN"), step("s1", "UPDATE t SET status = 'done' WHERE status = 'active'"),
                           step("s2", "INSERT INTO t (k) VALUES ('a')"), step("s1", "ROLLBACK")},
                          json::array({{{"k", "a"}}})));
  CHECK(step_of(r, 3).waited_for == std::vector<std::string>{"s1"});
  CHECK(step_of(r, 3).code.empty());
  CHECK(step_of(r, 7).waited_for == std::vector<std::string>{"s1"});
  CHECK(step_of(r, 7).code == "23505");
}

TEST_CASE("PostgreSQL: CREATE UNIQUE INDEX on two columns over a duplicated pair fails with 23505 and leaves no index") {
  json doc = pg({step("s1", "CREATE UNIQUE INDEX t_m_r ON t (m, r)"), step("s1", "INSERT INTO t (m, r) VALUES ('a', 'b')"),
                 step("s1", "DELETE FROM t WHERE id > 1"), step("s1", "CREATE UNIQUE INDEX t_m_r ON t (m, r)"),
                 step("s1", "INSERT INTO t (m, r) VALUES ('a', 'b')"), step("s1", "CREATE INDEX t_m_r ON t (r)")},
                "CREATE TABLE t (id SERIAL PRIMARY KEY, m TEXT NOT NULL, r TEXT NOT NULL)", json::array({{{"m", "a"}, {"r", "b"}}, {{"m", "a"}, {"r", "b"}}}));
  const auto r = run(doc);
  CHECK(step_of(r, 1).code == "23505");
  CHECK(step_of(r, 2).code.empty());  // no index was left
  CHECK(step_of(r, 4).code.empty());
  CHECK(step_of(r, 5).code == "23505");
  CHECK(step_of(r, 6).code == "42P07");
}

TEST_CASE("on the MariaDB engine, an index database.tables adds to a table that has one is a further index of it") {
  json doc = {{"name", "x"},
              {"workload", "sessions"},
              {"database", {{"tables", {"CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, k VARCHAR(32) NOT NULL, v INT NOT NULL DEFAULT 0, "
                                        "UNIQUE KEY uk (k))",
                                        "ALTER TABLE t ADD INDEX iv (v)"}}}},
              {"steps", {step("s1", "SELECT k FROM t")}},
              {"trials", 1}};
  CHECK(run(doc).strategies.size() == 1);
}

namespace {
json at(json s, int ms) {
  s["at_ms"] = ms;
  return s;
}
std::vector<std::vector<locksim::reports::Cell>> one(std::int64_t n) { return {{n}}; }
}  // namespace

TEST_CASE("PostgreSQL: extract(epoch from now())::bigint is the transaction's start on the database's clock, clock_timestamp()'s the "
          "statement's, rounded to whole seconds") {
  const auto r = run(pg({at(step("s1", "BEGIN"), 1400), at(step("s1", "SELECT extract(epoch from now())::bigint AS t"), 2600),
                         step("s1", "SELECT extract(epoch from clock_timestamp())::bigint AS t"),
                         step("s1", "SELECT extract(epoch from CURRENT_TIMESTAMP)::int AS t"), step("s1", "COMMIT"),
                         at(step("s2", "SELECT extract(epoch from now())::bigint AS t"), 4600),
                         at(step("s2", "UPDATE t SET v = extract(epoch from statement_timestamp())::bigint + 5 WHERE k = 'a'"), 5000),
                         step("s2", "SELECT v FROM t WHERE k = 'a'")},
                        kUnique, json::array({{{"k", "a"}, {"v", 0}}})));
  CHECK(step_of(r, 2).rows == one(1));  // BEGIN at 1.4 s
  CHECK(step_of(r, 3).rows == one(3));  // 2.6 s and a little
  CHECK(step_of(r, 4).rows == one(1));
  CHECK(step_of(r, 6).rows == one(5));  // a transaction of its own: 4.6 s
  CHECK(step_of(r, 8).rows == one(10));
}

TEST_CASE("PostgreSQL: now() outside extract(epoch from ...)::bigint is refused as 0A000, naming the form the model reads") {
  for (const char* sql : {"SELECT now()", "UPDATE t SET v = 1 WHERE v < extract(epoch from now())", "SELECT CURRENT_TIMESTAMP",
                          "SELECT clock_timestamp() + interval '1 second'"}) {
    INFO(sql);
    const std::string why = test::refusal(pg({step("s1", sql)}).dump());
    CHECK(why.find("0A000") != std::string::npos);
    CHECK(why.find("extract(epoch from") != std::string::npos);
  }
}
