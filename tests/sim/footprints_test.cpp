// A run's class of equivalent runs (sim::Footprints::trace_class): runs that differ only by
// swapping adjacent independent steps share it; a swap of dependent steps, another instant or
// another event gives another.

#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "sim/footprints.hpp"

namespace {

constexpr std::uint64_t kObject = std::uint64_t{1} << 63;  // a model's object, as Engine::touch keeps it

// A step as a test writes it: the event it handles, when, on which node, what it touched.
struct S {
  std::uint64_t seq;
  std::int64_t at;
  std::uint32_t node;
  std::vector<std::uint64_t> touched;
};

// Footprints of a run of `steps`, in order; `creator` by sequence number.
sim::Footprints run(const std::vector<S>& steps, std::vector<std::uint32_t> creator) {
  sim::Footprints f;
  for (const S& s : steps) {
    f.steps.push_back({.seq = s.seq, .at = s.at, .node = s.node, .touched = static_cast<std::uint32_t>(f.touched.size())});
    f.touched.insert(f.touched.end(), s.touched.begin(), s.touched.end());
  }
  f.creator = std::move(creator);
  return f;
}

constexpr std::uint32_t kNone = sim::Footprints::kNone;

}  // namespace

TEST_CASE("runs that swap two independent steps at one instant are one class, and swapping dependent steps makes another") {
  // Step 0 (node 1, event 0) schedules events 1 and 2 at t=5: one on node 2, one on node 3.
  const std::vector<std::uint32_t> creator = {kNone, 0, 0};
  const S first{0, 0, 1, {}};
  const S on_2{1, 5, 2, {kObject | 7}}, on_3{2, 5, 3, {kObject | 8}};
  const auto a = run({first, on_2, on_3}, creator);
  const auto b = run({first, on_3, on_2}, creator);
  CHECK(a.trace_class() == b.trace_class());

  // Both touch object 7: the order is part of the class.
  const S on_3_shared{2, 5, 3, {kObject | 7}};
  CHECK(run({first, on_2, on_3_shared}, creator).trace_class() != run({first, on_3_shared, on_2}, creator).trace_class());
  // A step on the world node (0) depends on every other.
  const S on_world{2, 5, 0, {}};
  CHECK(run({first, on_2, on_world}, creator).trace_class() != run({first, on_world, on_2}, creator).trace_class());
  // So does one that touched everything.
  const S everything{2, 5, 3, {sim::Footprints::kEverything}};
  CHECK(run({first, on_2, everything}, creator).trace_class() != run({first, everything, on_2}, creator).trace_class());
  // Which steps came before such a step counts, not only how many: here one of two independent
  // steps does, either one.
  const std::vector<std::uint32_t> three = {kNone, 0, 0, 0};
  const S x{1, 5, 2, {}}, world{2, 5, 0, {}}, y{3, 5, 3, {}};
  CHECK(run({first, x, world, y}, three).trace_class() != run({first, y, world, x}, three).trace_class());
}

TEST_CASE("a run's class tells another instant, another event and another creator apart") {
  const std::vector<std::uint32_t> creator = {kNone, 0, 0};
  const S first{0, 0, 1, {}};
  const auto base = run({first, S{1, 5, 2, {}}, S{2, 5, 3, {}}}, creator).trace_class();
  CHECK(run({first, S{1, 6, 2, {}}, S{2, 5, 3, {}}}, creator).trace_class() != base);  // a delay of another length
  // Node 2's step handles step 0's second event rather than its first (the other goes to node 3).
  CHECK(run({first, S{2, 5, 2, {}}, S{1, 5, 3, {}}}, creator).trace_class() != base);
  // Its event was scheduled before the run, not by step 0.
  CHECK(run({first, S{1, 5, 2, {}}, S{2, 5, 3, {}}}, {kNone, kNone, 0}).trace_class() != base);
  // Two events of the world's start on one node, handled in either order (two workers starting).
  const std::vector<std::uint32_t> at_start = {kNone, kNone};
  CHECK(run({S{0, 0, 2, {}}, S{1, 0, 2, {}}}, at_start).trace_class() != run({S{1, 0, 2, {}}, S{0, 0, 2, {}}}, at_start).trace_class());
}

TEST_CASE("a stream is named by the first step that drew from it, not by the number the order of first draws gave it") {
  // Nodes 2 and 3 each make a stream at t=5; which is made first decides its number (3 or 4).
  const std::vector<std::uint32_t> creator = {kNone, 0, 0, 1, 2};
  const S first{0, 0, 1, {}};
  const auto a = run({first, S{1, 5, 2, {3}}, S{2, 5, 3, {4}}, S{3, 9, 2, {3}}, S{4, 9, 3, {4}}}, creator);
  // (creator names steps by their place in the run: here node 3's first step is step 1.)
  const auto b = run({first, S{2, 5, 3, {3}}, S{1, 5, 2, {4}}, S{3, 9, 2, {4}}, S{4, 9, 3, {3}}}, {kNone, 0, 0, 2, 1});
  CHECK(a.trace_class() == b.trace_class());
  // The same two streams, drawn from by the other node later: another run.
  const auto c = run({first, S{1, 5, 2, {3}}, S{2, 5, 3, {4}}, S{3, 9, 2, {4}}, S{4, 9, 3, {3}}}, creator);
  CHECK(c.trace_class() != a.trace_class());
}
