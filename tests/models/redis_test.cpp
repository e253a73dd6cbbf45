// The Redis model: each documented behaviour of docs/models.md (Redis; Lock services) and of
// Redis 7.0 as the conformance scripts run it (conformance/redis-scripts/) pinned by one test.

#include <catch2/catch.hpp>

#include <deque>
#include <memory>
#include <optional>

#include "models/redis/redlock.hpp"
#include "support.hpp"

using namespace test;
using models::redis::Command;
using models::redis::Persistence;
using models::redis::Reply;

namespace {

// A few app nodes and Redis nodes on a network with 1 ms links.
struct Cluster {
  sim::Engine engine{config()};
  models::Network net{engine, {sim::fixed(1ms), 0}};
  std::deque<models::Node> nodes;
  std::deque<models::redis::Server> servers;

  ~Cluster() { engine.shutdown(); }

  models::Node& node(std::string name, models::ClockConfig clock = {}) { return nodes.emplace_back(engine, models::NodeConfig{std::move(name), clock}); }
  models::redis::Server& redis(std::string name, models::redis::ServerConfig c = {}, models::ClockConfig clock = {}) {
    auto& s = servers.emplace_back(net, node(std::move(name), clock), std::move(c));
    s.start();
    return s;
  }
  // Runs `body` as a process on `on`, starting at `at`.
  void at(sim::Time at, models::Node& on, std::function<void()> body) {
    on.spawn("script", [at, body = std::move(body)] {
      sim::sleep_until(at);
      body();
    });
  }
};

bool ok(const Reply& r) { return r.kind == Reply::Kind::ok; }

}  // namespace

