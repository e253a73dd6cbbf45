// Where an operation's time goes: the accept queue, the connection pool, row-lock waits in the
// database, lock-service acquires, attempts that timed out, backoff, and the rest; the parts of
// every operation sum to its latency.

#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <optional>

#include "handlers.hpp"
#include "models/db/server.hpp"
#include "models/redis/server.hpp"
#include "models/strategies/strategy.hpp"

using namespace test;
using models::ErrorKind;
using models::Outcome;
using models::TimeSpent;
using models::strategies::LockGuard;

namespace {

// A strategy whose bind is the test's.
class Scripted : public models::strategies::Strategy {
 public:
  using Body = std::function<ErrorKind(Scripted&, const models::Request&, models::Worker&)>;
  Scripted(models::strategies::Env& env, Body body) : Strategy(env, {}), body_(std::move(body)) {}
  using Strategy::connect;
  using Strategy::locks;

 protected:
  ErrorKind bind(const models::Request& r, models::Worker& w) override { return body_(*this, r, w); }

 private:
  Body body_;
};

// One app server, a database reached through a pool of `connections` and a Redis node, with 1 ms
// links everywhere (`world`: small_world's, each client sending one operation at 0 ms).
struct TimedWorld {
  struct Forward : models::Handler {
    Scripted* to = nullptr;
    models::Response handle(const models::Request& r, models::Worker& w) override { return to->handle(r, w); }
  } handler;
  models::World world;
  models::Node& db_node = world.add_node({"db-1", {}});
  models::db::Server db{world.network(), db_node};
  models::db::Pool pool;
  models::Node& redis_node = world.add_node({"redis-1", {}});
  models::redis::Server redis{world.network(), redis_node};
  models::redis::Client redis_client{world.network(), world.server(0).node(), redis, 1s};
  models::strategies::Env env;
  std::optional<Scripted> strategy;

  TimedWorld(models::WorldConfig config, std::size_t connections, Scripted::Body body)
      : world(std::move(config), handler),
        pool(world.network(), world.server(0).node(), db, {.size = connections}),
        env(models::strategies::Services{.servers = {&world.server(0)},
                                         .pools = {&pool},
                                         .redis = {&redis_client},
                                         .redis_nodes = {&redis},
                                         .network = &world.network()}) {
    db.create_table(models::strategies::accounts_table(models::db::KeyIndex::non_unique));
    redis.start();
    strategy.emplace(env, std::move(body));
    handler.to = &*strategy;
  }
  // The processes go first: they use the models below the world.
  ~TimedWorld() { world.engine().shutdown(); }
  // Every operation, its parts checked to sum to its latency; ordered by latency.
  std::vector<models::OperationRecord> run() {
    world.start();
    REQUIRE(world.run().ok());
    std::vector<models::OperationRecord> records = world.clients().records();
    for (const auto& r : records) CHECK(r.time.total() == r.latency());
    std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.latency() < b.latency(); });
    return records;
  }
};

models::WorldConfig clients_and_workers(int clients, int workers) {
  models::WorldConfig c = small_world(1, workers);
  c.clients.clients = clients;
  return c;
}

}  // namespace

TEST_CASE("a pool of one connection makes the second of two concurrent requests wait in the pool for the first's hold") {
  TimedWorld t(clients_and_workers(2, 2), 1, [](Scripted& s, const models::Request& r, models::Worker& w) {
    models::db::Connection c = s.connect(r, w);
    sim::sleep_for(50ms);  // holds the connection
    return ErrorKind::none;
  });
  const auto records = t.run();
  REQUIRE(records.size() == 2);
  CHECK(records[0].time == TimeSpent{.service_network = 52ms});  // 1 ms each way and the 50 ms hold
  CHECK(records[1].time == TimeSpent{.pool = 50ms, .service_network = 52ms});
}

