// The Consul-like store: sessions, acquire and release, the lock-delay, api.Lock (docs/models.md, Consul).

#include <catch2/catch.hpp>

#include "models/coord/consul_lock.hpp"
#include "support.hpp"

using namespace test;
using models::consul::Behavior;
using models::consul::SessionOptions;

namespace {
struct Consul {
  sim::Engine engine{config()};
  models::Network net{engine, {sim::fixed(1ms), 0}};
  models::Node app1{engine, {"app-1", {}}};
  models::Node app2{engine, {"app-2", {}}};
  models::Node node{engine, {"consul-1", {}}};
  models::consul::Server server{net, node};
  models::consul::Client a{net, app1, server};
  models::consul::Client b{net, app2, server};
  Consul() { server.start(); }
  ~Consul() { engine.shutdown(); }
};

SessionOptions ttl_session(sim::Duration ttl, sim::Duration lock_delay, Behavior behavior = Behavior::release) {
  return {.ttl = ttl, .lock_delay = lock_delay, .behavior = behavior};
}
}  // namespace

TEST_CASE("a Consul key is acquired by one session at a time, and its LockIndex rises with each new holder") {
  Consul c;
  bool a_took = false, b_refused = true, b_took = false, a_again = false;
  std::uint64_t first = 0, second = 0, after_reacquire = 0;
  c.app1.spawn("clients", [&] {
    const auto sa = c.a.create_session(ttl_session(15s, 15s)).session;
    const auto sb = c.b.create_session(ttl_session(15s, 15s)).session;
    a_took = c.a.acquire("lock", "a", sa).ok;
    b_refused = !c.b.acquire("lock", "b", sb).ok;
    a_again = c.a.acquire("lock", "a", sa).ok;  // its own lock: taken again, same LockIndex
    first = c.a.get("lock").kv->lock_index;
    after_reacquire = first;
    CHECK(c.a.release("lock", sa).ok);
    b_took = c.b.acquire("lock", "b", sb).ok;  // a clean release: no lock-delay
    second = c.b.get("lock").kv->lock_index;
  });
  REQUIRE(c.engine.run().ok());
  CHECK(a_took);
  CHECK(b_refused);
  CHECK(a_again);
  CHECK(first == 1);
  CHECK(after_reacquire == 1);
  CHECK(b_took);
  CHECK(second == 2);
}

