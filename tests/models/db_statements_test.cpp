// The InnoDB-like database, its server and connection pools (docs/models.md, Database; docs/sql.md):
// snapshots, a status CAS, auto-increment and insert variants, and what a result says. Each test says which behaviour of MariaDB 10.11 it pins and where the project states
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

// --- Snapshots ------------------------------------------------------------------------------

namespace {
// A transaction reads k (absent), another session inserts and commits k, the transaction's
// insert of k gets 1062, then it reads k again plainly, LOCK IN SHARE MODE and FOR UPDATE.
struct AfterDuplicate {
  std::size_t before = 9, plain = 9, share = 9, update = 9;
  Code code = Code::ok;
};
AfterDuplicate read_after_duplicate(db::PoolConfig pool_config) {
  Db d(KeyIndex::unique);
  auto& a = d.app(pool_config);
  auto& b = d.app();
  AfterDuplicate r;
  a.node.spawn("reader", [&] {
    auto c = a.pool.acquire();
    c.begin();
    sim::sleep_until(at_ms(10));
    r.before = c.select(kTable, by_key("k")).size();
    sim::sleep_until(at_ms(50));
    r.code = code_of([&] { c.insert(kTable, account("k")); });
    sim::sleep_until(at_ms(60));
    r.plain = c.select(kTable, by_key("k")).size();
    sim::sleep_until(at_ms(70));
    r.share = c.select(kTable, by_key("k"), ReadLock::share).size();
    sim::sleep_until(at_ms(80));
    r.update = c.select(kTable, by_key("k"), ReadLock::update).size();
    c.commit();
  });
  b.node.spawn("inserter", [&] {
    auto c = b.pool.acquire();
    sim::sleep_until(at_ms(30));
    c.insert(kTable, account("k"));  // autocommit
  });
  REQUIRE(d.engine.run().ok());
  return r;
}
}  // namespace

TEST_CASE("after a 1062 inside a REPEATABLE READ transaction that already read, a plain re-select finds no row while "
          "a locking read finds it",
          "[db]") {
  // Pins conformance reselect-after-duplicate-rr: after a 1062 inside a REPEATABLE READ transaction that had already
  // read, a plain re-SELECT returns no row (old snapshot), "duplicate error but row not found"; a locking read returns
  // it.
  const auto r = read_after_duplicate({});
  CHECK(r.before == 0);
  CHECK(r.code == Code::duplicate_key);
  CHECK(r.plain == 0);
  CHECK(r.share == 1);
  CHECK(r.update == 1);
}

TEST_CASE("after a 1062 inside a READ COMMITTED transaction, a plain re-select finds the row", "[db]") {
  // Pins conformance reselect-after-duplicate-rc: under READ COMMITTED the plain read returns it.
  const auto r = read_after_duplicate(kReadCommitted);
  CHECK(r.before == 0);
  CHECK(r.code == Code::duplicate_key);
  CHECK(r.plain == 1);
  CHECK(r.share == 1);
  CHECK(r.update == 1);
}

TEST_CASE("a double check inside one REPEATABLE READ transaction still sees nothing: without a unique index it inserts "
          "a second row",
          "[db]") {
  // Pins conformance double-check-rr: a double check inside one REPEATABLE READ transaction: the second plain SELECT
  // still sees nothing, so without a unique index the transaction inserts a second row.
  Db d(KeyIndex::non_unique);
  auto& a = d.app();
  auto& b = d.app();
  std::size_t first = 9, second = 9;
  a.node.spawn("double-checker", [&] {
    auto c = a.pool.acquire();
    c.begin();
    sim::sleep_until(at_ms(10));
    first = c.select(kTable, by_key("k")).size();
    sim::sleep_until(at_ms(50));
    second = c.select(kTable, by_key("k")).size();
    if (second == 0) c.insert(kTable, account("k"));
    c.commit();
  });
  b.node.spawn("other", [&] {
    auto c = b.pool.acquire();
    sim::sleep_until(at_ms(30));
    c.insert(kTable, account("k"));  // autocommit
  });
  REQUIRE(d.engine.run().ok());
  CHECK(first == 0);
  CHECK(second == 0);
  CHECK(d.rows_with("k").size() == 2);
}

