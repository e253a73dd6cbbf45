// The etcd-like store: leases, revisions and guarded transactions (docs/models.md, Lock services).

#include <catch2/catch.hpp>

#include "models/coord/etcd_lock.hpp"
#include "support.hpp"

using namespace test;
using models::etcd::Compare;
using models::etcd::Operation;

namespace {
struct Etcd {
  sim::Engine engine{config()};
  models::Network net{engine, {sim::fixed(1ms), 0}};
  models::Node app1{engine, {"app-1", {}}};
  models::Node app2{engine, {"app-2", {}}};
  models::Node node{engine, {"etcd-1", {}}};
  models::etcd::Server server{net, node};
  models::etcd::Client a{net, app1, server};
  models::etcd::Client b{net, app2, server};
  Etcd() { server.start(); }
  ~Etcd() { engine.shutdown(); }
};
}  // namespace

TEST_CASE("an etcd lease not kept alive expires after its TTL, deleting its keys") {
  Etcd e;
  bool before = false, after = true;
  std::int64_t revision_before = 0, revision_after = 0;
  e.app1.spawn("client", [&] {
    const auto lease = e.a.grant(2s);
    e.a.put("lock/openid:42", "a", lease);
    sim::sleep_until(at_ms(1900));
    before = e.a.get("lock/openid:42").has_value();
    revision_before = e.server.revision();
    sim::sleep_until(at_ms(2100));
    after = e.a.get("lock/openid:42").has_value();
    revision_after = e.server.revision();
  });
  REQUIRE(e.engine.run().ok());
  CHECK(before);
  CHECK_FALSE(after);
  CHECK(revision_after == revision_before + 1);  // the deletion is a revision of its own
}