TEST_CASE("a Consul session not renewed is invalidated after twice its TTL, and its key stays refused for the lock-delay") {
  Consul c;
  bool held_at_19s = false, held_at_21s = true, refused_in_delay = false, taken_after_delay = false;
  std::uint64_t sa = 0;
  c.app1.spawn("holder", [&] {
    sa = c.a.create_session(ttl_session(10s, 15s)).session;
    CHECK(c.a.acquire("lock", "a", sa).ok);
  });
  c.app2.spawn("other", [&] {
    const auto sb = c.b.create_session(ttl_session(0s, 15s)).session;  // no TTL: lives on
    sim::sleep_until(at_ms(19'000));
    held_at_19s = c.server.holds("lock", sa);
    sim::sleep_until(at_ms(21'000));
    held_at_21s = c.server.holds("lock", sa);
    refused_in_delay = !c.b.acquire("lock", "b", sb).ok;
    sim::sleep_until(at_ms(35'500));
    taken_after_delay = c.b.acquire("lock", "b", sb).ok;
  });
  REQUIRE(c.engine.run().ok());
  CHECK(held_at_19s);
  CHECK_FALSE(held_at_21s);
  CHECK(refused_in_delay);
  CHECK(taken_after_delay);
  CHECK(c.server.invalidated_at(sa) > at_ms(19'000));
  CHECK(c.server.invalidated_at(sa) < at_ms(20'100));
}

TEST_CASE("a Consul session renewed in the background outlives its TTL until a pause of its node outlasts twice the TTL") {
  Consul c;
  bool at_60s = false, after_pause = true;
  std::uint64_t sa = 0;
  c.app1.spawn("holder", [&] {
    sa = c.a.create_session(ttl_session(10s, 0s)).session;
    c.a.acquire("lock", "a", sa);
    models::consul::renew_in_background(c.a, sa, 10s);
  });
  c.engine.spawn(sim::kWorld, "gc", [&] {
    sim::sleep_until(at_ms(60'000));
    at_60s = c.server.holds("lock", sa);
    c.app1.pause(25s);
  });
  c.app2.spawn("observer", [&] {
    sim::sleep_until(at_ms(86'000));
    after_pause = c.b.get("lock").kv->session == sa;
  });
  REQUIRE(c.engine.run().ok());
  CHECK(at_60s);
  CHECK_FALSE(after_pause);
}

TEST_CASE("a Consul session with behavior delete takes its key with it, and the lock-delay applies all the same") {
  Consul c;
  bool gone = false, refused = false;
  c.app1.spawn("holder", [&] {
    const auto sa = c.a.create_session(ttl_session(10s, 10s, Behavior::del)).session;
    c.a.acquire("lock", "a", sa);
  });
  c.app2.spawn("other", [&] {
    const auto sb = c.b.create_session(ttl_session(0s, 0s)).session;
    sim::sleep_until(at_ms(21'000));
    gone = !c.b.get("lock").kv.has_value();
    refused = !c.b.acquire("lock", "b", sb).ok;
  });
  REQUIRE(c.engine.run().ok());
  CHECK(gone);
  CHECK(refused);
}

TEST_CASE("a Consul session node's going down invalidates it after the failure detection, without a TTL") {
  Consul c;
  std::uint64_t sa = 0;
  bool held_before = false;
  c.app1.spawn("holder", [&] {
    sa = c.a.create_session(ttl_session(0s, 0s)).session;
    c.a.acquire("lock", "a", sa);
  });
  c.engine.spawn(sim::kWorld, "crash", [&] {
    sim::sleep_until(at_ms(1000));
    held_before = c.server.holds("lock", sa);
    c.app1.crash();
  });
  c.app2.spawn("observer", [&] {
    sim::sleep_until(at_ms(5000));
    CHECK(c.b.get("lock").kv->session == 0);
  });
  REQUIRE(c.engine.run().ok());
  CHECK(held_before);
  CHECK(c.server.invalidated_at(sa) >= at_ms(3000));
  CHECK(c.server.invalidated_at(sa) <= at_ms(3200));
}

TEST_CASE("a Consul request naming an invalidated session is refused with the server's error, and a TTL out of range too") {
  Consul c;
  std::string acquire_error, ttl_error;
  c.app1.spawn("client", [&] {
    const auto sa = c.a.create_session(ttl_session(10s, 0s)).session;
    c.a.destroy(sa);
    acquire_error = c.a.acquire("lock", "a", sa).error;
    ttl_error = c.a.create_session(ttl_session(5s, 0s)).error;
  });
  REQUIRE(c.engine.run().ok());
  CHECK(acquire_error.find("invalid session") != std::string::npos);
  CHECK(ttl_error.find("Invalid Session TTL") != std::string::npos);
}

TEST_CASE("Consul's api.Lock waits out another holder's lock-delay and takes the key on a retry") {
  Consul c;
  bool a_held = false, b_held = false;
  std::uint64_t a_token = 0, b_token = 0;
  sim::Time b_took_at{};
  c.app1.spawn("holder", [&] {
    models::consul::Lock lock(c.a, "locks/k", "a", {.session = ttl_session(10s, 15s)});
    a_held = lock.lock(1s);
    a_token = lock.token();
  });
  c.engine.spawn(sim::kWorld, "gc", [&] {
    sim::sleep_until(at_ms(100));
    c.app1.pause(120s);  // the holder's renewals stop: invalidated at about 20 s, refused until about 35 s
  });
  c.app2.spawn("waiter", [&] {
    sim::sleep_until(at_ms(5000));
    models::consul::Lock lock(c.b, "locks/k", "b", {.session = ttl_session(10s, 15s)});
    b_held = lock.lock(60s);
    b_took_at = sim::now();
    b_token = lock.token();
    lock.unlock();
  });
  REQUIRE(c.engine.run().ok());
  CHECK(a_held);
  CHECK(b_held);
  CHECK(b_took_at >= at_ms(35'000));
  CHECK(b_took_at < at_ms(41'000));  // the next 5 s retry after the delay
  CHECK(a_token == 1);
  CHECK(b_token == 2);
}

TEST_CASE("Consul's api.Lock released cleanly hands the key to a blocked waiter at once") {
  Consul c;
  sim::Time b_took_at{};
  c.app1.spawn("holder", [&] {
    models::consul::Lock lock(c.a, "locks/k", "a");
    REQUIRE(lock.lock(1s));
    sim::sleep_for(2s);
    lock.unlock();
  });
  c.app2.spawn("waiter", [&] {
    sim::sleep_until(at_ms(500));
    models::consul::Lock lock(c.b, "locks/k", "b");
    REQUIRE(lock.lock(60s));
    b_took_at = sim::now();
    CHECK(lock.wakeups() >= 1);
    lock.unlock();
  });
  REQUIRE(c.engine.run().ok());
  CHECK(b_took_at > at_ms(2000));
  CHECK(b_took_at < at_ms(2100));
}