// --- Status CAS -----------------------------------------------------------------------------

TEST_CASE("a status CAS UPDATE ... WHERE id=? AND status=2 run by five sessions at once has exactly one winner", "[db]") {
  // Pins conformance status-cas-commit: a status CAS, UPDATE ... WHERE status=2, reads the latest committed row and
  // X-locks it, so exactly one gets affected rows = 1: exactly one winner.
  Db d(KeyIndex::unique);
  auto& app = d.app();
  std::int64_t id = 0;
  std::vector<std::int64_t> affected(5, 9);
  app.node.spawn("setup", [&] {
    auto c = app.pool.acquire();
    id = c.insert(kTable, account("task-1", {{"status", 2}})).insert_id;
  });
  for (std::size_t i = 0; i < affected.size(); ++i) {
    app.node.spawn("contender-" + std::to_string(i), [&, i] {
      auto c = app.pool.acquire();
      sim::sleep_until(at_ms(50));
      affected[i] = c.update(kTable, {{"status", 3}}, {db::eq("id", id), db::eq("status", 2)});
    });
  }
  REQUIRE(d.engine.run().ok());
  CHECK(std::count(affected.begin(), affected.end(), 1) == 1);
  CHECK(std::count(affected.begin(), affected.end(), 0) == 4);
  REQUIRE(d.rows_with("task-1").size() == 1);
  CHECK(int_of(d.rows_with("task-1")[0], "status") == 3);
}

TEST_CASE("a status CAS behind an open transaction waits, it updates 0 rows after that transaction commits and 1 after "
          "it rolls back",
          "[db]") {
  // Pins conformance status-cas-commit and status-cas-rollback: in a status CAS (`UPDATE ... WHERE id=? AND
  // status=2`) the second waits; after the first commits it updates 0 rows, after a rollback 1: exactly one winner.
  const bool first_commits = GENERATE(true, false);
  INFO((first_commits ? "the first commits" : "the first rolls back"));
  Db d(KeyIndex::unique);
  auto& a = d.app();
  auto& b = d.app();
  std::int64_t id = 0, first = 9, second = 9;
  sim::Time second_returned;
  a.node.spawn("first", [&] {
    auto c = a.pool.acquire();
    id = c.insert(kTable, account("task-1", {{"status", 2}})).insert_id;
    c.begin();
    sim::sleep_until(at_ms(20));
    first = c.update(kTable, {{"status", 3}}, {db::eq("id", id), db::eq("status", 2)});
    sim::sleep_until(at_ms(100));
    if (first_commits) c.commit();
    else c.rollback();
  });
  b.node.spawn("second", [&] {
    auto c = b.pool.acquire();
    c.begin();
    sim::sleep_until(at_ms(40));
    second = c.update(kTable, {{"status", 3}}, {db::eq("id", id), db::eq("status", 2)});
    second_returned = sim::now();
    c.commit();
  });
  REQUIRE(d.engine.run().ok());
  CHECK(first == 1);
  CHECK(second == (first_commits ? 0 : 1));
  CHECK(second_returned > at_ms(100));
  REQUIRE(d.rows_with("task-1").size() == 1);
  CHECK(int_of(d.rows_with("task-1")[0], "status") == 3);
}

TEST_CASE("under READ COMMITTED, an UPDATE skips a locked row whose committed version does not match, without "
          "waiting, under REPEATABLE READ it waits",
          "[db]") {
  // Pins conformance update-skips-locked-rc: under READ COMMITTED, rows that do not match and are locked are skipped
  // without waiting (semi-consistent read). Under REPEATABLE READ the UPDATE waits for the lock (as in the status CAS
  // line).
  const bool read_committed = GENERATE(true, false);
  INFO((read_committed ? "READ COMMITTED" : "REPEATABLE READ"));
  Db d(KeyIndex::unique);
  auto& a = d.app();
  auto& b = d.app(read_committed ? kReadCommitted : db::PoolConfig{});
  std::int64_t id = 0, affected = 9;
  sim::Time returned;
  a.node.spawn("holder", [&] {
    auto c = a.pool.acquire();
    id = c.insert(kTable, account("task-1", {{"status", 1}})).insert_id;
    c.begin();
    sim::sleep_until(at_ms(20));
    c.update(kTable, {{"device", "x"}}, {db::eq("id", id)});  // X-locks the row, status stays 1
    sim::sleep_until(at_ms(100));
    c.commit();
  });
  b.node.spawn("cas", [&] {
    auto c = b.pool.acquire();
    sim::sleep_until(at_ms(40));
    affected = c.update(kTable, {{"status", 3}}, {db::eq("id", id), db::eq("status", 2)});
    returned = sim::now();
  });
  REQUIRE(d.engine.run().ok());
  CHECK(affected == 0);
  if (read_committed) CHECK(returned < at_ms(50));
  else CHECK(returned > at_ms(100));
}

