// The ZooKeeper-like service and its lock recipes (docs/models.md, Lock services).

#include <catch2/catch.hpp>

#include <memory>

#include "models/coord/zk_lock.hpp"
#include "support.hpp"

using namespace test;
using models::zk::ConnectionState;
using models::zk::CreateMode;
using models::zk::LockRecipe;
using models::zk::WatchEvent;

namespace {
struct ZooKeeper {
  sim::Engine engine{config()};
  models::Network net{engine, {sim::fixed(1ms), 0}};
  models::Node node{engine, {"zk-1", {}}};
  models::zk::Server server{net, node};
  std::vector<std::unique_ptr<models::Node>> apps;
  std::vector<std::unique_ptr<models::zk::Client>> clients;

  explicit ZooKeeper(int n, sim::Duration session_timeout = 10s) {
    for (int i = 0; i < n; ++i) {
      apps.push_back(std::make_unique<models::Node>(engine, models::NodeConfig{"app-" + std::to_string(i + 1), {}}));
      clients.push_back(std::make_unique<models::zk::Client>(net, *apps.back(),
                                                             server, models::zk::ClientConfig{.session_timeout = session_timeout}));
    }
    server.start();
  }
  ~ZooKeeper() { engine.shutdown(); }
};

// N clients queue for one lock; the first holds it until t=1 s, then each holder passes it
// on after 100 ms. Returns the notifications the first release sent, and checks that no
// two ever held the lock at once.
struct Queue {
  std::uint64_t first_release_notifications = 0;
  std::vector<std::uint64_t> wakeups;
  int max_holders = 0;
};
Queue lock_queue(LockRecipe recipe, int n) {
  ZooKeeper zk(n);
  Queue q;
  q.wakeups.resize(n);
  int holders = 0;
  for (int i = 0; i < n; ++i) {
    zk.apps[i]->spawn("worker", [&, i] {
      auto& client = *zk.clients[i];
      client.connect();
      sim::sleep_until(at_ms(50 * i));  // queue in order
      models::zk::Mutex lock(client, "/locks/openid:42", recipe);
      REQUIRE(lock.acquire());
      q.max_holders = std::max(q.max_holders, ++holders);
      if (i == 0) {
        sim::sleep_until(at_ms(1000));
      } else {
        sim::sleep_for(100ms);
      }
      --holders;
      const auto before = zk.server.notifications();
      lock.release();
      if (i == 0) q.first_release_notifications = zk.server.notifications() - before;
      q.wakeups[i] = lock.wakeups();
    });
  }
  REQUIRE(zk.engine.run().ok());
  return q;
}
}  // namespace

TEST_CASE("the ZooKeeper lock recipe (watch the next-lower node) wakes exactly one waiter per release") {
  const Queue q = lock_queue(LockRecipe::next_lower, 5);
  CHECK(q.max_holders == 1);
  CHECK(q.first_release_notifications == 1);
  CHECK(q.wakeups == std::vector<std::uint64_t>{0, 1, 1, 1, 1});
}

TEST_CASE("the naive ZooKeeper lock (every waiter watches the lock node) wakes all N-1 waiters on a release") {
  const Queue q = lock_queue(LockRecipe::herd, 5);
  CHECK(q.max_holders == 1);
  CHECK(q.first_release_notifications == 4);
  // The last in line was woken by every release before its turn.
  CHECK(q.wakeups.back() >= 4);
}

