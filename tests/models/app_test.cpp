// App servers, load balancing and clients: the production case's moving parts
// (sources/003 section 2; docs/sources.md).

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <set>

#include "handlers.hpp"

using namespace test;
using models::ErrorKind;
using models::Outcome;

TEST_CASE("a request delayed past the client's timeout is retried, and both copies reach the handler") {
  RecordingHandler handler(150ms);
  auto c = small_world(1, 2);
  c.clients.retry.attempt_timeout = 100ms;
  c.clients.retry.max_attempts = 2;
  models::World world(c, handler);
  world.start();
  REQUIRE(world.run().ok());

  REQUIRE(handler.log.size() == 2);
  CHECK(handler.log[0].operation == handler.log[1].operation);
  CHECK(handler.log[0].attempt == 1);
  CHECK(handler.log[0].start == at_ms(1));
  CHECK(handler.log[1].attempt == 2);
  CHECK(handler.log[1].start == at_ms(101));  // timed out at 100 ms, retried at once, 1 ms on the wire
  const auto& records = world.clients().records();
  REQUIRE(records.size() == 1);
  CHECK(records[0].attempts == 2);
  CHECK(records[0].outcome == Outcome::gave_up);  // the server did the work twice; the client saw two timeouts
  CHECK(records[0].last_error == ErrorKind::timeout);
}

TEST_CASE("the call log keeps each attempt: the worker that took it up, the client's timeout and the answer too late to read") {
  const auto run = [](bool keep_calls) {
    RecordingHandler handler(150ms);
    auto c = small_world(1, 2);
    c.clients.retry.attempt_timeout = 100ms;
    c.clients.retry.max_attempts = 2;
    auto world = std::make_unique<models::World>(c, handler);
    if (keep_calls) world->network().keep_calls();
    world->start();
    const sim::RunResult result = world->run();
    REQUIRE(result.ok());
    std::vector<models::CallRecord> calls;
    if (keep_calls) calls = world->network().calls()->calls();
    std::map<std::uint32_t, int> worker_of;  // attempt -> the worker that handled it
    for (const auto& h : handler.log) worker_of[h.attempt] = h.worker;
    return std::tuple{result.trace_hash, calls, worker_of};
  };
  const auto [hash, calls, worker_of] = run(true);
  CHECK(hash == std::get<0>(run(false)));  // keeping the log changes nothing in the trial

  REQUIRE(calls.size() == 2);
  const models::CallRecord& first = calls[0];
  CHECK(first.caller == "client 0");
  CHECK(first.request == "op 0 attempt 1 (key 0)");
  CHECK(first.callee_node == "app-1");
  CHECK(first.callee == "app-1.worker-" + std::to_string(worker_of.at(1)));
  CHECK(first.sent == at_ms(0));
  CHECK(first.arrived == at_ms(1));
  CHECK(first.taken == at_ms(1));
  CHECK(first.gave_up == at_ms(100));     // the client's timeout
  CHECK(first.answered == at_ms(151));    // the worker finished anyway
  CHECK(first.returned == at_ms(152));    // and its answer came after the client stopped waiting
  CHECK(first.reply == "ok");
  CHECK(first.operation == 0);  // the attempt's operation and number, as data beside the words
  CHECK(first.attempt == 1);
  const models::CallRecord& retry = calls[1];
  CHECK(retry.request == "op 0 attempt 2 (key 0)");
  CHECK(retry.operation == 0);
  CHECK(retry.attempt == 2);
  CHECK(retry.sent == at_ms(100));
  CHECK(retry.callee == "app-1.worker-" + std::to_string(worker_of.at(2)));
  CHECK(retry.callee != first.callee);  // the first worker was still on attempt 1
  CHECK(retry.gave_up == at_ms(200));
}

TEST_CASE("a worker's origin reads back as the worker, client, operation and attempt it was written from, other names as none") {
  const models::Origin o{"app-12", 4, 7, 123456789012ULL, 3};
  CHECK(o.text() == "app-12 worker 4, client 7, op 123456789012 attempt 3");
  CHECK(models::Origin::read(o.text()) == o);
  for (const char* other : {"s1", "cleanup job", "DBA", "app-1 worker 4", "app-1 worker 4, client 7, op 7", "app-1 worker x, client 7, op 7 attempt 1",
                            "app-1 worker 4, client 7, op 7 attempt 1 more", " worker 4, client 7, op 7 attempt 1"})
    CHECK_FALSE(models::Origin::read(other).has_value());
}

TEST_CASE("without keep_calls the network keeps no call log") {
  RecordingHandler handler(1ms);
  models::World world(small_world(1, 1), handler);
  world.start();
  REQUIRE(world.run().ok());
  CHECK(world.network().calls() == nullptr);
}