// --- Auto-increment and insert variants -----------------------------------------------------

TEST_CASE("failed inserts consume auto-increment ids: 1062 and INSERT IGNORE of a duplicate leave gaps", "[db]") {
  // Pins conformance auto-increment-gaps: auto-increment values consumed by failed or rolled-back inserts are lost,
  // leaving gaps; insert-ignore-duplicate: INSERT IGNORE on a duplicate gives 0 rows and a warning, and the
  // auto-increment counter still advances.
  Db d(KeyIndex::unique);
  auto& app = d.app();
  std::int64_t id1 = 0, id3 = 0, id5 = 0;
  Code duplicate = Code::ok;
  db::Result ignored;
  app.node.spawn("client", [&] {
    auto c = app.pool.acquire();
    id1 = c.insert(kTable, account("k")).insert_id;
    duplicate = code_of([&] { c.insert(kTable, account("k")); });  // takes id 2
    id3 = c.insert(kTable, account("k2")).insert_id;
    ignored = c.insert(kTable, account("k", {{"status", 7}}), OnDuplicate::ignore);  // takes id 4
    id5 = c.insert(kTable, account("k3")).insert_id;
  });
  REQUIRE(d.engine.run().ok());
  CHECK(id1 == 1);
  CHECK(duplicate == Code::duplicate_key);
  CHECK(id3 == 3);
  CHECK(ignored.ok());
  CHECK(ignored.affected == 0);
  CHECK(ignored.warnings == 1);
  CHECK(id5 == 5);
  std::vector<std::int64_t> ids;
  for (const auto& row : d.rows()) ids.push_back(row.id);
  CHECK(ids == std::vector<std::int64_t>{1, 3, 5});
  REQUIRE(d.rows_with("k").size() == 1);
  CHECK(int_of(d.rows_with("k")[0], "status") == 0);  // the ignored row was discarded
}

TEST_CASE("REPLACE on an existing key deletes and inserts: affected 2, a new id, unlisted columns reset to defaults",
          "[db]") {
  // Pins conformance replace-existing: REPLACE on an existing key (a delete, then an insert): affected 2, a new id,
  // columns not listed reset to their defaults.
  Db d(KeyIndex::unique);
  auto& app = d.app();
  std::int64_t old_id = 0;
  db::Result replaced;
  app.node.spawn("client", [&] {
    auto c = app.pool.acquire();
    old_id = c.insert(kTable, account("k", {{"status", 7}, {"device", "phone"}})).insert_id;
    replaced = c.insert(kTable, account("k", {{"status", 9}}), OnDuplicate::replace);
  });
  REQUIRE(d.engine.run().ok());
  CHECK(replaced.affected == 2);
  CHECK(replaced.insert_id > old_id);
  REQUIRE(d.rows_with("k").size() == 1);
  const auto row = d.rows_with("k")[0];
  CHECK(row.id == replaced.insert_id);
  CHECK(int_of(row, "status") == 9);
  CHECK(text_of(row, "device").empty());
  CHECK(d.rows().size() == 1);
}

