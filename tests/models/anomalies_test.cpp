// The anomaly checker on histories written by hand: each of Adya's classes from its smallest
// history, a serial history with none, and the bound. (Hermitage's cases run on both engines
// in conformance/test_hermitage_anomalies.py.)

#include <catch2/catch.hpp>

#include "models/checkers/anomalies.hpp"

namespace db = models::db;
using db::History;
using models::checkers::Findings;

namespace {

constexpr std::int64_t kX = 1, kY = 2;

// A table `t` (id, value) seeded with x = 10 and y = 20, as Hermitage's.
History seeded() {
  History h;
  h.wrote(History::kSeed, "t", kX, db::Values{{"id", db::Value{kX}}, {"value", db::Value{std::int64_t{10}}}}, false);
  h.wrote(History::kSeed, "t", kY, db::Values{{"id", db::Value{kY}}, {"value", db::Value{std::int64_t{20}}}}, false);
  return h;
}

db::Statement where(std::vector<db::Condition> terms) {
  db::Statement s;
  s.table = "t";
  s.where = std::move(terms);
  return s;
}

// `txn` reads row `id` (SELECT ... WHERE id = ?) at commit count `view`, and finds `writer`'s
// `ordinal`-th version of it.
void read(History& h, History::Txn txn, std::int64_t id, History::Txn writer, std::uint64_t view = 0, std::size_t ordinal = 0) {
  const auto p = h.predicate(txn, "t", where({db::eq("id", db::Value{id})}), view);
  h.read(*p, id, writer, ordinal);
}

void write(History& h, History::Txn txn, std::int64_t id, std::int64_t value) {
  h.wrote(txn, "t", id, db::Values{{"id", db::Value{id}}, {"value", db::Value{value}}}, false);
}

Findings check(const History& h) {
  Findings out;
  models::checkers::find_anomalies(h, out);
  return out;
}

double count(const Findings& f, const std::string& metric) { return f.values.at(metric); }

double total(const Findings& f) {
  double sum = 0;
  for (const char* m : {"anomalies.g0", "anomalies.g1a", "anomalies.g1b", "anomalies.g1c", "anomalies.g_single", "anomalies.g2_item",
                        "anomalies.g2"})
    sum += count(f, m);
  return sum;
}

}  // namespace

TEST_CASE("Two transactions that each overwrite a row the other wrote make a write cycle (G0)") {
  History h = seeded();
  write(h, 1, kX, 11);
  write(h, 2, kX, 12);
  write(h, 2, kY, 22);
  write(h, 1, kY, 21);
  h.committed(1, 1);
  h.committed(2, 2);
  const Findings f = check(h);
  CHECK(count(f, "anomalies.g0") == 1);
}

TEST_CASE("A committed read of a version that was rolled back is an aborted read (G1a)") {
  History h = seeded();
  write(h, 1, kX, 101);
  read(h, 2, kX, 1);
  h.undone(1, "t", kX);
  h.committed(2, 1);
  const Findings f = check(h);
  CHECK(count(f, "anomalies.g1a") == 1);
  CHECK(total(f) == 1);
  REQUIRE_FALSE(f.examples.empty());
  CHECK(f.examples.front().find("rolled back") != std::string::npos);
}

TEST_CASE("A reader that does not commit makes no aborted read") {
  History h = seeded();
  write(h, 1, kX, 101);
  read(h, 2, kX, 1);
  h.undone(1, "t", kX);
  CHECK(total(check(h)) == 0);
}

TEST_CASE("A committed read of a version its writer changed again is an intermediate read (G1b)") {
  History h = seeded();
  write(h, 1, kX, 101);
  read(h, 2, kX, 1);
  write(h, 1, kX, 11);
  h.committed(1, 1);
  h.committed(2, 2);
  const Findings f = check(h);
  CHECK(count(f, "anomalies.g1b") == 1);
  CHECK(count(f, "anomalies.g1c") == 0);
}

TEST_CASE("Two transactions that each read the other's write make circular information flow (G1c)") {
  History h = seeded();
  write(h, 1, kX, 11);
  write(h, 2, kY, 22);
  read(h, 1, kY, 2);
  read(h, 2, kX, 1);
  h.committed(1, 1);
  h.committed(2, 2);
  const Findings f = check(h);
  CHECK(count(f, "anomalies.g1c") == 1);
  CHECK(count(f, "anomalies.g_single") == 0);
}

TEST_CASE("A transaction that reads x before another's commit and y after it is read skew (G-single)") {
  History h = seeded();
  h.began(1, "T1");
  h.began(2, "T2");
  read(h, 1, kX, History::kSeed);
  write(h, 2, kX, 12);
  write(h, 2, kY, 18);
  h.committed(2, 1);
  read(h, 1, kY, 2, 1);
  h.committed(1, 2);
  const Findings f = check(h);
  CHECK(count(f, "anomalies.g_single") == 1);
  CHECK(count(f, "anomalies.g2_item") == 0);
  CHECK(count(f, "anomalies.g2") == 0);
  REQUIRE_FALSE(f.examples.empty());
  const std::string& why = f.examples.front();
  CHECK(why.rfind("G-single: T1's transaction 1 -> T2's transaction 2", 0) == 0);
  CHECK(why.find("row id = 1") != std::string::npos);
  CHECK(why.find("row id = 2") != std::string::npos);
}