TEST_CASE("with workers saturated, requests queue, and queued copies of one key are handled concurrently by different workers") {
  // Two slow batch requests hold both workers for 400 ms; meanwhile one user's request
  // and its retries wait in the queue; when the workers free up they take two copies at once.
  RecordingHandler handler([](const models::Request& r) { return r.key >= 1000 ? 400ms : 10ms; });
  auto c = small_world(1, 2);
  c.clients.name = "user";
  c.clients.arrival.start = 5ms;
  c.clients.retry.attempt_timeout = 150ms;
  c.clients.retry.max_attempts = 3;
  models::World world(c, handler);
  auto batch = c.clients;
  batch.name = "batch";
  batch.clients = 2;
  batch.first_key = 1000;
  batch.arrival.start = 0ms;
  batch.retry.attempt_timeout = 10s;
  world.add_clients(batch);
  world.start();
  REQUIRE(world.run().ok());

  CHECK(world.server(0).max_queued() >= 2);
  std::vector<Handled> user;
  for (const auto& h : handler.log)
    if (h.key == 0) user.push_back(h);
  REQUIRE(user.size() == 3);
  std::sort(user.begin(), user.end(), [](const auto& x, const auto& y) { return x.attempt < y.attempt; });
  // The original (sent at 5 ms) and the first retry (155 ms) both start when the batch ends.
  CHECK(user[0].start == at_ms(401));
  CHECK(user[1].start == at_ms(401));
  CHECK(user[0].worker != user[1].worker);
  CHECK(user[2].start == at_ms(411));
}

TEST_CASE("a full accept queue rejects the request, and the client sees the rejection") {
  RecordingHandler handler(1s);
  auto c = small_world(1, 1);
  c.server.accept_queue = 1;
  c.clients.clients = 3;
  c.clients.retry.retry_on = {ErrorKind::timeout};
  c.clients.retry.attempt_timeout = 5s;
  models::World world(c, handler);
  world.start();
  REQUIRE(world.run().ok());

  CHECK(world.server(0).rejected() == 1);
  std::map<Outcome, int> outcomes;
  for (const auto& r : world.clients().records()) ++outcomes[r.outcome];
  CHECK(outcomes[Outcome::ok] == 2);  // one handled at once, one after waiting in the queue
  CHECK(outcomes[Outcome::failed] == 1);
  const auto failed = std::find_if(world.clients().records().begin(), world.clients().records().end(),
                                   [](const auto& r) { return r.outcome == Outcome::failed; });
  CHECK(failed->last_error == ErrorKind::rejected);
  CHECK(failed->latency() == 2ms);  // rejected on arrival: one round trip
}

TEST_CASE("a reply lost after the server acted makes the client time out although the work was done") {
  RecordingHandler handler(1ms);
  auto c = small_world(1, 1);
  c.clients.retry.attempt_timeout = 50ms;
  c.clients.retry.max_attempts = 3;
  models::World world(c, handler);
  world.network().set_link(world.server(0).node().id(), world.client_node().id(), {sim::fixed(1ms), 1.0});
  world.start();
  REQUIRE(world.run().ok());

  CHECK(handler.log.size() == 3);
  REQUIRE(world.clients().records().size() == 1);
  CHECK(world.clients().records()[0].outcome == Outcome::gave_up);
  CHECK(world.network().lost() == 3);
}

TEST_CASE("a paused node handles nothing during the pause and everything queued after it, in order") {
  RecordingHandler handler(1ms);
  auto c = small_world(1, 1);
  c.clients.operations_per_client = 5;
  c.clients.arrival = {models::ArrivalKind::fixed, 0ms, 0ms, 100ms};
  models::World world(c, handler);
  models::Node& app = world.server(0).node();
  world.engine().spawn(sim::kWorld, "gc", [&] { app.pause(1s); });
  world.start();
  REQUIRE(world.run().ok());

  REQUIRE(handler.log.size() == 5);
  for (std::size_t i = 0; i < handler.log.size(); ++i) {
    CHECK(handler.log[i].operation == i);  // in arrival order
    CHECK(handler.log[i].start >= at_ms(1000));
  }
  CHECK(handler.log[0].start == at_ms(1000));
  CHECK(world.server(0).max_queued() == 5);
}

TEST_CASE("a crash loses the queued requests and a restart brings a fresh worker pool") {
  RecordingHandler handler(100ms);
  auto c = small_world(1, 1);
  c.clients.clients = 3;
  c.clients.retry.attempt_timeout = 1s;
  c.clients.retry.max_attempts = 2;
  models::World world(c, handler);
  models::Node& app = world.server(0).node();
  world.engine().spawn(sim::kWorld, "operator", [&] {
    sim::sleep_for(50ms);
    app.crash();
    sim::sleep_for(500ms);
    app.restart();
  });
  world.start();
  REQUIRE(world.run().ok());

  // Nothing was finished before the crash; after it the three retries are all handled.
  REQUIRE(handler.log.size() == 3);
  for (const auto& h : handler.log) {
    CHECK(h.attempt == 2);
    CHECK(h.start >= at_ms(1001));
  }
  for (const auto& r : world.clients().records()) CHECK(r.outcome == Outcome::ok);
}