TEST_CASE("ON DUPLICATE KEY UPDATE reports 1 for an insert, 2 for a change, 0 for no change, and advances the "
          "auto-increment counter every time",
          "[db]") {
  // Pins conformance upsert-affected-rows: ON DUPLICATE KEY UPDATE's affected rows are 1 inserted, 2 updated with a
  // change, 0 updated to the same value; the auto-increment counter advances on every call, including updates.
  Db d(KeyIndex::unique);
  auto& app = d.app();
  std::array<db::Result, 3> upserts{};
  std::int64_t next_id = 0;
  app.node.spawn("client", [&] {
    auto c = app.pool.acquire();
    for (auto& r : upserts) r = c.insert(kTable, account("k"), OnDuplicate::update, {{"status", 5}});
    next_id = c.insert(kTable, account("k2")).insert_id;
  });
  REQUIRE(d.engine.run().ok());
  CHECK(upserts[0].affected == 1);
  CHECK(upserts[1].affected == 2);
  CHECK(upserts[2].affected == 0);
  CHECK(next_id == 4);  // ids 2 and 3 went to the two updates
  REQUIRE(d.rows_with("k").size() == 1);
  CHECK(d.rows_with("k")[0].id == 1);
  CHECK(int_of(d.rows_with("k")[0], "status") == 5);
}

// --- What a result says ---------------------------------------------------------------------

TEST_CASE("a 1062 after a wait carries MySQL's message with the index's name, the wait on the duplicate's entry "
          "behind its inserter, and undoes only the statement",
          "[db]") {
  // Pins conformance duplicate-wait-commit-unique: an INSERT of a key held by an open transaction waits (shared lock
  // request) and then gets 1062 if the holder commits; rollback-scope-1062: 1062 and 1205 roll back only the
  // statement; MySQL's 1062 text names the index.
  Db d(KeyIndex::unique);
  d.server.create_table({.name = "users", .key_column = "name", .key_index = KeyIndex::unique, .index_name = "uk_name"});
  auto& a = d.app();
  auto& b = d.app();
  db::Result r;
  a.node.spawn("A", [&] {
    auto c = a.pool.acquire();
    c.set_origin("A");
    c.begin();
    sim::sleep_until(at_ms(10));
    c.execute(insert_statement("users", {{"name", "a"}}));  // id 1
    sim::sleep_until(at_ms(100));
    c.commit();
  });
  b.node.spawn("B", [&] {
    auto c = b.pool.acquire();
    c.set_origin("B");
    c.begin();
    sim::sleep_until(at_ms(20));
    c.execute(insert_statement("users", {{"name", "other"}}));  // id 2
    sim::sleep_until(at_ms(30));
    r = c.try_execute(insert_statement("users", {{"name", "a"}}));
    c.commit();
  });
  REQUIRE(d.engine.run().ok());
  CHECK(r.code == Code::duplicate_key);
  CHECK(r.message == "Duplicate entry 'a' for key 'uk_name'");
  REQUIRE(r.waits.size() == 1);
  CHECK(r.waits[0].table == "users");
  CHECK(r.waits[0].index == "uk_name");
  CHECK(r.waits[0].entry == "('a', 1)");
  CHECK(r.waits[0].mode == "S next-key");
  CHECK(r.waits[0].behind == std::vector<std::string>{"A"});
  CHECK(r.waits[0].waited > 65ms);  // from about 31.5 ms to A's commit at about 101 ms
  CHECK(r.waits[0].waited < 75ms);
  CHECK(r.undone == db::Undone::statement);
  CHECK(r.undone_rows == 0);
  CHECK(d.server.database().committed_rows("users").size() == 2);  // B's other row survived
}

TEST_CASE("without a name for its index, a 1062 names the key column", "[db]") {
  // MySQL names an index by its column when CREATE TABLE gives it no name.
  Db d(KeyIndex::unique);
  auto& app = d.app();
  db::Result r;
  app.node.spawn("client", [&] {
    auto c = app.pool.acquire();
    c.insert(kTable, account("k"));
    r = c.try_execute(insert_statement(kTable, account("k")));
  });
  REQUIRE(d.engine.run().ok());
  CHECK(r.code == Code::duplicate_key);
  CHECK(r.message == "Duplicate entry 'k' for key 'open_id'");
  CHECK(r.waits.empty());
  CHECK(r.undone == db::Undone::statement);
}

