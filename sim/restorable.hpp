#pragma once
// A computation that can stop where it chooses, be saved there, and go on from a saved point
// as often as its caller likes: the way an explorer branches a trial at a choice point
// instead of running it again from time zero.
//
// The computation (a trial: its engine, world, processes and their stacks) runs on a stack of
// its own inside an Arena and allocates only from that arena (sim/arena.hpp). At a point it
// chooses, it calls pause(): its caller gets control back, may save() the arena there, and
// resume() it with a value, which pause() returns. Later, restore() puts a saved point back in
// place, every byte at its old address, and resume() goes on from it with another value: the
// same computation as if it had been run up to that point again, since a trial is a function
// of its seed and its choices. What the computation hands out (its result) it copies out of
// the arena under OutsideArena: everything in the arena is overwritten by the next restore.
//
// A computation that keeps anything of its own outside the arena cannot be restored so: a
// static it fills in, a reference count it moves on an object outside (a shared_ptr copied
// from one), memory from malloc. Statics initialised while it runs are allocated outside and
// never written afterwards (sim/allocation.cpp), and C++ exceptions live in the arena.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/arena.hpp"
#include "sim/context.hpp"

namespace sim {

class Engine;

class Restorable {
 public:
  /// A computation in `arena`, on a stack of `stack_bytes` carved from it.
  explicit Restorable(Arena& arena, std::size_t stack_bytes = kStackBytes);
  Restorable(const Restorable&) = delete;
  Restorable& operator=(const Restorable&) = delete;

  static constexpr std::size_t kStackBytes = 256 * 1024;

  /// Empties the arena and starts `body` on a fresh stack in it. Returns true when it paused,
  /// false when it returned. An exception out of `body` is thrown here as std::runtime_error
  /// with its message (std::bad_alloc as itself), once the computation is over.
  bool start(std::function<void()> body);
  /// Goes on from the pause (or from the point restore() put back): pause() returns `value`.
  /// Returns as start() does.
  bool resume(std::uint64_t value);
  /// From inside the computation: stops here until resume(). Throws UsageError outside one.
  static std::uint64_t pause();
  /// From inside the computation, once it has handed out its result: ends it here, as if its
  /// body had returned, without unwinding: its frames and whatever it allocated are left in
  /// the arena for the next start() or restore() to take back. Throws UsageError outside one.
  [[noreturn]] static void finish();
  /// Whether the computation is stopped in pause(), which resume() would continue.
  bool paused() const { return paused_; }

  /// A saved point: the arena's bytes and where the computation stood.
  struct Point {
    Arena::Snapshot memory;
    detail::Context context = nullptr;
    detail::ExceptionState exceptions;
    Engine* engine = nullptr;
  };
  /// Saves the paused computation into `into`: the arena's used bytes but the unused parts of
  /// the stacks (the computation's own, and its engine's processes': Engine::unused_stacks).
  void save(Point& into);
  /// Puts `from` back in place, paused there; resume() goes on. The arena's bytes outside the
  /// point's used part and holes are undefined afterwards.
  void restore(const Point& from);

 private:
  // The part of the computation's own stack below `deepest`, with a margin.
  Arena::Range unused_below(const void* deepest) const;
  [[noreturn]] static void entry(detail::Transfer t);
  bool run_until_stop(std::uint64_t value);

  Arena& arena_;
  std::size_t stack_bytes_;
  std::function<void()> body_;
  char* stack_ = nullptr;                 // in the arena
  detail::Context fiber_ = nullptr;       // the computation, while paused
  detail::Context caller_ = nullptr;      // whoever started or resumed it, while it runs
  detail::ExceptionState fiber_exceptions_, caller_exceptions_;
  Engine* fiber_engine_ = nullptr;        // the engine current on the computation's side
  Engine* caller_engine_ = nullptr;
  bool paused_ = false;
  bool ended_ = false;
  std::string error_;
  bool out_of_memory_ = false;
  std::vector<Arena::Range> holes_;
};

}  // namespace sim
