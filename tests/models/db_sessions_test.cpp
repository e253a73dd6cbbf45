// The InnoDB-like database, its server and connection pools (docs/models.md, Database; docs/sql.md):
// seeded rows and explicit ids, SET TRANSACTION, timeouts, fencing and pools. Each test says which behaviour of MariaDB 10.11 it pins and where the project states
// it: a section of docs/sql.md or docs/models.md, or the conformance script that shows it on the
// server (conformance/sql-scripts/, docs/conformance.md).

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "db_support.hpp"

// --- Seeded rows and explicit ids -----------------------------------------------------------

TEST_CASE("seeded rows are committed before the run: readers see them, unlisted columns get defaults, and an explicit "
          "id moves the auto-increment counter past it",
          "[db]") {
  // Pins database.hpp (load_row) and MySQL's AUTO_INCREMENT: an explicit id moves the counter to max(counter, id+1).
  Db d(KeyIndex::non_unique);
  db::Database& database = d.server.database();
  CHECK(database.has_table(kTable));
  CHECK_FALSE(database.has_table("nowhere"));
  CHECK(database.load_row(kTable, account("a", {{"status", 5}})) == 1);
  CHECK(database.load_row(kTable, account("b", {{"id", 10}})) == 10);
  CHECK(database.load_row(kTable, account("a")) == 11);  // a non-unique index allows the duplicate
  CHECK(database.load_row(kTable, account("c", {{"id", 7}})) == 7);  // below the counter: it stays at 12
  auto& app = d.app();
  std::size_t seen = 0;
  std::int64_t next_id = 0, explicit_id = 0, after_explicit = 0;
  app.node.spawn("client", [&] {
    auto c = app.pool.acquire();
    seen = c.select(kTable, {}).size();
    next_id = c.insert(kTable, account("d")).insert_id;
    explicit_id = c.insert(kTable, account("e", {{"id", 20}})).insert_id;
    after_explicit = c.insert(kTable, account("f")).insert_id;
  });
  REQUIRE(d.engine.run().ok());
  CHECK(seen == 4);
  CHECK(next_id == 12);
  CHECK(explicit_id == 20);
  CHECK(after_explicit == 21);
  const auto records = database.committed_rows(kTable);
  REQUIRE(records.size() == 7);
  CHECK(records[0].origin.who == "seeded");
  CHECK(int_of(records[0].row, "status") == 5);
  CHECK(text_of(records[0].row, "device").empty());
  CHECK(int_of(records[1].row, "status") == 0);
}

TEST_CASE("a seeded row is refused with MySQL's message for a duplicate id, a duplicate key on a unique index, or an "
          "unknown column",
          "[db]") {
  // Pins database.hpp (load_row): MySQL's 1062 and 1054 texts, raised as usage errors before the run.
  Db d(KeyIndex::unique);
  db::Database& database = d.server.database();
  database.load_row(kTable, account("a", {{"id", 3}}));
  const auto refused = [&](db::Values values) -> std::string {
    try {
      database.load_row(kTable, std::move(values));
    } catch (const sim::UsageError& e) {
      return e.what();
    }
    return "accepted";
  };
  CHECK(refused(account("b", {{"id", 3}})) == "Duplicate entry '3' for key 'PRIMARY'");
  CHECK(refused(account("a")) == "Duplicate entry 'a' for key 'open_id'");
  CHECK(refused(account("c", {{"colour", "red"}})) == "Unknown column 'colour' in 'field list'");
  CHECK(database.committed_rows(kTable).size() == 1);
}