TEST_CASE("an insert waiting behind a gap lock reports an insert intention on the gap before the next entry, or on the "
          "supremum",
          "[db]") {
  // Pins conformance gap-lock-absent-waits (FOR UPDATE of absent 'n' locks the gap ('m',2)..('x',3)), shown as InnoDB's
  // lock monitor shows an insert intention: on the gap before the entry that follows the new one.
  const std::string locked = GENERATE("n", "z");
  INFO("FOR UPDATE '" << locked << "'");
  Db d(KeyIndex::non_unique);
  auto& a = d.app();
  auto& b = d.app();
  db::Result r;
  a.node.spawn("locker", [&] {
    auto c = a.pool.acquire();
    c.set_origin("locker");
    for (const char* key : {"b", "m", "x"}) c.insert(kTable, account(key));
    c.begin();
    sim::sleep_until(at_ms(20));
    c.execute(select_for_update(locked));
    sim::sleep_until(at_ms(100));
    c.commit();
  });
  b.node.spawn("inserter", [&] {
    auto c = b.pool.acquire();
    c.set_origin("inserter");
    sim::sleep_until(at_ms(40));
    r = c.try_execute(insert_statement(kTable, account(locked == "n" ? "o" : "zz")));
  });
  REQUIRE(d.engine.run().ok());
  CHECK(r.ok());
  CHECK(r.undone == db::Undone::nothing);
  REQUIRE(r.waits.size() == 1);
  CHECK(r.waits[0].index == "open_id");
  CHECK(r.waits[0].entry == (locked == "n" ? "gap before ('x', 3)" : "supremum"));
  CHECK(r.waits[0].mode == "X insert intention");
  CHECK(r.waits[0].behind == std::vector<std::string>{"locker"});
}

TEST_CASE("a status CAS behind an open transaction's update reports a wait for X on the primary key's record", "[db]") {
  // Pins conformance status-cas-commit: in a status CAS (`UPDATE ... WHERE id=? AND status=2`) the second waits; a
  // lookup by id locks the record only.
  Db d(KeyIndex::unique);
  auto& a = d.app();
  auto& b = d.app();
  std::int64_t id = 0;
  db::Result r;
  a.node.spawn("first", [&] {
    auto c = a.pool.acquire();
    c.set_origin("first");
    id = c.insert(kTable, account("task-1", {{"status", 2}})).insert_id;
    c.begin();
    sim::sleep_until(at_ms(20));
    c.update(kTable, {{"status", 3}}, {db::eq("id", id), db::eq("status", 2)});
    sim::sleep_until(at_ms(100));
    c.commit();
  });
  b.node.spawn("second", [&] {
    auto c = b.pool.acquire();
    sim::sleep_until(at_ms(40));
    r = c.try_execute({.kind = db::Statement::Kind::update,
                       .table = kTable,
                       .where = {db::eq("id", id), db::eq("status", 2)},
                       .values = {{"status", 3}}});
  });
  REQUIRE(d.engine.run().ok());
  CHECK(r.ok());
  CHECK(r.affected == 0);
  REQUIRE(r.waits.size() == 1);
  CHECK(r.waits[0].index == "PRIMARY");
  CHECK(r.waits[0].entry == "(1)");
  CHECK(r.waits[0].mode == "X");
  CHECK(r.waits[0].behind == std::vector<std::string>{"first"});
}

