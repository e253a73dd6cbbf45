#pragma once
// The pending-event set: a 4-ary min-heap ordered by (time, sequence number).
//
// The engine and the callback-loop baseline in bench/ share it, so their throughput
// ratio measures the engine's own overhead and nothing else. Ties in time are broken
// by the engine (from the choice source), not here: the sequence number only makes
// the order strict and is the default (FIFO) order among simultaneous events.

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
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }

  /// Schedules an event and returns it, sequence number assigned.
  Event push(std::int64_t at, std::uint64_t a, std::uint64_t b) {
    Event e{at, next_seq_++, a, b};
    push(e);
    return e;
  }

  /// Re-inserts an event that already has a sequence number.
  void push(const Event& e) {
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

  /// Removes and returns the earliest event. The queue must not be empty.
  Event pop() {
    Event result = heap_.front();
    Event last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n == 0) return result;
    std::size_t hole = 0;
    for (;;) {
      const std::size_t first = hole * kArity + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t end = first + kArity < n ? first + kArity : n;
      for (std::size_t c = first + 1; c < end; ++c)
        if (before(heap_[c], heap_[best])) best = c;
      if (!before(heap_[best], last)) break;
      heap_[hole] = heap_[best];
      hole = best;
    }
    heap_[hole] = last;
    return result;
  }

  /// Allocates the next sequence number without queueing (for events kept elsewhere).
  std::uint64_t next_seq() { return next_seq_++; }

  void clear() { heap_.clear(); }
  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  static constexpr std::size_t kArity = 4;
  static bool before(const Event& x, const Event& y) {
    return x.at < y.at || (x.at == y.at && x.seq < y.seq);
  }

  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace sim