TEST_CASE("an INSERT with an existing id gets 1062 for key PRIMARY, one held by an open transaction waits, then 1062 "
          "if it commits or the insert if it rolls back",
          "[db]") {
  // Pins conformance duplicate-wait-commit-primary and duplicate-wait-rollback-primary: an INSERT of a key held by an
  // open transaction waits (shared lock request) and then gets 1062 if the holder commits, succeeds if it rolls back,
  // on the primary key.
  const bool holder_commits = GENERATE(true, false);
  INFO((holder_commits ? "the holder commits" : "the holder rolls back"));
  Db d(KeyIndex::none);
  d.server.database().load_row(kTable, account("seeded", {{"id", 1}}));
  auto& a = d.app();
  auto& b = d.app();
  Code at_once = Code::ok;
  db::Result waiter;
  std::int64_t next_id = 0;
  a.node.spawn("holder", [&] {
    auto c = a.pool.acquire();
    c.set_origin("holder");
    at_once = code_of([&] { c.insert(kTable, account("again", {{"id", 1}})); });
    c.begin();
    sim::sleep_until(at_ms(10));
    c.insert(kTable, account("held", {{"id", 5}}));
    sim::sleep_until(at_ms(100));
    if (holder_commits) c.commit();
    else c.rollback();
  });
  b.node.spawn("waiter", [&] {
    auto c = b.pool.acquire();
    sim::sleep_until(at_ms(30));
    waiter = c.try_execute(insert_statement(kTable, account("mine", {{"id", 5}})));
    next_id = c.insert(kTable, account("next")).insert_id;
  });
  REQUIRE(d.engine.run().ok());
  CHECK(at_once == Code::duplicate_key);
  REQUIRE(waiter.waits.size() == 1);
  CHECK(waiter.waits[0].index == "PRIMARY");
  CHECK(waiter.waits[0].entry == "(5)");
  CHECK(waiter.waits[0].mode == "S");
  CHECK(waiter.waits[0].behind == std::vector<std::string>{"holder"});
  CHECK(next_id == 6);
  if (holder_commits) {
    CHECK(waiter.code == Code::duplicate_key);
    CHECK(waiter.message == "Duplicate entry '5' for key 'PRIMARY'");
    CHECK(d.rows_with("held").size() == 1);
  } else {
    CHECK(waiter.ok());
    CHECK(waiter.insert_id == 5);
    CHECK(d.rows_with("mine").size() == 1);
  }
}

TEST_CASE("on the primary key, both the three-session example and its DELETE-then-COMMIT variant end in exactly one "
          "1213",
          "[db]") {
  // Pins conformance three-inserts-rollback-primary: the manual's three-session example ends with exactly one 1213
  // every time; delete-commit-primary: with k on the primary key, the DELETE-then-COMMIT variant deadlocks too. After a
  // DELETE commits, both waiters hold S on the delete-marked record and each needs X to rewrite it; after a rollback,
  // both hold the gap and each needs to insert.
  const bool deletes = GENERATE(true, false);
  INFO((deletes ? "S1 deletes id 5 and commits" : "S1 inserts id 5 and rolls back"));
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    INFO("seed " << seed);
    Db d(KeyIndex::none, {}, seed);
    if (deletes) d.server.database().load_row(kTable, account("k", {{"id", 5}}));
    auto& s1 = d.app();
    d.app();
    d.app();
    std::array<Code, 2> codes{Code::connection_timeout, Code::connection_timeout};
    s1.node.spawn("S1", [&] {
      auto c = s1.pool.acquire();
      c.begin();
      sim::sleep_until(at_ms(10));
      if (deletes) c.remove(kTable, {db::eq("id", 5)});
      else c.insert(kTable, account("k", {{"id", 5}}));
      sim::sleep_until(at_ms(100));
      if (deletes) c.commit();
      else c.rollback();
    });
    for (int i = 0; i < 2; ++i) {
      auto& app = *d.apps[static_cast<std::size_t>(i) + 1];
      app.node.spawn("S" + std::to_string(i + 2), [&, i] {
        auto c = app.pool.acquire();
        c.begin();
        sim::sleep_until(at_ms(30 + 10 * i));
        const auto slot = static_cast<std::size_t>(i);
        codes[slot] = code_of([&] { c.insert(kTable, account("k", {{"id", 5}})); });
        if (codes[slot] != Code::ok) return;
        sim::sleep_until(at_ms(200));
        c.commit();
      });
    }
    REQUIRE(d.engine.run().ok());
    CHECK(std::count(codes.begin(), codes.end(), Code::deadlock) == 1);
    CHECK(std::count(codes.begin(), codes.end(), Code::ok) == 1);
    REQUIRE(d.rows().size() == 1);
    CHECK(d.rows()[0].id == 5);
  }
}