TEST_CASE("a ZooKeeper client paused past its session timeout loses its ephemeral node, a waiter acquires, "
          "and the paused client runs on before it hears LOST") {
  ZooKeeper zk(2);
  std::vector<ConnectionState> states_a;
  ConnectionState a_state_on_resume = ConnectionState::lost;
  bool a_node_exists_on_resume = true;
  sim::Time b_acquired;
  zk.clients[0]->on_state_change([&](ConnectionState s) { states_a.push_back(s); });
  zk.apps[0]->spawn("holder-a", [&] {
    zk.clients[0]->connect();
    models::zk::Mutex lock(*zk.clients[0], "/locks/openid:42");
    REQUIRE(lock.acquire());
    sim::sleep_until(at_ms(1000));
    sim::sleep_for(100ms);  // the GC pause below freezes this sleep
    a_state_on_resume = zk.clients[0]->state();
    a_node_exists_on_resume = zk.server.exists(lock.node());
    sim::sleep_for(5s);  // meanwhile its pings find the session gone
  });
  zk.apps[1]->spawn("waiter-b", [&] {
    zk.clients[1]->connect();
    sim::sleep_until(at_ms(100));
    models::zk::Mutex lock(*zk.clients[1], "/locks/openid:42");
    REQUIRE(lock.acquire());
    b_acquired = sim::now();
  });
  zk.engine.spawn(sim::kWorld, "gc", [&] {
    sim::sleep_until(at_ms(1050));
    zk.apps[0]->pause(30s);
  });
  REQUIRE(zk.engine.run().ok());
  // The server last heard from A at its acquire, t=0.02 s; with a 10 s timeout it expires
  // the session at its first 2 s tick after t=10.02 s.
  CHECK(b_acquired > at_ms(12'000));
  CHECK(b_acquired < at_ms(12'100));
  CHECK(a_state_on_resume == ConnectionState::connected);  // not yet told
  CHECK_FALSE(a_node_exists_on_resume);
  // As ZooKeeper's client does after a long pause: its read timeout has passed (SUSPENDED),
  // then the server says the session expired (LOST), then Curator opens a new one.
  CHECK(states_a == std::vector<ConnectionState>{ConnectionState::connected, ConnectionState::suspended,
                                                 ConnectionState::lost, ConnectionState::reconnected});
}

TEST_CASE("a ZooKeeper session survives a partition shorter than its timeout: SUSPENDED, then RECONNECTED") {
  ZooKeeper zk(1);
  std::vector<ConnectionState> states;
  bool kept = false;
  zk.clients[0]->on_state_change([&](ConnectionState s) { states.push_back(s); });
  zk.apps[0]->spawn("client", [&] {
    auto& client = *zk.clients[0];
    client.connect();
    const auto path = client.create("/lock-", "", CreateMode::ephemeral_sequential);
    sim::sleep_until(at_ms(20'000));
    kept = client.exists(path).has_value();
  });
  zk.engine.spawn(sim::kWorld, "partition", [&] {
    sim::sleep_until(at_ms(5000));
    zk.net.partition_both(zk.apps[0]->id(), zk.node.id());
    sim::sleep_until(at_ms(10'500));
    zk.net.heal_both(zk.apps[0]->id(), zk.node.id());
  });
  REQUIRE(zk.engine.run().ok());
  CHECK(kept);
  CHECK(states == std::vector<ConnectionState>{ConnectionState::connected, ConnectionState::suspended,
                                               ConnectionState::reconnected});
}

TEST_CASE("a ZooKeeper exists watch is one-shot: it fires on the create and not on the later delete") {
  ZooKeeper zk(2);
  WatchEvent fired;
  std::uint64_t events_after_delete = 0;
  zk.apps[0]->spawn("watcher", [&] {
    auto& client = *zk.clients[0];
    client.connect();
    models::zk::Watch watch;
    CHECK_FALSE(client.exists("/ready", &watch).has_value());
    fired = watch.wait();
    sim::sleep_until(at_ms(2000));
    events_after_delete = client.events_received();
  });
  zk.apps[1]->spawn("writer", [&] {
    auto& client = *zk.clients[1];
    client.connect();
    sim::sleep_until(at_ms(500));
    client.create("/ready", "", CreateMode::persistent);
    sim::sleep_until(at_ms(1000));
    client.remove("/ready");
  });
  REQUIRE(zk.engine.run().ok());
  CHECK(fired.type == WatchEvent::Type::node_created);
  CHECK(fired.path == "/ready");
  CHECK(events_after_delete == 1);
}

TEST_CASE("ZooKeeper sequential nodes take the parent's ten-digit count of child creates, deletions not counted, and every write a higher zxid") {
  ZooKeeper zk(1);
  std::vector<std::string> names;
  std::vector<models::zk::Zxid> czxids;
  zk.apps[0]->spawn("client", [&] {
    auto& client = *zk.clients[0];
    client.connect();
    client.create("/locks", "", CreateMode::persistent);
    for (int i = 0; i < 3; ++i) {
      models::zk::Stat stat;
      names.push_back(client.create("/locks/lock-", "", CreateMode::ephemeral_sequential, &stat));
      czxids.push_back(stat.czxid);
      if (i == 0) client.remove(names.back());  // counted in the parent's cversion, not in the names
    }
  });
  REQUIRE(zk.engine.run().ok());
  CHECK(names == std::vector<std::string>{"/locks/lock-0000000000", "/locks/lock-0000000001", "/locks/lock-0000000002"});
  CHECK(czxids[0] < czxids[1]);
  CHECK(czxids[1] < czxids[2]);
}

TEST_CASE("a ZooKeeper lock's token (its node's create zxid) grows with each grant, so it can fence") {
  ZooKeeper zk(2);
  models::zk::Zxid first = 0, second = 0;
  for (int i = 0; i < 2; ++i) {
    zk.apps[i]->spawn("worker", [&, i] {
      zk.clients[i]->connect();
      sim::sleep_until(at_ms(10 * i));
      models::zk::Mutex lock(*zk.clients[i], "/locks/openid:42");
      REQUIRE(lock.acquire());
      (i == 0 ? first : second) = lock.token();
      sim::sleep_for(50ms);
      lock.release();
    });
  }
  REQUIRE(zk.engine.run().ok());
  CHECK(first > 0);
  CHECK(second > first);
}

TEST_CASE("a ZooKeeper lock acquire with a wait limit gives up and removes its node") {
  ZooKeeper zk(2);
  bool got = true;
  std::size_t children_after = 0;
  zk.apps[0]->spawn("holder", [&] {
    zk.clients[0]->connect();
    models::zk::Mutex lock(*zk.clients[0], "/locks/openid:42");
    REQUIRE(lock.acquire());
    sim::sleep_until(at_ms(5000));
    lock.release();
  });
  zk.apps[1]->spawn("waiter", [&] {
    zk.clients[1]->connect();
    sim::sleep_until(at_ms(100));
    models::zk::Mutex lock(*zk.clients[1], "/locks/openid:42");
    got = lock.acquire(1s);
    children_after = zk.clients[1]->get_children("/locks/openid:42").size();
  });
  REQUIRE(zk.engine.run().ok());
  CHECK_FALSE(got);
  CHECK(children_after == 1);  // only the holder's
}

TEST_CASE("a ZooKeeper parent's stat counts its children, its cversion and the zxid of the last child change (pzxid)") {
  ZooKeeper zk(1);
  models::zk::Stat created, after_child, after_delete;
  std::string refused;
  zk.apps[0]->spawn("client", [&] {
    auto& client = *zk.clients[0];
    client.connect();
    client.create("/p", "", CreateMode::persistent, &created);
    models::zk::Stat child;
    client.create("/p/a", "", CreateMode::ephemeral, &child);
    after_child = *client.exists("/p");
    CHECK(after_child.pzxid == child.czxid);
    client.remove("/p/a");
    after_delete = *client.exists("/p");
    try {
      client.create("/p/e", "", CreateMode::ephemeral);
      client.create("/p/e/x", "", CreateMode::persistent);
    } catch (const models::zk::KeeperError& e) {
      refused = models::zk::to_string(e.code());
    }
  });
  REQUIRE(zk.engine.run().ok());
  CHECK(created.pzxid == created.czxid);  // a new node's last child change is its own create
  CHECK(after_child.num_children == 1);
  CHECK(after_child.cversion == 1);
  CHECK(after_child.mzxid == created.mzxid);  // a child is no change of the parent's data
  CHECK(after_delete.num_children == 0);
  CHECK(after_delete.cversion == 2);
  CHECK(after_delete.pzxid > after_child.pzxid);
  CHECK(refused == "NoChildrenForEphemerals");  // an ephemeral node has no children
}

TEST_CASE("closing a ZooKeeper session deletes its ephemeral nodes at once, in one transaction, and fires their watches") {
  ZooKeeper zk(2, 10s);
  WatchEvent fired;
  models::zk::Zxid before = 0, after = 0;
  bool gone = false;
  zk.apps[0]->spawn("owner", [&] {
    auto& client = *zk.clients[0];
    client.connect();
    client.create("/a", "", CreateMode::ephemeral);
    client.create("/b", "", CreateMode::ephemeral);
    sim::sleep_until(at_ms(500));
    before = zk.server.zxid();
    client.close();
    after = zk.server.zxid();
  });
  zk.apps[1]->spawn("watcher", [&] {
    auto& client = *zk.clients[1];
    client.connect();
    sim::sleep_until(at_ms(100));
    models::zk::Watch watch;
    REQUIRE(client.exists("/a", &watch).has_value());
    fired = watch.wait();
    gone = !client.exists("/b").has_value();
  });
  REQUIRE(zk.engine.run().ok());
  CHECK(fired.type == WatchEvent::Type::node_deleted);
  CHECK(gone);                     // long before the session's 10 s timeout
  CHECK(after == before + 1);      // closeSession: one transaction for both deletions
  CHECK(fired.zxid == after);
}
