// Stacks: an overflow on a guarded stack is a clean SIGSEGV, not silent corruption.

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

#include "support.hpp"

namespace {
// Recurses with a frame the optimizer cannot drop, until the stack runs out.
int deep(int depth) {
  volatile char frame[512];
  std::memset(const_cast<char*>(frame), depth & 0xff, sizeof frame);
  return frame[depth % sizeof frame] + (depth > 1'000'000 ? 0 : deep(depth + 1));
}
}  // namespace

TEST_CASE("a process overflowing its guarded stack dies of SIGSEGV") {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::signal(SIGSEGV, SIG_DFL);  // the test framework's handler would report and re-raise
    sim::Engine engine(test::config());
    engine.spawn(sim::kWorld, "recursive", [] { deep(0); });
    engine.run();
    ::_exit(0);  // not reached if the guard page works
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGSEGV);
}

TEST_CASE("stacks of finished processes are reused, so spawning many short processes stays bounded") {
  sim::Engine engine(test::config());
  int done = 0;
  engine.spawn(sim::kWorld, "spawner", [&] {
    for (int i = 0; i < 50'000; ++i) {
      sim::spawn("short", [&] { ++done; });
      sim::sleep_for(std::chrono::microseconds(1));
    }
  });
  CHECK(engine.run().status == sim::RunStatus::completed);
  CHECK(done == 50'000);
  CHECK(engine.live_processes() == 0);
}