TEST_CASE("REPLACE with an id and a key that match two different rows deletes both and inserts one", "[db]") {
  // Pins MySQL's REPLACE: "deletes the old row(s)" for every unique index that matches; affected = 1 + rows deleted.
  Db d(KeyIndex::unique);
  d.server.database().load_row(kTable, account("a", {{"id", 1}}));
  d.server.database().load_row(kTable, account("b", {{"id", 2}}));
  auto& app = d.app();
  db::Result r;
  app.node.spawn("client", [&] {
    auto c = app.pool.acquire();
    r = c.insert(kTable, account("b", {{"id", 1}, {"status", 9}}), OnDuplicate::replace);
  });
  REQUIRE(d.engine.run().ok());
  CHECK(r.affected == 3);
  REQUIRE(d.rows().size() == 1);
  CHECK(d.rows()[0].id == 1);
  CHECK(text_of(d.rows()[0], "open_id") == "b");
  CHECK(int_of(d.rows()[0], "status") == 9);
}

// --- SET TRANSACTION -----------------------------------------------------------------------

namespace {
db::Statement set_isolation(Isolation level, bool next_transaction_only) {
  return {.kind = db::Statement::Kind::set_isolation, .isolation = level, .next_transaction_only = next_transaction_only};
}
}  // namespace

TEST_CASE("SET SESSION TRANSACTION sets the level of the session's later transactions, plain SET TRANSACTION only the "
          "next one's",
          "[db]") {
  // Pins MySQL's SET TRANSACTION (without SESSION: the next transaction only) through conformance
  // reselect-after-duplicate-rr and -rc: a plain re-SELECT in a REPEATABLE READ transaction reads its old snapshot,
  // under READ COMMITTED the plain read returns it.
  Db d(KeyIndex::unique);
  auto& a = d.app();
  auto& b = d.app();
  std::vector<std::size_t> seen;  // per transaction: does the second read see the other's new row
  a.node.spawn("reader", [&] {
    auto c = a.pool.acquire();
    c.execute(set_isolation(Isolation::read_committed, false));
    int step = 0;
    for (const std::string key : {"k1", "k2", "k3"}) {
      if (key == "k2") c.execute(set_isolation(Isolation::repeatable_read, true));
      c.begin();
      c.select(kTable, by_key(key));
      sim::sleep_until(at_ms(100 * ++step));  // the writer inserts `key` meanwhile
      seen.push_back(c.select(kTable, by_key(key)).size());
      c.commit();
    }
  });
  b.node.spawn("writer", [&] {
    auto c = b.pool.acquire();
    for (int step = 0; step < 3; ++step) {
      sim::sleep_until(at_ms(100 * step + 50));
      c.insert(kTable, account("k" + std::to_string(step + 1)));
    }
  });
  REQUIRE(d.engine.run().ok());
  CHECK(seen == std::vector<std::size_t>{1, 0, 1});  // READ COMMITTED, REPEATABLE READ once, READ COMMITTED again
}

