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

#include <cstddef>
#include <cstdint>
#include <new>
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
  EventQueue() : storage_(1) {}

  bool empty() const { return !has_held_ && heap_size() == 0; }
  std::size_t size() const { return heap_size() + (has_held_ ? 1 : 0); }
  /// The earliest event. The queue must not be empty.
  const Event& top() const {
    const Event* heap = storage_.data() + 1;
    if (!has_held_) return heap[0];
    return heap_size() == 0 || before(held_, heap[0]) ? held_ : heap[0];
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
    Event* heap = storage_.data() + 1;
    if (has_held_) {
      has_held_ = false;
      if (heap_size() == 0 || before(held_, heap[0])) return held_;
      const Event result = heap[0];
      sift_down(held_);
      return result;
    }
    const Event result = heap[0];
    const Event last = storage_.back();
    storage_.pop_back();
    if (heap_size() != 0) sift_down(last);
    return result;
  }

  /// Allocates the next sequence number without queueing (for events kept elsewhere).
  std::uint64_t next_seq() { return next_seq_++; }

 private:
  static constexpr std::size_t kArity = 4;
  static constexpr std::size_t kLine = 64;
  // Bitwise, not short-circuit: the comparisons compile to flag tests the tournament in
  // sift_down turns into conditional moves, as a branch on random times is mispredicted.
  static bool before(const Event& x, const Event& y) {
    return (x.at < y.at) | ((x.at == y.at) & (x.seq < y.seq));
  }

  // Adds `e` at the bottom of the heap and moves it up to its place.
  void sift_up(const Event& e) {
    storage_.push_back(e);
    Event* heap = storage_.data() + 1;
    std::size_t hole = heap_size() - 1;
    while (hole > 0) {
      const std::size_t parent = (hole - 1) / kArity;
      if (!before(e, heap[parent])) break;
      heap[hole] = heap[parent];
      hole = parent;
    }
    heap[hole] = e;
  }

  // Puts `e` in the place of the top and moves it down.
  void sift_down(const Event& e) {
    Event* heap = storage_.data() + 1;
    const std::size_t n = heap_size();
    std::size_t hole = 0;
    for (;;) {
      const std::size_t first = hole * kArity + 1;
      if (first >= n) break;
      std::size_t best = first;
      if (first + kArity <= n) {
        // Four children: the least of them by a tournament of two rounds, each pick a
        // conditional move. Keys are unique, so it picks what a scan in order would.
        const Event* c = &heap[first];
        const std::size_t ab = before(c[1], c[0]);
        const std::size_t cd = 2 + before(c[3], c[2]);
        // Arithmetic, not ?:, which g++ compiles to a branch in this round.
        best = first + ab + (cd - ab) * before(c[cd], c[ab]);
      } else {
        for (std::size_t c = first + 1; c < n; ++c)
          if (before(heap[c], heap[best])) best = c;
      }
      if (!before(heap[best], e)) break;
      heap[hole] = heap[best];
      hole = best;
    }
    heap[hole] = e;
  }

  // Storage on cache-line boundaries, for the layout below.
  template <class T>
  struct LineAligned {
    using value_type = T;
    LineAligned() = default;
    template <class U>
    LineAligned(const LineAligned<U>&) noexcept {}  // NOLINT(google-explicit-constructor)
    T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{kLine})); }
    void deallocate(T* p, std::size_t n) noexcept { ::operator delete(p, n * sizeof(T), std::align_val_t{kLine}); }
    template <class U>
    bool operator==(const LineAligned<U>&) const noexcept {
      return true;
    }
  };
  // The heap starts one event into line-aligned storage, so the four children of every
  // node, heap[4h+1..4h+4], fill exactly two cache lines wherever the allocator puts it.
  static_assert(sizeof(Event) * 2 == kLine);
  std::vector<Event, LineAligned<Event>> storage_;  // storage_[0] is not an event
  std::size_t heap_size() const { return storage_.size() - 1; }
  Event held_;
  bool has_held_ = false;
  std::uint64_t next_seq_ = 0;
};

}  // namespace sim