TEST_CASE("an etcd lease kept alive survives its TTL, until a pause of the client outlasts it") {
  Etcd e;
  bool at_10s = false, after_pause = true;
  e.app1.spawn("client", [&] {
    const auto lease = e.a.grant(2s);
    e.a.put("lock/openid:42", "a", lease);
    models::etcd::keep_alive_in_background(e.a, lease, 2s);
    sim::sleep_until(at_ms(10'000));
    at_10s = e.a.get("lock/openid:42").has_value();
  });
  e.engine.spawn(sim::kWorld, "gc", [&] {
    sim::sleep_until(at_ms(10'500));
    e.app1.pause(3s);
  });
  e.app2.spawn("observer", [&] {
    sim::sleep_until(at_ms(13'000));
    after_pause = e.b.get("lock/openid:42").has_value();
  });
  REQUIRE(e.engine.run().ok());
  CHECK(at_10s);
  CHECK_FALSE(after_pause);
}

TEST_CASE("an etcd txn guarded by the lock key's create revision fails once the key was re-created") {
  Etcd e;
  bool first_write = false, stale_write = true;
  std::int64_t token_a = 0, token_b = 0;
  e.app1.spawn("holder-a", [&] {
    const auto lease = e.a.grant(1s);
    token_a = e.a.put("lock", "a", lease).revision;  // the create revision: A's fencing token
    const Compare still_owner{Compare::Target::create_revision, Compare::Result::equal, "lock", token_a};
    first_write = e.a.txn({still_owner}, {{Operation::Kind::put, "data", "from a"}}).ok;
    sim::sleep_for(3s);  // paused past the lease: the key expires and B re-creates it
    stale_write = e.a.txn({still_owner}, {{Operation::Kind::put, "data", "stale a"}}).ok;
  });
  e.app2.spawn("holder-b", [&] {
    sim::sleep_until(at_ms(1500));
    const auto lease = e.b.grant(10s);
    const Compare absent{Compare::Target::create_revision, Compare::Result::equal, "lock", 0};
    REQUIRE(e.b.txn({absent}, {{Operation::Kind::put, "lock", "b", lease}}).ok);
    token_b = e.b.get("lock")->create_revision;
  });
  REQUIRE(e.engine.run().ok());
  CHECK(first_write);
  CHECK_FALSE(stale_write);
  CHECK(token_b > token_a);  // revisions only grow: usable as fencing tokens
  CHECK(e.server.find("data")->value == "from a");
}

TEST_CASE("an etcd watch from a past revision replays the key's changes in order, then delivers new ones") {
  Etcd e;
  std::vector<std::pair<models::etcd::Event::Type, std::int64_t>> seen;
  e.app1.spawn("writer", [&] {
    const auto first = e.a.put("config/x", "1").revision;
    e.a.put("config/x", "2");
    e.a.put("other", "ignored");
    auto watch = e.a.watch("config/", first);
    for (int i = 0; i < 3; ++i) {
      const auto event = watch.next();
      seen.emplace_back(event.type, event.kv.mod_revision);
    }
  });
  e.app2.spawn("deleter", [&] {
    sim::sleep_until(at_ms(100));
    e.b.del("config/x");
  });
  REQUIRE(e.engine.run().ok());
  using T = models::etcd::Event::Type;
  REQUIRE(seen.size() == 3);
  CHECK(seen[0] == std::pair{T::put, std::int64_t{2}});
  CHECK(seen[1] == std::pair{T::put, std::int64_t{3}});
  CHECK(seen[2] == std::pair{T::del, std::int64_t{5}});
}

TEST_CASE("the etcd mutex passes to the next waiter when the holder's lease expires, with a higher token, "
          "and the paused holder's IsOwner-guarded write fails") {
  Etcd e;
  std::int64_t token_a = 0, token_b = 0;
  bool stale_write = true;
  sim::Time b_acquired;
  e.app1.spawn("holder-a", [&] {
    const auto lease = e.a.grant(2s);
    models::etcd::keep_alive_in_background(e.a, lease, 2s);
    models::etcd::Mutex lock(e.a, lease, "locks/openid:42/");
    REQUIRE(lock.lock());
    token_a = lock.token();
    sim::sleep_until(at_ms(1000));
    sim::sleep_for(10ms);  // the GC pause below freezes this
    stale_write = e.a.txn({lock.still_owner()}, {{Operation::Kind::put, "row", "from a"}}).ok;
  });
  e.app2.spawn("waiter-b", [&] {
    sim::sleep_until(at_ms(100));
    const auto lease = e.b.grant(10s);
    models::etcd::keep_alive_in_background(e.b, lease, 10s);
    models::etcd::Mutex lock(e.b, lease, "locks/openid:42/");
    REQUIRE(lock.lock());
    b_acquired = sim::now();
    token_b = lock.token();
    lock.unlock();
  });
  e.engine.spawn(sim::kWorld, "gc", [&] {
    sim::sleep_until(at_ms(1005));
    e.app1.pause(5s);
  });
  REQUIRE(e.engine.run().ok());
  // A's last keep-alive was at t=0.667 s: its 2 s lease ends at 2.667 s, found by the
  // lessor's check at 3 s.
  CHECK(b_acquired > at_ms(2667));
  CHECK(b_acquired < at_ms(3100));
  CHECK(token_b > token_a);
  CHECK_FALSE(stale_write);
}

TEST_CASE("an etcd transaction's writes share one revision, and a lease's revocation deletes all its keys in one") {
  Etcd e;
  std::int64_t start = 0, after_txn = 0, after_empty = 0, after_revoke = 0;
  models::etcd::KeyValue first, second;
  e.app1.spawn("client", [&] {
    start = e.a.put("x", "0").revision;
    const auto lease = e.a.grant(60s);
    after_txn = e.a.txn({}, {{Operation::Kind::put, "a", "1", lease}, {Operation::Kind::put, "b", "2", lease}}).revision;
    first = *e.a.get("a");
    second = *e.a.get("b");
    after_empty = e.a.txn({}, {{.kind = Operation::Kind::del, .key = "absent"}}).revision;  // changes nothing
    after_revoke = e.a.run({.kind = models::etcd::Request::Kind::revoke, .lease = lease}).revision;
  });
  REQUIRE(e.engine.run().ok());
  CHECK(after_txn == start + 1);
  CHECK(first.create_revision == after_txn);
  CHECK(second.mod_revision == after_txn);
  CHECK(after_empty == after_txn);
  CHECK(after_revoke == after_txn + 1);
}

namespace {
// Session A locks, its Unlock's reply is lost, A locks again on the same session, and the
// first Unlock is retried in the background a second later. Whether A's second lock survives
// the retry, and whether session B gets the lock while A believes it holds it.
struct StaleUnlock {
  bool second_lock_kept = false;
  bool b_locked_beside_a = false;
};
StaleUnlock retry_stale_unlock(models::etcd::Mutex::Unlock how) {
  Etcd e;
  StaleUnlock out;
  bool a_holds = false;
  e.app1.spawn("session-a", [&] {
    const auto lease = e.a.grant(60s);
    auto first = std::make_shared<models::etcd::Mutex>(e.a, lease, "locks/job/");
    REQUIRE(first->lock());
    e.net.partition(e.node.id(), e.app1.id());  // the Unlock commits; its reply is lost
    CHECK_THROWS_AS(first->unlock(how), sim::Timeout);
    e.net.heal(e.node.id(), e.app1.id());
    models::etcd::retry_unlock_in_background(first, how, 1s, 3);
    models::etcd::Mutex second(e.a, lease, "locks/job/");
    REQUIRE(second.lock());
    CHECK(second.key() == first->key());  // one name for every lock of the session
    a_holds = true;
    sim::sleep_for(3s);
    const models::etcd::KeyValue* kv = e.server.find(second.key());
    out.second_lock_kept = kv != nullptr && kv->create_revision == second.token();
    a_holds = false;
    second.unlock();
  });
  e.app2.spawn("session-b", [&] {
    sim::sleep_until(at_ms(7000));  // after A's second lock, before A lets it go
    const auto lease = e.b.grant(60s);
    models::etcd::Mutex lock(e.b, lease, "locks/job/");
    if (lock.lock(500ms)) out.b_locked_beside_a = a_holds;
  });
  REQUIRE(e.engine.run().ok());
  return out;
}
}  // namespace

TEST_CASE("a retried etcd Unlock whose reply was lost deletes the session's next lock by its name, letting another session in") {
  const StaleUnlock r = retry_stale_unlock(models::etcd::Mutex::Unlock::by_name);
  CHECK_FALSE(r.second_lock_kept);
  CHECK(r.b_locked_beside_a);
}

TEST_CASE("a retried etcd Unlock guarded by the lock's create revision leaves the session's next lock alone") {
  const StaleUnlock r = retry_stale_unlock(models::etcd::Mutex::Unlock::if_owner);
  CHECK(r.second_lock_kept);
  CHECK_FALSE(r.b_locked_beside_a);
}
