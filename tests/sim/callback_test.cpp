// sim::Callback: what Engine::at keeps for every delivery.

#include <catch2/catch.hpp>

#include <array>
#include <memory>
#include <utility>

#include "sim/callback.hpp"

namespace {

// Counts its live copies, so a test can see each callable destroyed exactly once.
struct Counted {
  std::shared_ptr<int> calls;
  explicit Counted(std::shared_ptr<int> c) : calls(std::move(c)) {}
  void operator()() const { ++*calls; }
};

}  // namespace

TEST_CASE("a callback calls what it holds, and a moved-from callback is empty") {
  auto calls = std::make_shared<int>(0);
  sim::Callback a = Counted{calls};
  a();
  sim::Callback b = std::move(a);
  CHECK_FALSE(a);  // NOLINT(bugprone-use-after-move): pinned on purpose
  REQUIRE(b);
  b();
  CHECK(*calls == 2);
  CHECK(calls.use_count() == 2);  // one live copy, in b
  b.reset();
  CHECK(calls.use_count() == 1);
}

TEST_CASE("a callback holds move-only and larger-than-inline callables and destroys each once") {
  auto owned = std::make_unique<int>(41);
  int seen = 0;
  sim::Callback move_only = [p = std::move(owned), &seen] { seen = *p + 1; };
  move_only();
  CHECK(seen == 42);

  auto calls = std::make_shared<int>(0);
  std::array<char, 2 * sim::Callback::kInlineBytes> padding{};
  {
    sim::Callback large = [c = Counted{calls}, padding] { c(); };
    sim::Callback moved;
    moved = std::move(large);
    moved();
    CHECK(calls.use_count() == 2);
  }
  CHECK(*calls == 1);
  CHECK(calls.use_count() == 1);
}
