// The lock checkers: holds as the holders believe them, judged against a peek at the lock
// service.

#include <catch2/catch.hpp>

#include "models/checkers/locks.hpp"
#include "support.hpp"

using namespace test;
using models::checkers::Hold;
using models::checkers::LockMonitor;

TEST_CASE("a hold starting while another holder still believes it holds the lock overlaps it, for the shared time") {
  LockMonitor m;
  const sim::Time end = run_alone([&] {
    Hold a = m.acquired("lock:1", "a", [] { return true; });
    sim::sleep_for(100ms);
    Hold b = m.acquired("lock:1", "b", [] { return true; });
    Hold other = m.acquired("lock:2", "c", [] { return true; });  // another lock: no overlap
    sim::sleep_for(30ms);
    a.release();
    sim::sleep_for(50ms);
  });
  const auto f = m.findings(end);
  CHECK(f.holds == 3);
  CHECK(f.overlapping_holders == 1);
  CHECK(f.overlap_ms == Approx(30.0));
}

TEST_CASE("holds one after the other do not overlap, even when one ends the instant the next begins") {
  LockMonitor m;
  const sim::Time end = run_alone([&] {
    { Hold a = m.acquired("lock:1", "a", [] { return true; }); sim::sleep_for(10ms); }
    Hold b = m.acquired("lock:1", "b", [] { return true; });
    sim::sleep_for(10ms);
  });
  CHECK(m.findings(end).overlapping_holders == 0);
  CHECK(m.findings(end).overlap_ms == 0);
}

TEST_CASE("a critical-section step when the service no longer grants the lock is a lease-expiry violation") {
  LockMonitor m;
  bool granted = true;
  const sim::Time end = run_alone([&] {
    Hold a = m.acquired("lock:1", "a", [&] { return granted; });
    a.step();
    granted = false;  // the lease ran out at the service
    a.step();
  });
  CHECK(m.findings(end).lease_expiry_violations == 1);
}

TEST_CASE("a write accepted after a later holder's write is stale, a rejected one is counted apart") {
  LockMonitor m;
  const sim::Time end = run_alone([&] {
    Hold first = m.acquired("lock:1", "first", [] { return false; });
    Hold second = m.acquired("lock:1", "second", [] { return true; });
    first.wrote();   // before the later holder wrote: not stale
    second.wrote();
    first.wrote();   // after: stale
    first.rejected();
  });
  const auto f = m.findings(end);
  CHECK(f.stale_writes_accepted == 1);
  CHECK(f.stale_writes_rejected == 1);
}

TEST_CASE("a blind unlock while the service grants the lock to another believing holder is a wrong unlock") {
  LockMonitor m;
  bool b_granted = true;
  const sim::Time end = run_alone([&] {
    Hold a = m.acquired("lock:1", "a", [] { return false; });
    Hold b = m.acquired("lock:1", "b", [&] { return b_granted; });
    a.unlocking_blindly();  // b's lock is there: wrong
    b_granted = false;
    a.unlocking_blindly();  // nobody's: harmless
  });
  CHECK(m.findings(end).wrong_unlocks == 1);
}

// Why a hold ended, as the monitor records it for the timelines.
using models::checkers::HoldEnd;
using models::checkers::LockService;

TEST_CASE("a hold let go while the service still grants it ends as released") {
  LockMonitor m;
  const sim::Time end = run_alone([&] {
    Hold a = m.acquired("lock:1", "a", [] { return true; }, 10s);
    sim::sleep_for(1s);
    a.release();
  });
  CHECK(LockMonitor::end_of(m.records()[0], end) == HoldEnd::released);
  CHECK(m.records()[0].service_until == sim::kNever);
}

TEST_CASE("a hold whose lease ran out before its holder let go ends as expired, at the lease's end") {
  LockMonitor m;
  bool granted = true;
  const sim::Time end = run_alone([&] {
    Hold a = m.acquired("lock:1", "a", [&] { return granted; }, 5s);
    sim::sleep_for(7s);
    granted = false;  // the key expired at the service meanwhile
    a.release();
  });
  const auto& r = m.records()[0];
  CHECK(LockMonitor::end_of(r, end) == HoldEnd::expired);
  CHECK(r.service_until == at_ms(5000));
  CHECK(r.until == at_ms(7000));
}