TEST_CASE("SET TRANSACTION inside an open transaction gets 1568 and changes nothing, SET SESSION there applies from the "
          "next transaction",
          "[db]") {
  // Pins MySQL's ER_CANT_CHANGE_TX_CHARACTERISTICS (1568): "Transaction characteristics can't be changed while a
  // transaction is in progress", for SET TRANSACTION without SESSION.
  Db d(KeyIndex::unique);
  auto& a = d.app();
  auto& b = d.app();
  db::Result refused, session;
  bool still_open = false;
  std::vector<std::size_t> seen;
  a.node.spawn("reader", [&] {
    auto c = a.pool.acquire();
    c.begin();
    c.select(kTable, by_key("k1"));
    refused = c.try_execute(set_isolation(Isolation::read_committed, true));
    session = c.try_execute(set_isolation(Isolation::read_committed, false));
    still_open = d.server.database().in_transaction(1);
    sim::sleep_until(at_ms(100));  // the writer inserts k1
    seen.push_back(c.select(kTable, by_key("k1")).size());  // still REPEATABLE READ
    c.commit();
    c.begin();
    c.select(kTable, by_key("k2"));
    sim::sleep_until(at_ms(200));  // the writer inserts k2
    seen.push_back(c.select(kTable, by_key("k2")).size());  // READ COMMITTED now
    c.commit();
  });
  b.node.spawn("writer", [&] {
    auto c = b.pool.acquire();
    sim::sleep_until(at_ms(50));
    c.insert(kTable, account("k1"));
    sim::sleep_until(at_ms(150));
    c.insert(kTable, account("k2"));
  });
  REQUIRE(d.engine.run().ok());
  CHECK(refused.code == Code::transaction_in_progress);
  CHECK(static_cast<int>(refused.code) == 1568);
  CHECK(refused.message == "Transaction characteristics can't be changed while a transaction is in progress");
  CHECK(refused.undone == db::Undone::nothing);
  CHECK(session.ok());
  CHECK(still_open);
  CHECK(seen == std::vector<std::size_t>{0, 1});
}

// --- Timeouts -------------------------------------------------------------------------------

TEST_CASE("an insert waiting on an open transaction past the lock wait timeout gets 1205 and its transaction stays "
          "open",
          "[db]") {
  // Pins conformance duplicate-wait-timeout: 1205 if the holder stays open past innodb_lock_wait_timeout;
  // rollback-scope-1205: 1062 and 1205 roll back only the statement (the transaction stays open).
  Db d(KeyIndex::unique, {.database = {.lock_wait_timeout = 2s}});
  auto& a = d.app();
  auto& b = d.app();
  Code code = Code::ok;
  sim::Time failed;
  a.node.spawn("holder", [&] {
    auto c = a.pool.acquire();
    c.begin();
    sim::sleep_until(at_ms(10));
    c.insert(kTable, account("k"));
    sim::sleep_until(at_ms(5000));
    c.commit();
  });
  b.node.spawn("waiter", [&] {
    auto c = b.pool.acquire();
    c.begin();
    sim::sleep_until(at_ms(30));
    c.insert(kTable, account("k2"));
    sim::sleep_until(at_ms(50));
    code = code_of([&] { c.insert(kTable, account("k")); });
    failed = sim::now();
    c.insert(kTable, account("k3"));
    c.commit();
  });
  REQUIRE(d.engine.run().ok());
  CHECK(code == Code::lock_wait_timeout);
  CHECK(failed > at_ms(2050));
  CHECK(failed < at_ms(2060));
  CHECK(d.rows_with("k").size() == 1);
  CHECK(d.rows_with("k2").size() == 1);  // the statement before the timeout survived
  CHECK(d.rows_with("k3").size() == 1);  // and the transaction went on
  CHECK(d.server.database().stats().lock_wait_timeouts == 1);
}

