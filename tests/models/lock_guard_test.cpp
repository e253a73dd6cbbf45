// The lock guard: the `finally { unlock(); }` of the articles' code, which a crash skips.

#include <catch2/catch.hpp>

#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "models/coord/zookeeper.hpp"
#include "models/db/server.hpp"
#include "models/node/node.hpp"
#include "models/strategies/lock_guard.hpp"
#include "support.hpp"

using namespace test;
using models::checkers::Hold;
using models::checkers::LockMonitor;
using models::strategies::LockGuard;

namespace {

// One holder on an app node: the guard's unlock is a 5 ms call to the lock service.
struct Holder {
  sim::Engine engine{config()};
  models::Node app{engine, {"app-1", {}}};
  LockMonitor monitor;
  std::exception_ptr failed_unlock;
  std::vector<sim::Time> unlocks;  // when each unlock call was sent

  LockGuard lock(bool unlock_fails = false) {
    Hold hold = monitor.acquired("lock:1", "app-1 worker 1", [] { return true; });
    return LockGuard(
        std::move(hold),
        [this, unlock_fails](Hold& h) {
          h.release();
          unlocks.push_back(sim::now());
          sim::sleep_for(5ms);
          if (unlock_fails) throw sim::Timeout();
        },
        &failed_unlock);
  }
  // Runs `body` as the holder's process; returns what escaped it.
  template <class Body>
  std::exception_ptr run(Body body) {
    std::exception_ptr escaped;
    app.spawn("holder", [&] {
      try {
        body();
      } catch (const sim::Killed&) {
        throw;
      } catch (...) {
        escaped = std::current_exception();
      }
    });
    REQUIRE(engine.run().ok());
    return escaped;
  }
  sim::Time hold_ended() const { return monitor.records().at(0).until; }
};

template <class Error>
bool is(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const Error&) {
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace

TEST_CASE("a lock guard unlocks when the critical section fails with a KeeperError, a SqlError or a timeout") {
  auto fails_with = [](auto error) {
    Holder h;
    const std::exception_ptr escaped = h.run([&] {
      LockGuard lock = h.lock();
      sim::sleep_for(10ms);  // the critical section's work
      throw error;
    });
    CHECK(is<decltype(error)>(escaped));  // the body's error goes on once the lock is released
    REQUIRE(h.unlocks.size() == 1);
    CHECK(h.unlocks[0] == at_ms(10));
    CHECK(h.hold_ended() == at_ms(10));
    CHECK(!h.failed_unlock);
  };
  fails_with(models::zk::KeeperError(models::zk::Code::session_expired, "/locks/1"));
  fails_with(models::db::SqlError(models::db::Code::deadlock, "Deadlock found when trying to get lock"));
  fails_with(sim::Timeout());
}

TEST_CASE("a lock guard unlocked on the normal path does not unlock again when its scope ends") {
  Holder h;
  h.run([&] {
    LockGuard lock = h.lock();
    sim::sleep_for(10ms);
    lock.unlock();
    CHECK(!lock.held());
  });
  CHECK(h.unlocks == std::vector<sim::Time>{at_ms(10)});
}

TEST_CASE("a lock guard left by an early return unlocks as its scope ends") {
  Holder h;
  h.run([&] {
    std::optional<LockGuard> lock = h.lock();
    sim::sleep_for(10ms);
  });
  CHECK(h.unlocks == std::vector<sim::Time>{at_ms(10)});
}

TEST_CASE("a crash of the holder's node ends its hold but sends no unlock: the lock stays at the service") {
  Holder h;
  h.engine.after(10ms, sim::kWorld, [&] { h.app.crash(); });
  h.run([&] {
    LockGuard lock = h.lock();
    sim::sleep_for(1s);  // crashed in here
    FAIL("the critical section went on after the crash");
  });
  CHECK(h.unlocks.empty());
  CHECK(h.hold_ended() == at_ms(10));
}

TEST_CASE("a holder still in its critical section when the run ends sends no unlock") {
  Holder h;
  h.engine.after(10ms, sim::kWorld, [&] { h.engine.stop(); });
  h.app.spawn("holder", [&] {
    LockGuard lock = h.lock();
    sim::sleep_for(1s);
  });
  REQUIRE(h.engine.run().ok());
  h.engine.shutdown();  // the holder unwinds with sim::Killed
  CHECK(h.unlocks.empty());
  CHECK(h.hold_ended() == at_ms(10));
}

TEST_CASE("a lock kept in the holder's process is freed by a crash, with the process") {
  sim::Engine engine{config()};
  models::Node app{engine, {"app-1", {}}};
  bool freed = false;
  engine.after(10ms, sim::kWorld, [&] { app.crash(); });
  app.spawn("holder", [&] {
    LockGuard lock(Hold(), [&](Hold&) { freed = true; }, nullptr, 0, LockGuard::Kept::in_process);
    sim::sleep_for(1s);
  });
  REQUIRE(engine.run().ok());
  CHECK(freed);
}

TEST_CASE("an unlock that fails while the critical section's error unwinds is left to replace that error, as in finally") {
  Holder h;
  const std::exception_ptr escaped = h.run([&] {
    LockGuard lock = h.lock(true);
    throw models::db::SqlError(models::db::Code::duplicate_key, "Duplicate entry");
  });
  CHECK(is<models::db::SqlError>(escaped));  // a destructor cannot throw: the handler swaps them
  CHECK(is<sim::Timeout>(h.failed_unlock));
  CHECK(h.unlocks.size() == 1);
}

TEST_CASE("an unlock that fails on the normal path throws, once") {
  Holder h;
  const std::exception_ptr escaped = h.run([&] {
    LockGuard lock = h.lock(true);
    lock.unlock();
  });
  CHECK(is<sim::Timeout>(escaped));
  CHECK(!h.failed_unlock);
  CHECK(h.unlocks.size() == 1);
}