TEST_CASE("an unlock retried by the lock's name is a wrong unlock only while the name stands for a later hold the service grants") {
  LockMonitor m;
  bool b_granted = true;
  run_alone([&] {
    Hold a = m.acquired("locks/1/", "a", [] { return false; });
    const std::size_t a_index = a.index();
    a.release();
    Hold b = m.acquired("locks/1/", "b", [&] { return b_granted; });
    sim::sleep_for(1s);
    m.unlocking_again(a_index, a_index);  // its own name, nobody else's: nothing
    m.unlocking_again(a_index, b.index());
    b_granted = false;
    sim::sleep_for(1s);
    m.unlocking_again(a_index, b.index());  // b's lock is gone already: no second count
    b.release();
  });
  CHECK(m.findings(at_ms(2000)).wrong_unlocks == 1);
  CHECK(m.records()[0].removed == std::optional<std::size_t>{1});
  CHECK(m.records()[1].deleted_by == std::optional<std::size_t>{0});
  CHECK(m.records()[1].end == HoldEnd::deleted);
  CHECK(m.records()[1].service_until == at_ms(1000));
}

TEST_CASE("a blind DEL that removes another holder's lock ends that hold at the DEL, deleted by the unlocker") {
  LockMonitor m;
  bool b_granted = true;
  run_alone([&] {
    Hold a = m.acquired("lock:1", "a", [] { return false; }, 5s);
    sim::sleep_for(6s);
    Hold b = m.acquired("lock:1", "b", [&] { return b_granted; }, 5s);
    sim::sleep_for(300ms);
    a.unlocking_blindly();  // b's lock is there: a's DEL removes it
    a.release();
    b_granted = false;
    sim::sleep_for(1s);
    b.release();
  });
  const auto& a = m.records()[0];
  const auto& b = m.records()[1];
  CHECK(a.removed == std::optional<std::size_t>{1});
  CHECK(b.deleted_by == std::optional<std::size_t>{0});
  CHECK(b.end == HoldEnd::deleted);
  CHECK(b.service_until == at_ms(6300));  // not its lease's nominal end at 11 s
  CHECK(b.until == at_ms(7300));
  CHECK(m.findings(at_ms(8000)).wrong_unlocks == 1);
}

TEST_CASE("a ZooKeeper or etcd hold whose lock node is gone when its holder lets go ends with the session") {
  LockMonitor m;
  run_alone([&] {
    Hold zk = m.acquired("/locks/k", "a", [] { return false; }, std::nullopt, LockService::zookeeper);
    Hold etcd = m.acquired("locks/k", "b", [] { return false; }, std::nullopt, LockService::etcd);
    sim::sleep_for(1s);
  });
  CHECK(m.records()[0].end == HoldEnd::session_lost);
  CHECK(m.records()[1].end == HoldEnd::session_lost);
}

TEST_CASE("a ZooKeeper or etcd hold lost with its session ends, at the service, when its lock node went") {
  LockMonitor m;
  sim::Time removed = sim::kNever;
  run_alone([&] {
    Hold zk = m.acquired("/locks/k", "a", [&] { return removed == sim::kNever; }, std::nullopt, LockService::zookeeper,
                         [&] { return removed; });
    sim::sleep_for(4s);
    removed = sim::now();  // the session expired and took the lock node with it
    sim::sleep_for(3s);
  });
  const auto& r = m.records()[0];
  CHECK(r.end == HoldEnd::session_lost);
  CHECK(r.service_until == at_ms(4000));
  CHECK(r.until == at_ms(7000));
}

TEST_CASE("a renewal moves the lease's end and is kept as an event of the hold") {
  LockMonitor m;
  const sim::Time end = run_alone([&] {
    Hold a = m.acquired("lock:1", "a", [] { return true; }, 30s);
    for (int i = 0; i < 3; ++i) {
      sim::sleep_for(10s);
      m.renewed(a.index(), 30s);
    }
    a.release();
  });
  const auto& r = m.records()[0];
  CHECK(r.renewals.size() == 3);
  CHECK(r.lease_until == at_ms(60000));
  CHECK(LockMonitor::end_of(r, end) == HoldEnd::released);
}

TEST_CASE("a hold whose holder's node crashes ends as crashed") {
  LockMonitor m;
  sim::Engine engine(config());
  const sim::NodeId node = engine.add_node("app-1");
  engine.spawn(node, "holder", [&] {
    Hold a = m.acquired("lock:1", "a", [] { return true; }, 30s);
    sim::sleep_for(10s);
  });
  engine.spawn(sim::kWorld, "crasher", [&] {
    sim::sleep_for(1s);
    sim::engine().crash(node);
  });
  REQUIRE(engine.run().ok());
  CHECK(m.records()[0].end == HoldEnd::crashed);
  CHECK(m.records()[0].until == at_ms(1000));
}