TEST_CASE("SET NX PX: a second SET NX fails until the TTL passes on the Redis node's clock, then succeeds") {
  Cluster c;
  auto& app = c.node("app-1");
  auto& redis = c.redis("redis-1", {}, {0ms, -100'000});  // the Redis node's clock runs 10% slow
  models::redis::Client client(c.net, app, redis);
  std::vector<bool> granted;
  c.at(at_ms(0), app, [&] {
    granted.push_back(ok(client.run(Command::set_nx_px("lock", "a", 1s))));
    sim::sleep_until(at_ms(1050));  // 1.05 s true is 0.945 s on the Redis node: still held
    granted.push_back(ok(client.run(Command::set_nx_px("lock", "b", 1s))));
    sim::sleep_until(at_ms(1150));  // 1.035 s on the Redis node: expired
    granted.push_back(ok(client.run(Command::set_nx_px("lock", "b", 1s))));
  });
  REQUIRE(c.engine.run().ok());
  CHECK(granted == std::vector<bool>{true, false, true});
}

TEST_CASE("commands that reach a paused Redis wait in its queue, and queued() counts them for the memory budget") {
  Cluster c;
  auto& app = c.node("app-1");
  auto& redis = c.redis("redis-1");
  c.engine.spawn(sim::kWorld, "gc", [&] { redis.node().pause(10s); });
  std::deque<models::redis::Client> clients;
  for (int i = 0; i < 5; ++i) {
    auto& client = clients.emplace_back(c.net, app, redis, 60s);  // waits out the pause
    c.at(at_ms(1), app, [&client, i] { client.run(Command::set_nx_px("k" + std::to_string(i), "v", 60s)); });
  }
  std::optional<std::size_t> during;
  c.at(at_ms(5000), app, [&] { during = redis.queued(); });
  REQUIRE(c.engine.run().ok());
  CHECK(during == 5);  // landed on the paused node, not yet served
  CHECK(redis.queued() == 0);
}

TEST_CASE("a forward clock step on the Redis node expires the key early") {
  Cluster c;
  auto& app = c.node("app-1");
  auto& redis = c.redis("redis-1");
  models::redis::Client client(c.net, app, redis);
  std::vector<bool> granted;
  c.at(at_ms(0), app, [&] { granted.push_back(ok(client.run(Command::set_nx_px("lock", "a", 10s)))); });
  c.at(at_ms(1000), app, [&] { redis.node().step_clock(15s); });
  c.at(at_ms(2000), app, [&] { granted.push_back(ok(client.run(Command::set_nx_px("lock", "b", 10s)))); });
  REQUIRE(c.engine.run().ok());
  CHECK(granted == std::vector<bool>{true, true});  // 2 s into a 10 s TTL, a second holder
}

TEST_CASE("plain DEL by a former holder removes the current holder's key, compare-and-delete does not") {
  Cluster c;
  auto& app = c.node("app-1");
  auto& redis = c.redis("redis-1");
  models::redis::Client client(c.net, app, redis);
  Reply after_del, after_cas;
  c.at(at_ms(0), app, [&] {
    client.run(Command::set_nx_px("lock", "old-holder", 100ms));
    sim::sleep_for(200ms);  // the old holder's lease ran out...
    client.run(Command::set_nx_px("lock", "new-holder", 10s));  // ...and another took the lock
    const Reply cas = client.run(Command::cas_del("lock", "old-holder"));
    CHECK(cas == Reply::number(0));
    after_cas = client.run(Command::get("lock"));
    client.run(Command::del("lock"));  // the old holder's plain unlock
    after_del = client.run(Command::get("lock"));
  });
  REQUIRE(c.engine.run().ok());
  CHECK(after_cas == Reply::bulk("new-holder"));
  CHECK(after_del.is_nil());
}

TEST_CASE("crash and restart keep what each persistence mode has on disk") {
  struct Case {
    Persistence persistence;
    bool process_kill;     // else a machine crash
    sim::Time crash_at;
    bool kept;
  };
  // The write is acknowledged at about 2 ms; everysec fsyncs at 1 s, 2 s, ...
  const std::vector<Case> cases = {
      {Persistence::none, true, at_ms(500), false},
      {Persistence::none, false, at_ms(500), false},
      {Persistence::aof_everysec, true, at_ms(500), true},    // the page cache survives a process kill
      {Persistence::aof_everysec, false, at_ms(500), false},  // a machine crash loses the last second
      {Persistence::aof_everysec, false, at_ms(1500), true},  // fsynced at 1 s
      {Persistence::aof_always, false, at_ms(500), true},
      {Persistence::aof_always, true, at_ms(500), true},
  };
  for (const Case& k : cases) {
    CAPTURE(models::redis::to_string(k.persistence), k.process_kill, k.crash_at);
    Cluster c;
    auto& app = c.node("app-1");
    auto& redis = c.redis("redis-1", {.persistence = k.persistence});
    models::redis::Client client(c.net, app, redis);
    Reply read;
    c.at(at_ms(0), app, [&] { REQUIRE(ok(client.run(Command::set("k", "v")))); });
    c.at(k.crash_at, app, [&] {
      if (k.process_kill) redis.kill_process();
      else redis.node().crash();
      sim::sleep_for(100ms);
      redis.node().restart();
      read = client.run(Command::get("k"));
    });
    REQUIRE(c.engine.run().ok());
    CHECK(read == (k.kept ? Reply::bulk("v") : Reply::nil()));
  }
}

TEST_CASE("a restart after the TTL has passed recovers the lock already expired") {
  Cluster c;
  auto& app = c.node("app-1");
  auto& redis = c.redis("redis-1", {.persistence = Persistence::aof_always});
  models::redis::Client client(c.net, app, redis);
  Reply read;
  c.at(at_ms(0), app, [&] { client.run(Command::set_nx_px("lock", "a", 1s)); });
  c.at(at_ms(100), app, [&] {
    redis.node().crash();
    sim::sleep_for(2s);
    redis.node().restart();
    read = client.run(Command::get("lock"));
  });
  REQUIRE(c.engine.run().ok());
  CHECK(read.is_nil());
}

TEST_CASE("failover before replication loses an acknowledged SET NX, so a second client acquires the same key") {
  Cluster c;
  auto& app1 = c.node("app-1");
  auto& app2 = c.node("app-2");
  models::redis::ServerConfig slow_replication{.replication_lag = sim::fixed(5s)};
  auto& master = c.redis("redis-1", slow_replication);
  auto& replica = c.redis("redis-2", slow_replication);
  models::redis::Sentinel sentinel(c.net, c.node("sentinel"), {&master, &replica}, {.down_after = 3s});
  sentinel.start();
  models::redis::Client a(c.net, app1, sentinel);
  models::redis::Client b(c.net, app2, sentinel);
  bool a_granted = false, b_granted = false;
  c.at(at_ms(0), app1, [&] { a_granted = ok(a.run(Command::set_nx_px("lock", "a", 30s))); });
  c.at(at_ms(100), app1, [&] { master.node().crash(); });
  c.at(at_ms(6000), app2, [&] { b_granted = ok(b.run(Command::set_nx_px("lock", "b", 30s))); });
  REQUIRE(c.engine.run().ok());
  CHECK(sentinel.failovers() == 1);
  CHECK(&sentinel.master() == &replica);
  CHECK(a_granted);
  CHECK(b_granted);  // both hold "lock" within its 30 s TTL
}

TEST_CASE("a master crash loses the writes still within their replication lag, even if the replica is never promoted") {
  Cluster c;
  auto& app1 = c.node("app-1");
  auto& master = c.redis("redis-1", {.replication_lag = sim::fixed(50ms)});
  auto& replica = c.redis("redis-2", {.replication_lag = sim::fixed(50ms)});
  master.add_replica(replica);
  models::redis::Client a(c.net, app1, master);
  c.at(at_ms(0), app1, [&] {
    a.run(Command::set("early", "1"));
    sim::sleep_for(100ms);  // replicated by now
    a.run(Command::set("late", "1"));
  });
  c.at(at_ms(120), app1, [&] { master.node().crash(); });
  REQUIRE(c.engine.run().ok());
  CHECK(replica.keyspace().find("early", c.engine.now()) != nullptr);
  CHECK(replica.keyspace().find("late", c.engine.now()) == nullptr);
}

TEST_CASE("a write replicated before the failover survives it") {
  Cluster c;
  auto& app1 = c.node("app-1");
  auto& master = c.redis("redis-1", {.replication_lag = sim::fixed(10ms)});
  auto& replica = c.redis("redis-2", {.replication_lag = sim::fixed(10ms)});
  models::redis::Sentinel sentinel(c.net, c.node("sentinel"), {&master, &replica}, {.down_after = 3s});
  sentinel.start();
  models::redis::Client a(c.net, app1, sentinel);
  bool second_granted = true;
  c.at(at_ms(0), app1, [&] { a.run(Command::set_nx_px("lock", "a", 30s)); });
  c.at(at_ms(100), app1, [&] { master.node().crash(); });
  c.at(at_ms(6000), app1, [&] { second_granted = ok(a.run(Command::set_nx_px("lock", "b", 30s))); });
  REQUIRE(c.engine.run().ok());
  CHECK(sentinel.failovers() == 1);
  CHECK_FALSE(second_granted);
}

TEST_CASE("a replica refuses writes") {
  Cluster c;
  auto& app = c.node("app-1");
  auto& master = c.redis("redis-1");
  auto& replica = c.redis("redis-2");
  master.add_replica(replica);
  models::redis::Client client(c.net, app, replica);
  Reply r;
  c.at(at_ms(0), app, [&] { r = client.run(Command::set("k", "v")); });
  REQUIRE(c.engine.run().ok());
  CHECK(r.kind == Reply::Kind::error);
  CHECK(r.text.starts_with("READONLY"));
}

TEST_CASE("INCR hands out strictly increasing fencing tokens") {
  Cluster c;
  auto& app = c.node("app-1");
  auto& redis = c.redis("redis-1");
  models::redis::Client client(c.net, app, redis);
  std::vector<std::int64_t> tokens;
  c.at(at_ms(0), app, [&] {
    for (int i = 0; i < 5; ++i) tokens.push_back(client.run(Command::incr("fence:openid:42")).integer);
  });
  REQUIRE(c.engine.run().ok());
  CHECK(tokens == std::vector<std::int64_t>{1, 2, 3, 4, 5});
}

TEST_CASE("the Redisson hash lock re-enters for its owner, renews only for its owner, and releases at count zero") {
  using models::redis::Op;
  Cluster c;
  auto& app = c.node("app-1");
  auto& redis = c.redis("redis-1");
  models::redis::Client client(c.net, app, redis);
  std::vector<Reply> replies;
  c.at(at_ms(0), app, [&] {
    auto run = [&](Op op, const char* owner) { replies.push_back(client.run(Command::hlock(op, "lock", owner, 30s))); };
    run(Op::hlock_acquire, "thread-1");  // nil: acquired
    run(Op::hlock_acquire, "thread-1");  // nil: re-entered
    run(Op::hlock_acquire, "thread-2");  // the remaining lease in ms
    run(Op::hlock_renew, "thread-2");    // 0: not the owner
    run(Op::hlock_renew, "thread-1");    // 1
    run(Op::hlock_release, "thread-2");  // nil: IllegalMonitorStateException in Redisson
    run(Op::hlock_release, "thread-1");  // 0: still held once
    run(Op::hlock_release, "thread-1");  // 1: released
    run(Op::hlock_acquire, "thread-2");  // nil: acquired
  });
  REQUIRE(c.engine.run().ok());
  REQUIRE(replies.size() == 9);
  CHECK(replies[0].is_nil());
  CHECK(replies[1].is_nil());
  CHECK(replies[2].kind == Reply::Kind::integer);
  CHECK(replies[2].integer > 29'000);
  CHECK(replies[3] == Reply::number(0));
  CHECK(replies[4] == Reply::number(1));
  CHECK(replies[5].is_nil());
  CHECK(replies[6] == Reply::number(0));
  CHECK(replies[7] == Reply::number(1));
  CHECK(replies[8].is_nil());
}

TEST_CASE("INCR reads a value as Redis does and refuses to wrap, SET NX XX is a syntax error, PEXPIRE 0 deletes") {
  // Pins conformance/redis-scripts/incr-edge-values, set-nx-xx-syntax-error and pexpire-zero-deletes.
  Cluster c;
  auto& app = c.node("app-1");
  auto& redis = c.redis("redis-1");
  models::redis::Client client(c.net, app, redis);
  std::vector<std::string> seen;
  const auto show = [](const Reply& r) {
    return r.kind == Reply::Kind::error ? "error" : r.kind == Reply::Kind::integer ? std::to_string(r.integer) : r.kind == Reply::Kind::nil ? "nil" : "ok";
  };
  c.at(at_ms(0), app, [&] {
    for (const std::string value : {"007", "+5", " 5", "-0", "-5", "9223372036854775807"}) {
      client.run(Command::set("n", value));
      seen.push_back(show(client.run(Command::incr("n"))));
    }
    Command both = Command::set("k", "v");
    both.nx = both.xx = true;
    seen.push_back(show(client.run(both)));
    seen.push_back(show(client.run(Command::get("k"))));
    client.run(Command::set("k", "v"));
    seen.push_back(show(client.run(Command::pexpire("k", 0ms))));
    seen.push_back(show(client.run(Command::get("k"))));
  });
  REQUIRE(c.engine.run().ok());
  CHECK(seen == std::vector<std::string>{"error", "error", "error", "error", "-4", "error", "error", "nil", "1", "nil"});
}

TEST_CASE("a keyspace counts the bytes its keys hold: a write adds the key's size, an overwrite its difference, a delete or an "
          "expiry takes it back") {
  models::redis::Keyspace k;
  const sim::Time t0{};
  CHECK(k.bytes_held() == 0);
  k.execute(Command::set("a", std::string(1000, 'x')), t0);
  const std::uint64_t one = k.bytes_held();
  CHECK(one >= 1000);
  k.execute(Command::set("b", std::string(1000, 'y')), t0);
  CHECK(k.bytes_held() == 2 * one);
  k.execute(Command::set("a", "short"), t0);  // an overwrite
  CHECK(k.bytes_held() == 2 * one - 995);
  k.execute(Command::del("b"), t0);
  k.execute(Command::set("c", "v", std::chrono::milliseconds(10)), t0);
  k.execute(Command::get("c"), t0 + std::chrono::milliseconds(20));  // found expired, and gone
  k.execute(Command::del("a"), t0);
  CHECK(k.bytes_held() == 0);
  k.apply({"r", models::redis::Value{false, std::string(500, 'z'), {}, sim::kNever}});  // replicated in
  CHECK(k.bytes_held() >= 500);
  k.apply({"r", std::nullopt});
  CHECK(k.bytes_held() == 0);
}