TEST_CASE("the load balancer spreads round-robin, sticks a key to one server, or picks at random") {
  RecordingHandler handler(1ms);
  auto sent_to = [&](models::Balance balance) {
    auto c = small_world(4, 1);
    c.balance = balance;
    c.clients.clients = 40;
    c.clients.keys = 3;
    models::World world(c, handler);
    world.start();
    world.run();
    std::map<std::uint64_t, std::set<std::string>> servers_by_key;
    std::map<std::string, int> per_server;
    for (const auto& h : handler.log) {
      servers_by_key[h.key].insert(h.server);
      ++per_server[h.server];
    }
    handler.log.clear();
    return std::pair{servers_by_key, per_server};
  };
  const auto [rr_keys, rr] = sent_to(models::Balance::round_robin);
  CHECK(rr == std::map<std::string, int>{{"app-1", 10}, {"app-2", 10}, {"app-3", 10}, {"app-4", 10}});
  const auto [sticky_keys, sticky] = sent_to(models::Balance::sticky);
  for (const auto& [key, servers] : sticky_keys) CHECK(servers.size() == 1);
  const auto [random_keys, random] = sent_to(models::Balance::random);
  CHECK(random.size() >= 3);
  std::size_t spread = 0;
  for (const auto& [key, servers] : random_keys) spread = std::max(spread, servers.size());
  CHECK(spread > 1);
}

TEST_CASE("a server taken out of the load balancer gets no new request until it is back, under every policy") {
  // A rolling deploy drains a server: its keys go to the servers in service meanwhile.
  RecordingHandler handler(1ms);
  for (const auto balance : {models::Balance::round_robin, models::Balance::sticky, models::Balance::random}) {
    auto c = small_world(3, 1);
    c.balance = balance;
    c.clients.clients = 30;
    c.clients.keys = 5;
    models::World world(c, handler);
    world.balancer().set_in_service(world.server(1), false);
    world.start();
    REQUIRE(world.run().ok());
    std::map<std::string, int> per_server;
    for (const auto& h : handler.log) ++per_server[h.server];
    handler.log.clear();
    CHECK(per_server.count("app-2") == 0);
    CHECK(per_server["app-1"] + per_server["app-3"] == 30);
    if (balance == models::Balance::round_robin) CHECK(per_server["app-1"] == 15);
  }
  // Back in service, it takes its share again; every server out: requests go to them all.
  auto c = small_world(3, 1);
  c.clients.clients = 30;
  models::World world(c, handler);
  world.balancer().set_in_service(world.server(1), false);
  world.balancer().set_in_service(world.server(1), true);
  world.start();
  REQUIRE(world.run().ok());
  std::map<std::string, int> per_server;
  for (const auto& h : handler.log) ++per_server[h.server];
  handler.log.clear();
  CHECK(per_server == std::map<std::string, int>{{"app-1", 10}, {"app-2", 10}, {"app-3", 10}});
}

TEST_CASE("arrivals: all at start within the spread, fixed in lockstep, or Poisson with the configured mean") {
  RecordingHandler handler(0ms);
  auto starts = [&](models::Arrival arrival, int clients, int operations) {
    auto c = small_world(1, 64);
    c.server.accept_queue = 100'000;
    c.clients.clients = clients;
    c.clients.operations_per_client = operations;
    c.clients.arrival = arrival;
    models::World world(c, handler);
    world.start();
    world.run();
    std::vector<sim::Time> out;
    for (const auto& r : world.clients().records()) out.push_back(r.start);
    std::sort(out.begin(), out.end());
    return out;
  };
  const auto at_start = starts({models::ArrivalKind::at_start, 0ms, 200ms, 0ms}, 50, 1);
  CHECK(at_start.front() >= at_ms(0));
  CHECK(at_start.back() <= at_ms(200));
  CHECK(at_start.back() - at_start.front() > 100ms);

  const auto fixed = starts({models::ArrivalKind::fixed, 10ms, 0ms, 30ms}, 2, 3);
  CHECK(fixed == std::vector<sim::Time>{at_ms(10), at_ms(10), at_ms(40), at_ms(40), at_ms(70), at_ms(70)});

  const auto poisson = starts({models::ArrivalKind::poisson, 0ms, 0ms, 100ms}, 1, 2000);
  const double mean_gap_ms = std::chrono::duration<double, std::milli>(poisson.back() - poisson.front()).count() / 1999;
  CHECK(mean_gap_ms == Approx(100).epsilon(0.06));
}
