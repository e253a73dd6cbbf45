#pragma once
// The pending-event set: a 4-ary min-heap ordered by (time, sequence number), plus the
// event pushed last, held outside the heap until the next push or pop.
//
// The engine and the callback-loop baseline in bench/ share it, so their throughput
// ratio measures the engine's own overhead and nothing else. Ties in time are broken
// by the engine (from the choice source), not here: the sequence number only makes
// the order strict and is the default (FIFO) order among simultaneous events.
//
// Why the held event: a discrete-event loop mostly alternates one push and one pop (a
// process schedules its wake-up and suspends; a callback schedules the next delivery).
// A pop that finds an event held takes the earlier of it and the heap's top; when that is
// the top, the held event takes the top's place in a single sift down. A push then a pop
// cost one sift instead of two.

#include <cstdint>
#include <utility>
#include <vector>

namespace sim {

/// A pending event. `a` and `b` are the owner's payload (the engine packs a kind,
/// a target and a generation into them).
struct Event {
  std::int64_t at = 0;   // nanoseconds since the start of the run
  std::uint64_t seq = 0;  // order of scheduling
  std::uint64_t a = 0;
  std::uint64_t b = 0;
};

class EventQueue {
 public:
  bool empty() const { return !has_held_ && heap_.empty(); }
  std::size_t size() const { return heap_.size() + (has_held_ ? 1 : 0); }
  /// The earliest event. The queue must not be empty.
  const Event& top() const {
    if (!has_held_) return heap_.front();
    return heap_.empty() || before(held_, heap_.front()) ? held_ : heap_.front();
  }

  /// Schedules an event and returns it, sequence number assigned.
  Event push(std::int64_t at, std::uint64_t a, std::uint64_t b) {
    Event e{at, next_seq_++, a, b};
    push(e);
    return e;
  }

  /// Re-inserts an event that already has a sequence number.
  void push(const Event& e) {
    if (has_held_) sift_up(held_);
    held_ = e;
    has_held_ = true;
  }

  /// Removes and returns the earliest event. The queue must not be empty.
  Event pop() {
    if (has_held_) {
      has_held_ = false;
      if (heap_.empty() || before(held_, heap_.front())) return held_;
      const Event result = heap_.front();
      sift_down(held_, heap_.size());
      return result;
    }
    const Event result = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(last, heap_.size());
    return result;
  }

  /// Allocates the next sequence number without queueing (for events kept elsewhere).
  std::uint64_t next_seq() { return next_seq_++; }

  void clear() {
    heap_.clear();
    has_held_ = false;
  }
  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  static constexpr std::size_t kArity = 4;
  // Bitwise, not short-circuit: the comparisons compile to flag tests the tournament in
  // sift_down turns into conditional moves, where branches mispredicted about half the time.
  static bool before(const Event& x, const Event& y) {
    return (x.at < y.at) | ((x.at == y.at) & (x.seq < y.seq));
  }

  // Adds `e` at the bottom of the heap and moves it up to its place.
  void sift_up(const Event& e) {
    std::size_t hole = heap_.size();
    heap_.push_back(e);
    while (hole > 0) {
      const std::size_t parent = (hole - 1) / kArity;
      if (!before(e, heap_[parent])) break;
      heap_[hole] = heap_[parent];
      hole = parent;
    }
    heap_[hole] = e;
  }

  // Puts `e` in the place of the top (the first `n` entries are the heap) and moves it down.
  void sift_down(const Event& e, std::size_t n) {
    std::size_t hole = 0;
    for (;;) {
      const std::size_t first = hole * kArity + 1;
      if (first >= n) break;
      std::size_t best = first;
      if (first + kArity <= n) {
        // Four children: the least of them by a tournament of two rounds, each pick a
        // conditional move. Keys are unique, so it picks what a scan in order would.
        const Event* c = &heap_[first];
        const std::size_t ab = before(c[1], c[0]);
        const std::size_t cd = 2 + before(c[3], c[2]);
        // Arithmetic, not ?:, which g++ compiles to a branch in this round.
        best = first + ab + (cd - ab) * before(c[cd], c[ab]);
      } else {
        for (std::size_t c = first + 1; c < n; ++c)
          if (before(heap_[c], heap_[best])) best = c;
      }
      if (!before(heap_[best], e)) break;
      heap_[hole] = heap_[best];
      hole = best;
    }
    heap_[hole] = e;
  }

  std::vector<Event> heap_;
  Event held_;
  bool has_held_ = false;
  std::uint64_t next_seq_ = 0;
};

}  // namespace sim