TEST_CASE("a statement waiting for another transaction's row lock shows in db_lock, and only there") {
  static const auto kInsert = models::db::sql::prepare("INSERT INTO t_account (open_id, device) VALUES (?, ?)");
  static const auto kLockRow = models::db::sql::prepare("SELECT id FROM t_account WHERE open_id = ? FOR UPDATE");
  // The row is inserted from 0 ms; both requests arrive at 11 ms, each opens a session of its own
  // and they lock the row at the same instant.
  auto config = clients_and_workers(2, 2);
  config.clients.arrival.start = 10ms;
  TimedWorld t(config, 3, [](Scripted& s, const models::Request& r, models::Worker& w) {
    models::db::Connection c = s.connect(r, w);
    c.begin();
    c.execute(kLockRow, {std::string("a")});
    sim::sleep_for(50ms);  // holds the row's lock
    c.commit();
    return ErrorKind::none;
  });
  t.world.engine().spawn(sim::kWorld, "seed", [&] { t.pool.acquire().execute(kInsert, {std::string("a"), std::string("d")}); });
  const auto records = t.run();
  REQUIRE(records.size() == 2);
  CHECK(records[0].time.db_lock == 0ms);
  CHECK(records[1].time.db_lock >= 50ms);  // the first's hold and commit
  CHECK(records[1].time.db_lock < 55ms);
  CHECK(records[1].latency() - records[0].latency() == records[1].time.db_lock);
  for (const auto& r : records) CHECK(r.time.pool + r.time.queue + r.time.lock_service == 0ms);
}

TEST_CASE("a request waiting for a busy worker shows the wait in queue") {
  RecordingHandler handler(50ms);
  auto c = small_world(1, 1);
  c.clients.clients = 2;
  models::World world(c, handler);
  world.start();
  REQUIRE(world.run().ok());
  std::vector<models::OperationRecord> records = world.clients().records();
  REQUIRE(records.size() == 2);
  CHECK(records[0].time == TimeSpent{.service_network = 52ms});
  CHECK(records[1].time == TimeSpent{.queue = 50ms, .service_network = 52ms});
}

TEST_CASE("a Redis SET NX retried until the holder unlocks shows the retry loop in lock_service") {
  TimedWorld t(clients_and_workers(2, 2), 1, [](Scripted& s, const models::Request& r, models::Worker& w) {
    std::optional<LockGuard> lock = s.locks(r, w).redis("lock:1", {.ttl = 10s, .tries = 1000, .pause = 5ms});
    if (!lock) return ErrorKind::lock_busy;
    sim::sleep_for(50ms);
    lock->unlock();
    return ErrorKind::none;
  });
  const auto records = t.run();
  REQUIRE(records.size() == 2);
  CHECK(records[0].outcome == Outcome::ok);
  CHECK(records[1].outcome == Outcome::ok);
  CHECK(records[0].time.lock_service < 3ms);  // one SET NX: a round trip to Redis
  CHECK(records[1].time.lock_service >= 50ms);  // SET NX every 5 ms until the DEL
  CHECK(records[1].time.lock_service < 65ms);
  CHECK(records[1].time.pool + records[1].time.queue + records[1].time.db_lock == 0ms);
}

TEST_CASE("a pool wait inside a lock acquire counts once, as pool time") {
  // The lock table's row is inserted on a connection the acquire borrows itself: the borrow's
  // wait is pool time, the insert's round trip lock-service time.
  static const auto kTake = models::db::sql::prepare("INSERT INTO t_account (open_id, device) VALUES (?, ?)");
  TimedWorld t(clients_and_workers(2, 2), 1, [](Scripted& s, const models::Request& r, models::Worker& w) {
    {
      models::TimeSpentIn acquiring(w.time, &TimeSpent::lock_service);
      models::db::Connection c = s.connect(r, w);
      c.execute(kTake, {std::string("k") + std::to_string(r.operation), std::string("d")});
      sim::sleep_for(20ms);
    }
    return ErrorKind::none;
  });
  const auto records = t.run();
  REQUIRE(records.size() == 2);
  CHECK(records[0].time.pool == 0ms);
  CHECK(records[1].time.pool == records[0].time.lock_service);  // waited for the whole of the first's acquire
  // The insert's round trip (1 ms each way, 0.5 ms write, 1 ms commit) and the 20 ms; the first
  // borrower also opened the connection's session, one more round trip.
  CHECK(records[0].time.lock_service == 25500us);
  CHECK(records[1].time.lock_service == 23500us);
}

