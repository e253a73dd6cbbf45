// Redlock (redlock-rb's algorithm) against five independent Redis masters: safe without
// faults; unsafe with a clock step plus a partition, or a restart without fsync; safe
// again with a restart delayed past the TTL (docs/models.md, Lock services).

#include <catch2/catch.hpp>

#include <deque>

#include "models/redis/redlock.hpp"
#include "support.hpp"

using namespace test;
using models::redis::Persistence;

namespace {

struct Five {
  sim::Engine engine;
  models::Network net{engine, {sim::uniform(100us, 3ms), 0}};
  std::deque<models::Node> nodes;
  std::deque<models::redis::Server> servers;
  std::vector<models::redis::Server*> masters;

  explicit Five(std::uint64_t seed = 1, Persistence persistence = Persistence::none) : engine(config(seed)) {
    for (int i = 1; i <= 5; ++i) {
      auto& n = nodes.emplace_back(engine, models::NodeConfig{"redis-" + std::to_string(i), {}});
      masters.push_back(&servers.emplace_back(net, n, models::redis::ServerConfig{.persistence = persistence}));
      masters.back()->start();
    }
  }
  ~Five() { engine.shutdown(); }
  models::Node& node(std::string name) { return nodes.emplace_back(engine, models::NodeConfig{std::move(name), {}}); }
  void cut(models::Node& from, std::initializer_list<int> redis) {
    for (int r : redis) net.partition_both(from.id(), masters[static_cast<std::size_t>(r - 1)]->node().id());
  }
};

struct Holding {
  sim::Time from, until;  // true time: acquired, and the end of its validity or its unlock
};

}  // namespace

TEST_CASE("Redlock grants at most one holder when there are no pauses, clock steps or restarts") {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    Five f(seed);
    std::vector<Holding> held;
    for (int c = 0; c < 3; ++c) {
      auto& app = f.node("app-" + std::to_string(c));
      app.spawn("worker", [&f, &app, &held] {
        models::redis::Redlock redlock(f.net, app, f.masters, {.ttl = 200ms});
        sim::Stream s = f.engine.stream(app.name() + ".work");
        for (int i = 0; i < 20; ++i) {
          const auto lock = redlock.lock("openid:42");
          if (lock.held) {
            const sim::Time from = sim::now();
            sim::sleep_for(sim::uniform(1ms, 20ms).sample_duration(s));
            held.push_back({from, std::min(sim::now(), from + lock.validity)});
            redlock.unlock(lock);
          }
          sim::sleep_for(sim::uniform(0ms, 30ms).sample_duration(s));
        }
      });
    }
    REQUIRE(f.engine.run().ok());
    REQUIRE(held.size() >= 10);
    std::sort(held.begin(), held.end(), [](const auto& x, const auto& y) { return x.from < y.from; });
    for (std::size_t i = 1; i < held.size(); ++i) CHECK(held[i].from >= held[i - 1].until);
  }
}

namespace {
// Client 1 on app-1 (cut off from redis-4 and redis-5) takes the lock at 0 s on redis-1..3;
// `fault` hits redis-3 at 0.5 s (before its first fsync, at 1 s); client 2 on app-2 (cut off from redis-1 and redis-2) tries
// at 2 s. Returns both results and whether client 1's validity still ran when 2 acquired.
struct TwoClients {
  models::redis::Redlock::Lock first, second;
  sim::Time first_at, second_at;
};
TwoClients contend(Persistence persistence, const std::function<void(Five&)>& fault) {
  Five f(1, persistence);
  auto& app1 = f.node("app-1");
  auto& app2 = f.node("app-2");
  f.cut(app1, {4, 5});
  f.cut(app2, {1, 2});
  TwoClients out;
  app1.spawn("client-1", [&] {
    models::redis::Redlock redlock(f.net, app1, f.masters);
    out.first = redlock.lock("openid:42");
    out.first_at = sim::now();
  });
  f.engine.spawn(sim::kWorld, "fault", [&] {
    sim::sleep_until(at_ms(500));
    fault(f);
  });
  app2.spawn("client-2", [&] {
    sim::sleep_until(at_ms(2000));
    models::redis::Redlock redlock(f.net, app2, f.masters);
    out.second = redlock.lock("openid:42");
    out.second_at = sim::now();
  });
  REQUIRE(f.engine.run().ok());
  return out;
}
}  // namespace

TEST_CASE("Redlock with a clock step on one node plus a partition of two: two clients both hold the lock") {
  const auto r = contend(Persistence::none, [](Five& f) { f.masters[2]->node().step_clock(15s); });
  REQUIRE(r.first.held);
  CHECK(r.first.granted == 3);
  REQUIRE(r.second.held);
  CHECK(r.second_at < r.first_at + r.first.validity);  // client 1 still believes it holds the lock
}

TEST_CASE("Redlock with a crash and restart without fsync: two clients both hold the lock") {
  const auto r = contend(Persistence::aof_everysec, [](Five& f) {
    f.masters[2]->node().crash();  // a machine crash: the last second of writes was never fsynced
    sim::sleep_for(100ms);
    f.masters[2]->node().restart();
  });
  REQUIRE(r.first.held);
  REQUIRE(r.second.held);
  CHECK(r.second_at < r.first_at + r.first.validity);
}

TEST_CASE("Redlock with the restart delayed past the TTL: no second holder") {
  const auto r = contend(Persistence::aof_everysec, [](Five& f) {
    f.masters[2]->node().crash();
    sim::sleep_for(11s);  // longer than the 10 s TTL
    f.masters[2]->node().restart();
  });
  REQUIRE(r.first.held);
  CHECK_FALSE(r.second.held);
}