TEST_CASE("a deadlock victim's result names the cycle, victim first, and counts every row change its rollback undid",
          "[db]") {
  // Pins docs/sql.md, What a statement returns (1213): the deadlock victim is the transaction whose lock request
  // closes the cycle, unless it has modified more rows (InnoDB rolls back the lighter one); 1213 rolls back the whole
  // transaction (conformance rollback-scope-1213).
  const bool lighter_closes = GENERATE(true, false);
  INFO((lighter_closes ? "the lighter transaction closes the cycle" : "the heavier transaction closes the cycle"));
  Db d(KeyIndex::unique);
  auto& a = d.app();
  auto& b = d.app();
  db::Result light, heavy;
  // The lighter transaction changes one row, the heavier three; both lock the gap where k
  // would go, then insert k: the second insert closes the cycle.
  a.node.spawn("light", [&] {
    auto c = a.pool.acquire();
    c.set_origin("light");
    c.begin();
    sim::sleep_until(at_ms(10));
    c.insert(kTable, account("c1"));
    sim::sleep_until(at_ms(30));
    c.execute(select_for_update("k"));
    sim::sleep_until(at_ms(lighter_closes ? 60 : 50));
    light = c.try_execute(insert_statement(kTable, account("k")));
    if (light.ok()) c.commit();
  });
  b.node.spawn("heavy", [&] {
    auto c = b.pool.acquire();
    c.set_origin("heavy");
    c.begin();
    sim::sleep_until(at_ms(12));
    for (const char* key : {"a1", "a2", "a3"}) c.insert(kTable, account(key));
    sim::sleep_until(at_ms(40));
    c.execute(select_for_update("k"));
    sim::sleep_until(at_ms(lighter_closes ? 50 : 60));
    heavy = c.try_execute(insert_statement(kTable, account("k")));
    if (heavy.ok()) c.commit();
  });
  REQUIRE(d.engine.run().ok());
  CHECK(heavy.ok());
  CHECK(light.code == Code::deadlock);
  CHECK(light.message == "Deadlock found when trying to get lock; try restarting transaction");
  CHECK(light.deadlock_cycle == std::vector<std::string>{"light", "heavy"});
  CHECK(light.undone == db::Undone::transaction);
  CHECK(light.undone_rows == 1);
  // The lighter one waited on the heavier one's gap (k sorts after every row: the supremum),
  // or, closing the cycle, was refused at once.
  REQUIRE(light.waits.size() == 1);
  CHECK(light.waits[0].entry == "supremum");
  CHECK(light.waits[0].mode == "X insert intention");
  CHECK(light.waits[0].behind == std::vector<std::string>{"heavy"});
  if (lighter_closes) CHECK(light.waits[0].waited == 0ms);
  CHECK(heavy.waits.size() == 1);
  CHECK(heavy.undone == db::Undone::nothing);
  CHECK(d.rows_with("c1").empty());
}

TEST_CASE("a lock wait timeout carries MySQL's message and undoes only the statement", "[db]") {
  // Pins conformance duplicate-wait-timeout: 1205 if the holder stays open past innodb_lock_wait_timeout;
  // rollback-scope-1205: 1062 and 1205 roll back only the statement (the transaction stays open).
  Db d(KeyIndex::unique, {.database = {.lock_wait_timeout = 2s}});
  auto& a = d.app();
  auto& b = d.app();
  db::Result r;
  a.node.spawn("holder", [&] {
    auto c = a.pool.acquire();
    c.set_origin("holder");
    c.begin();
    sim::sleep_until(at_ms(10));
    c.insert(kTable, account("k"));
    sim::sleep_until(at_ms(5000));
    c.commit();
  });
  b.node.spawn("waiter", [&] {
    auto c = b.pool.acquire();
    c.begin();
    sim::sleep_until(at_ms(50));
    r = c.try_execute(insert_statement(kTable, account("k")));
    c.commit();
  });
  REQUIRE(d.engine.run().ok());
  CHECK(r.code == Code::lock_wait_timeout);
  CHECK(r.message == "Lock wait timeout exceeded; try restarting transaction");
  CHECK(r.undone == db::Undone::statement);
  REQUIRE(r.waits.size() == 1);
  CHECK(r.waits[0].waited == 2s);
  CHECK(r.waits[0].behind == std::vector<std::string>{"holder"});
}

TEST_CASE("REPLACE of a row the same in every column, on a table with that one unique key, counts no deletion, and a row that "
          "differs counts its deletion",
          "[db]") {
  // MariaDB rewrites the row in place (conformance mtr-insert-into-empty-mdev29545-replace).
  SqlDb d("CREATE TABLE t (c INT PRIMARY KEY, v INT NOT NULL DEFAULT 0)");
  db::Result twice, changed, same;
  d.a.node.spawn("writer", [&] {
    auto c = d.a.pool.acquire();
    twice = c.try_execute(sql("REPLACE INTO t (c) VALUES (1984), (1984)"));
    changed = c.try_execute(sql("REPLACE INTO t (c, v) VALUES (1984, 1)"));
    same = c.try_execute(sql("REPLACE INTO t (c, v) VALUES (1984, 1)"));
  });
  REQUIRE(d.engine.run().ok());
  CHECK(twice.affected == 2);    // one insert, then the same row again
  CHECK(changed.affected == 2);  // a deletion and an insert
  CHECK(same.affected == 1);
}