TEST_CASE("a timed-out attempt's time shows in timed_out, the backoff in backoff, and the retry's wait in queue") {
  // Attempt 1 (sent at 0 ms) takes 150 ms on the one worker and times out at 100 ms; after a
  // 20 ms backoff attempt 2 arrives at 121 ms, waits for the worker until 151 ms, is served in
  // 10 ms and answered at 162 ms.
  RecordingHandler handler([](const models::Request& r) { return r.attempt == 1 ? 150ms : 10ms; });
  auto c = small_world(1, 1);
  c.clients.retry.attempt_timeout = 100ms;
  c.clients.retry.max_attempts = 2;
  c.clients.retry.backoff = {20ms, 20ms, models::Jitter::none};
  models::World world(c, handler);
  world.start();
  REQUIRE(world.run().ok());
  REQUIRE(world.clients().records().size() == 1);
  const auto& record = world.clients().records()[0];
  CHECK(record.outcome == Outcome::ok);
  CHECK(record.latency() == 162ms);
  CHECK(record.time == TimeSpent{.queue = 30ms, .timed_out = 100ms, .backoff = 20ms, .service_network = 12ms});
}

TEST_CASE("the parts of every operation are never negative and sum exactly to its latency, under contention and retries") {
  static const auto kFind = models::db::sql::prepare("SELECT id FROM t_account WHERE open_id = ? FOR UPDATE");
  static const auto kInsert = models::db::sql::prepare("INSERT INTO t_account (open_id, device) VALUES (?, ?)");
  auto body = [](Scripted& s, const models::Request& r, models::Worker& w) {
    std::optional<LockGuard> lock = s.locks(r, w).redis("lock:" + std::to_string(r.key), {.ttl = 10s, .tries = 20, .pause = 3ms});
    if (!lock) return ErrorKind::lock_busy;
    models::db::Connection c = s.connect(r, w);
    c.begin();
    if (c.execute(kFind, {std::to_string(r.key)}).rows.empty()) c.execute(kInsert, {std::to_string(r.key), std::string("d")});
    sim::sleep_for(sim::Duration{static_cast<std::int64_t>(w.stream.choose(20'000'000))});
    c.commit();
    lock->unlock();
    return ErrorKind::none;
  };
  auto config = clients_and_workers(40, 3);
  config.clients.keys = 3;
  config.clients.arrival.spread = 50ms;
  config.clients.retry.attempt_timeout = 60ms;
  config.clients.retry.retry_on = {ErrorKind::timeout, ErrorKind::lock_busy};
  config.clients.retry.backoff = {5ms, 40ms, models::Jitter::full};
  TimedWorld t(config, 1, body);
  const auto records = t.run();  // checks every record's sum
  REQUIRE(records.size() == 40);
  TimeSpent sum;
  for (const auto& r : records) {
    for (auto part : {&TimeSpent::queue, &TimeSpent::pool, &TimeSpent::db_lock, &TimeSpent::lock_service, &TimeSpent::timed_out,
                      &TimeSpent::backoff, &TimeSpent::service_network}) {
      CHECK(r.time.*part >= 0ms);
      sum.*part += r.time.*part;
    }
  }
  // The run is busy enough that every kind of wait happened somewhere.
  CHECK(sum.queue > 0ms);
  CHECK(sum.pool > 0ms);
  CHECK(sum.lock_service > 0ms);
  CHECK(sum.timed_out > 0ms);
  CHECK(sum.backoff > 0ms);
}
