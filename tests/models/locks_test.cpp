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

TEST_CASE("a write accepted after a later holder's write is stale; a rejected one is counted apart") {
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
