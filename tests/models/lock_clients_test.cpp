// The lock clients as strategies use them: a Redis lock taken through LockClients is reported
// to the checkers and released the way the strategy's finally would, whatever ends the
// critical section, except a crash.

#include <catch2/catch.hpp>

#include <functional>
#include <optional>

#include "models/coord/zookeeper.hpp"
#include "models/redis/server.hpp"
#include "models/strategies/strategy.hpp"
#include "models/world.hpp"
#include "support.hpp"

using namespace test;
using models::ErrorKind;
using models::strategies::LockGuard;

namespace {

// SET lock:1 NX PX 10 s, the critical section, DEL: as redis-set-nx-ex-drop, with the
// critical section given by the test.
class LockedSection : public models::strategies::Strategy {
 public:
  LockedSection(models::strategies::Env& env, std::function<void()> section)
      : Strategy(env, {}), section_(std::move(section)) {}

 protected:
  ErrorKind bind(const models::Request& r, models::Worker& w) override {
    std::optional<LockGuard> lock = locks(r, w).redis("lock:1", {.ttl = 10s});
    if (!lock) return ErrorKind::lock_busy;
    section_();
    lock->unlock();
    return ErrorKind::none;
  }

 private:
  std::function<void()> section_;
};

models::WorldConfig one_app_server() {
  models::WorldConfig c;
  c.engine = config();
  c.app_servers = 1;
  return c;
}

// One app server and one Redis node; the handler runs once, from a process on the app node.
struct Trial {
  models::Handler* forward = nullptr;
  struct Forward : models::Handler {
    models::Handler** to;
    explicit Forward(models::Handler** t) : to(t) {}
    models::Response handle(const models::Request& r, models::Worker& w) override { return (*to)->handle(r, w); }
  } handler{&forward};
  models::World world{one_app_server(), handler};
  models::Node& redis_node = world.add_node({"redis-1", {}});
  models::redis::Server redis{world.network(), redis_node, {}};
  models::redis::Client client{world.network(), world.server(0).node(), redis, 100ms};
  std::optional<models::strategies::Env> env;
  std::optional<LockedSection> strategy;
  sim::Stream stream = world.engine().stream("worker");
  std::optional<ErrorKind> answered;

  explicit Trial(std::function<void()> section) {
    redis.start();
    env.emplace(models::strategies::Services{
        .servers = {&world.server(0)}, .redis = {&client}, .redis_nodes = {&redis}, .network = &world.network()});
    strategy.emplace(*env, std::move(section));
    world.server(0).node().spawn("worker", [this] {
      models::Worker worker{world.server(0), 0, stream};
      models::Request request;
      request.operation = 1;
      request.key = 1;
      answered = strategy->handle(request, worker).error;
    });
  }
  void run() {
    REQUIRE(world.run().ok());
    world.engine().shutdown();
  }
  bool lock_at_redis() const { return redis.keyspace().find("lock:1", redis_node.clock().now()) != nullptr; }
  const models::checkers::LockObservations& observed() const { return env->observed(); }
};

}  // namespace

TEST_CASE("a Redis lock taken through the lock clients is reported to the checkers and deleted after the critical section") {
  Trial t([] { sim::sleep_for(10ms); });
  t.run();
  CHECK(t.answered == ErrorKind::none);
  CHECK(!t.lock_at_redis());
  REQUIRE(t.observed().locks().records().size() == 1);
  CHECK(t.observed().locks().records()[0].lock == "lock:1");
  CHECK(t.observed().locks().records()[0].until != sim::kNever);
  CHECK(t.observed().redis_commands() == 2);  // SET NX PX, DEL
}

TEST_CASE("a Redis lock is deleted when the critical section fails with a KeeperError, a SqlError or a timeout") {
  auto fails_with = [](auto error, ErrorKind answer) {
    Trial t([&] {
      sim::sleep_for(10ms);
      throw error;
    });
    t.run();
    CHECK(t.answered == answer);
    CHECK(!t.lock_at_redis());
    CHECK(t.observed().redis_commands() == 2);
  };
  fails_with(models::zk::KeeperError(models::zk::Code::session_expired, "/locks/1"), ErrorKind::session_expired);
  fails_with(models::zk::KeeperError(models::zk::Code::node_exists, "/locks/1"), ErrorKind::internal);
  fails_with(models::db::SqlError(models::db::Code::deadlock, "Deadlock found"), ErrorKind::deadlock);
  fails_with(sim::Timeout(), ErrorKind::timeout);
}

TEST_CASE("a crash inside the critical section leaves the Redis lock to its TTL, and ends the hold") {
  std::optional<Trial> trial;
  trial.emplace([&] {
    sim::sleep_for(10ms);
    trial->world.server(0).node().crash();
  });
  trial->run();
  CHECK(!trial->answered);
  CHECK(trial->lock_at_redis());
  CHECK(trial->observed().redis_commands() == 1);  // no DEL
  const auto& hold = trial->observed().locks().records().at(0);
  CHECK(hold.until == hold.from + 10ms);
}

TEST_CASE("an unlock that times out after the critical section failed answers with the unlock's timeout, as finally does") {
  std::optional<Trial> trial;
  trial.emplace([&] {
    sim::sleep_for(10ms);
    trial->redis_node.crash();  // the DEL will get no reply
    throw models::db::SqlError(models::db::Code::deadlock, "Deadlock found");
  });
  trial->run();
  CHECK(trial->answered == ErrorKind::timeout);
}
