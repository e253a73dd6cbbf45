#pragma once
// What each event of a run touched, for an explorer that skips the orders of simultaneous
// events which only commute independent steps (explore --mode dfs's reduction). Kept only when
// EngineConfig::footprints points at one; the engine fills it as the run goes.
//
// A step is one event handled: a process resumed until its next wait, a delivery callback, a
// node's pause ending. Its footprint is its node (the process's or the callback's), the
// streams of the choice source it drew from, and what the models declared with
// Engine::touch (state one node's steps share with another's without a message). Two steps
// are independent when their nodes differ, neither is on the world node (fault injectors,
// which act on other nodes), and they touched nothing in common.

#include <cstdint>
#include <vector>

namespace sim {

struct Footprints {
  static constexpr std::uint32_t kNone = 0xffffffff;
  /// Touched by a step that may depend on every other (Engine::touch_everything).
  static constexpr std::uint64_t kEverything = ~std::uint64_t{0};
  struct Step {
    std::uint64_t seq = 0;       // the event's sequence number (Event::seq)
    std::int64_t at = 0;         // its instant, in ns
    std::uint32_t node = 0;
    std::uint32_t touched = 0;   // where its entries of `touched` begin; they end where the next step's do
  };
  struct Tie {
    std::uint32_t at = 0;               // the index of the step the choice picked
    std::vector<std::uint64_t> ready;  // the events it chose among, by sequence number, in their order
  };
  std::vector<Step> steps;
  std::vector<std::uint64_t> touched;  // streams drawn (their id) and objects touched (their key, top bit set)
  std::vector<Tie> ties;               // each tie the choice source decided, in order
  std::vector<std::uint32_t> creator;  // by sequence number: the step that scheduled the event (kNone: none did)

  /// Where each step's entries of `touched` end.
  std::uint32_t touched_end(std::size_t step) const {
    return step + 1 < steps.size() ? steps[step + 1].touched : static_cast<std::uint32_t>(touched.size());
  }
  /// Whether steps `a` and `b` may not be swapped: the same node, the world node, something
  /// touched by both, or either touched everything.
  bool dependent(std::size_t a, std::size_t b) const;
  /// The run's class of equivalent runs (its Mazurkiewicz trace under dependent()), as a hash:
  /// the same for every run that differs from this one only by swapping adjacent independent
  /// steps. A step is named by what such swaps keep: its node, its place among that node's
  /// steps, its instant, and the step that scheduled its event (so named; none, for an event of
  /// the world's start) with the event's place among those that step scheduled. The hash covers
  /// every step's name, the order of the steps on each thing touched (a stream named by the
  /// first step that drew from it, whose number depends on the order streams were made in), and
  /// for each step how many steps that depend on every other came before it. So it gives every
  /// dependent pair's order: runs with one hash are equivalent (but for a collision of 64-bit
  /// hashes), runs with two are not. The hashes among a search's runs count its classes, of
  /// which a sound reduction on these footprints runs one run at least.
  std::uint64_t trace_class() const;
  void clear() {
    steps.clear();
    touched.clear();
    ties.clear();
    creator.clear();
  }
};

}  // namespace sim