TEST_CASE("a statement timeout closes the connection and the server rolls back its open transaction", "[db]") {
  // Pins server.hpp / docs/models.md, Application patterns (a client timeout shorter than the server's latency): a
  // client whose statement times out closes the connection; the server finishes the statement, then rolls back whatever
  // transaction was open.
  Db d(KeyIndex::unique);
  auto& a = d.app();
  auto& b = d.app({.statement_timeout = 100ms});
  Code code = Code::ok;
  sim::Time failed, later_inserted;
  a.node.spawn("holder", [&] {
    auto c = a.pool.acquire();
    c.begin();
    sim::sleep_until(at_ms(10));
    c.insert(kTable, account("k"));
    sim::sleep_until(at_ms(1000));
    c.commit();
  });
  b.node.spawn("impatient", [&] {
    auto c = b.pool.acquire();
    c.begin();
    sim::sleep_until(at_ms(20));
    c.insert(kTable, account("k2"));
    sim::sleep_until(at_ms(40));
    code = code_of([&] { c.insert(kTable, account("k")); });  // waits for the holder beyond 100 ms
    failed = sim::now();
  });
  a.node.spawn("later", [&] {
    auto c = a.pool.acquire();
    sim::sleep_until(at_ms(1500));
    c.insert(kTable, account("k2", {{"device", "later"}}));  // no longer locked by the closed connection
    later_inserted = sim::now();
  });
  REQUIRE(d.engine.run().ok());
  CHECK(code == Code::connection_timeout);
  CHECK(failed >= at_ms(140));  // sent at 40 ms, given up 100 ms later
  CHECK(failed < at_ms(145));
  CHECK(later_inserted < at_ms(1510));
  REQUIRE(d.rows_with("k2").size() == 1);
  CHECK(text_of(d.rows_with("k2")[0], "device") == "later");  // the timed-out transaction's k2 was rolled back
  CHECK(d.rows_with("k").size() == 1);
}

// --- Fencing and pools ----------------------------------------------------------------------

TEST_CASE("update_fenced rejects a stale token and leaves the row unchanged", "[db]") {
  // Pins the conditional write of server.hpp: it writes where the stored token is lower than the caller's.
  Db d(KeyIndex::unique);
  auto& app = d.app();
  bool fresh = false, stale = true;
  app.node.spawn("client", [&] {
    auto c = app.pool.acquire();
    c.insert(kTable, account("k"));
    fresh = c.update_fenced(kTable, {{"device", "holder-5"}}, by_key("k"), "token", 5);
    stale = c.update_fenced(kTable, {{"device", "holder-3"}}, by_key("k"), "token", 3);
  });
  REQUIRE(d.engine.run().ok());
  CHECK(fresh);
  CHECK_FALSE(stale);
  REQUIRE(d.rows_with("k").size() == 1);
  CHECK(text_of(d.rows_with("k")[0], "device") == "holder-5");
  CHECK(int_of(d.rows_with("k")[0], "token") == 5);
}

TEST_CASE("a pool of one connection makes the second borrower wait until the first gives it back", "[db]") {
  // Pins docs/models.md, Figures the models take (server.hpp): a pool has a bounded number of connections; waiting for
  // one is latency.
  Db d(KeyIndex::unique);
  auto& app = d.app({.size = 1});
  sim::Time acquired;
  std::size_t seen = 9;
  app.node.spawn("first", [&] {
    auto c = app.pool.acquire();
    c.insert(kTable, account("k"));
    sim::sleep_until(at_ms(100));
  });  // the connection goes back here, at 100 ms
  app.node.spawn("second", [&] {
    sim::sleep_until(at_ms(20));
    auto c = app.pool.acquire();
    acquired = sim::now();
    seen = c.select(kTable, by_key("k")).size();
  });
  REQUIRE(d.engine.run().ok());
  CHECK(acquired >= at_ms(100));
  CHECK(acquired < at_ms(101));
  CHECK(seen == 1);
}

TEST_CASE("a borrower that waits longer than the pool's acquire timeout gets a connection timeout", "[db]") {
  // Pins docs/models.md, Figures the models take (server.hpp, HikariCP connectionTimeout): waiting too long for a
  // connection is an error.
  Db d(KeyIndex::unique);
  auto& app = d.app({.size = 1, .acquire_timeout = 50ms});
  Code code = Code::ok;
  sim::Time failed;
  app.node.spawn("holder", [&] {
    auto c = app.pool.acquire();
    c.insert(kTable, account("k"));
    sim::sleep_until(at_ms(500));
  });
  app.node.spawn("borrower", [&] {
    sim::sleep_until(at_ms(20));
    code = code_of([&] { app.pool.acquire(); });
    failed = sim::now();
  });
  REQUIRE(d.engine.run().ok());
  CHECK(code == Code::connection_timeout);
  CHECK(failed >= at_ms(70));
  CHECK(failed < at_ms(75));
}