TEST_CASE("The same reads from one snapshot are no anomaly") {
  History h = seeded();
  read(h, 1, kX, History::kSeed);
  write(h, 2, kX, 12);
  write(h, 2, kY, 18);
  h.committed(2, 1);
  read(h, 1, kY, History::kSeed);
  h.committed(1, 2);
  CHECK(total(check(h)) == 0);
}

TEST_CASE("Two transactions that each write a row the other read are write skew (G2-item)") {
  History h = seeded();
  for (History::Txn t : {1, 2}) {
    read(h, t, kX, History::kSeed);
    read(h, t, kY, History::kSeed);
  }
  write(h, 1, kX, 11);
  write(h, 2, kY, 21);
  h.committed(1, 1);
  h.committed(2, 2);
  const Findings f = check(h);
  CHECK(count(f, "anomalies.g2_item") == 1);
  CHECK(count(f, "anomalies.g_single") == 0);
  CHECK(count(f, "anomalies.g2") == 0);
}

// Two transactions each read `WHERE value = 30` and find nothing, then insert a row of theirs.
static History two_inserts(std::int64_t first, std::int64_t second) {
  History h = seeded();
  const db::Statement thirties = where({db::eq("value", db::Value{std::int64_t{30}})});
  (void)h.predicate(1, "t", thirties, 0);
  (void)h.predicate(2, "t", thirties, 0);
  write(h, 1, 3, first);
  write(h, 2, 4, second);
  h.committed(1, 1);
  h.committed(2, 2);
  return h;
}

TEST_CASE("Two transactions that each insert a row the other's WHERE did not see make an anti-dependency cycle (G2)") {
  const Findings f = check(two_inserts(30, 30));
  CHECK(count(f, "anomalies.g2") == 1);
  CHECK(count(f, "anomalies.g2_item") == 0);
  CHECK(count(f, "anomalies.g_single") == 0);
}

TEST_CASE("A row inserted that the WHERE does not match makes no anti-dependency") { CHECK(total(check(two_inserts(31, 32))) == 0); }

TEST_CASE("Transactions one after the other make no anomaly") {
  History h = seeded();
  read(h, 1, kX, History::kSeed);
  write(h, 1, kX, 11);
  h.committed(1, 1);
  read(h, 2, kX, 1, 1);
  write(h, 2, kX, 12);
  h.committed(2, 2);
  CHECK(total(check(h)) == 0);
}

TEST_CASE("A history past its bound is counted unchecked and checks nothing") {
  History h = seeded();
  for (std::size_t i = 0; i <= History::kMostEvents; ++i) write(h, 1, kX, static_cast<std::int64_t>(i));
  h.committed(1, 1);
  REQUIRE(h.overflowed());
  CHECK(h.writes().size() == History::kMostEvents);
  const Findings f = check(h);
  CHECK(count(f, "anomalies.unchecked") == 1);
  CHECK(total(f) == 0);
}

TEST_CASE("A row a LIMIT or SKIP LOCKED read did not return makes no anti-dependency") {
  // Two workers each claim the first queued job, skipping the one the other holds: their
  // claims are those of a serial order, and no cycle is found.
  History h = seeded();
  db::Statement first_queued = where({db::eq("value", db::Value{std::int64_t{10}})});
  first_queued.limit = 1;
  first_queued.on_locked = db::Statement::OnLocked::skip;
  // Both rows queued (value 10); each worker returns one, and claims it (value 11).
  h.wrote(History::kSeed, "t", kY + 1, db::Values{{"id", db::Value{kY + 1}}, {"value", db::Value{std::int64_t{10}}}}, false);
  const auto a = h.predicate(1, "t", first_queued, 0);
  h.read(*a, kX, History::kSeed, 0);
  const auto b = h.predicate(2, "t", first_queued, 0);
  h.read(*b, kY + 1, History::kSeed, 0);
  write(h, 1, kX, 11);
  write(h, 2, kY + 1, 11);
  h.committed(1, 1);
  h.committed(2, 2);
  CHECK(total(check(h)) == 0);
  // The same reads without LIMIT and SKIP LOCKED read every queued row: each missed the other's claim.
  History every = seeded();
  every.wrote(History::kSeed, "t", kY + 1, db::Values{{"id", db::Value{kY + 1}}, {"value", db::Value{std::int64_t{10}}}}, false);
  const db::Statement queued = where({db::eq("value", db::Value{std::int64_t{10}})});
  (void)every.predicate(1, "t", queued, 0);
  (void)every.predicate(2, "t", queued, 0);
  write(every, 1, kX, 11);
  write(every, 2, kY + 1, 11);
  every.committed(1, 1);
  every.committed(2, 2);
  CHECK(count(check(every), "anomalies.g2") == 1);
}
