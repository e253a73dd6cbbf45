#pragma once
// Memory a computation can be saved from and put back into, at the same addresses.
//
// A trial's state is a graph of pointers: into its heap, into its processes' stacks, from a
// suspended stack frame to the objects it was working on. It cannot be copied elsewhere, but
// it can be copied out and back in place: if everything the trial allocates comes from one
// region at a fixed address, and the allocator's own books live inside that region, then
// copying the region's used bytes out is a snapshot, and copying them back is the trial as it
// was, stacks and all (SimGrid's model checker once kept its applications' stacks inside a
// heap it restored so; libco saves and restores the used part of a shared stack the same way).
//
// An Arena is such a region: a slot of one large address-space reservation, committed as it
// grows, with a size-class allocator whose free lists and top are kept at its start. While a
// UseArena is alive on a thread, that thread's `operator new` (and its C++ exceptions)
// allocate from the arena (sim/allocation.cpp); `operator delete` gives a block back to the
// arena it came from, whichever thread is using what. Statics initialised while an arena is in
// use are allocated outside it: they outlive every trial.
//
// A snapshot copies [start, top) except the ranges its caller says hold nothing (the unused
// part of a stack). Restore is the reverse; bytes above the snapshot's top are free then.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace sim {

class Arena {
 public:
  /// Room for `capacity` bytes at most (and at most a slot's: 64 MiB to 1 GiB, as the address
  /// space allows); memory is committed as the arena grows into it. Throws std::bad_alloc where
  /// arenas are not supported() or all are taken.
  explicit Arena(std::size_t capacity = kDefaultCapacity);
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  static constexpr std::size_t kDefaultCapacity = std::size_t{1} << 30;
  /// Whether this build and machine give arenas: false in a sanitizer's build (which keeps its
  /// own books of every allocation and stack) or where the address space cannot be reserved.
  static bool supported();

  /// A block of at least `size` bytes aligned to `align` (a power of two). Throws
  /// std::bad_alloc when the arena is full.
  void* allocate(std::size_t size, std::size_t align = 16);
  /// Gives back a block allocate() returned.
  static void deallocate(void* p) noexcept;
  /// How many bytes from `p` (as allocate() returned it) to the end of its block: its size
  /// rounded up to its class, which a save should leave out where the caller never writes it.
  static std::size_t usable(const void* p) noexcept;
  /// The arena `p` was allocated from, or nullptr for memory of no arena.
  static Arena* owner(const void* p) noexcept;
  /// Gives `p` back to its arena if it is an arena's block, and says whether it was: a block of
  /// an arena no longer there is dropped, never handed to another allocator.
  static bool release(void* p) noexcept;
  bool contains(const void* p) const noexcept {
    return reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(start_) < capacity_;
  }

  /// Bytes from the start to the top: what a snapshot copies at most.
  std::size_t used() const noexcept;
  /// Empty again: every block is free.
  void clear() noexcept;
  /// Makes the arena read-only (or writable again): a write to it then faults. A check that a
  /// computation writes nothing it was given (a test's).
  void protect(bool read_only);

  /// A range of the arena that a snapshot leaves out: [first, second).
  using Range = std::pair<const void*, const void*>;
  class Snapshot {
   public:
    std::size_t size() const { return top_; }         // the arena's used bytes when taken
    std::size_t copied() const { return kept_; }      // of those, the bytes kept
   private:
    friend class Arena;
    std::size_t top_ = 0, kept_ = 0;
    std::vector<std::pair<std::size_t, std::size_t>> pieces_;  // (offset, length) kept, in order
    std::vector<std::byte> bytes_;
  };
  /// Copies the used bytes into `into` (its memory reused), leaving out `holes` (sorted by
  /// address, not overlapping). Call it with no arena in use on the thread.
  void save(Snapshot& into, const std::vector<Range>& holes = {}) const;
  /// Puts a snapshot of this arena back: its blocks, free lists and top as they were.
  void restore(const Snapshot& from) noexcept;

 private:
  struct Books;
  Books* books_;
  char* start_;
  std::size_t capacity_;
  std::size_t committed_ = 0;
  std::size_t slot_;
  void commit(std::size_t up_to);
  static std::size_t first_block();
};

namespace detail {
inline thread_local Arena* arena_in_use = nullptr;
inline thread_local int arena_suspended = 0;  // > 0: outside the arena for now (a static's initialisation)
}  // namespace detail

/// The arena the thread's `operator new` allocates from now, or nullptr.
inline Arena* current_arena() noexcept { return detail::arena_suspended == 0 ? detail::arena_in_use : nullptr; }

/// While alive, the thread allocates from `arena` (nullptr: from the ordinary heap).
class UseArena {
 public:
  explicit UseArena(Arena* arena) noexcept : saved_(detail::arena_in_use), saved_suspended_(detail::arena_suspended) {
    detail::arena_in_use = arena;
    detail::arena_suspended = 0;
  }
  ~UseArena() {
    detail::arena_in_use = saved_;
    detail::arena_suspended = saved_suspended_;
  }
  UseArena(const UseArena&) = delete;
  UseArena& operator=(const UseArena&) = delete;

 private:
  Arena* saved_;
  int saved_suspended_;
};

/// While alive, the thread allocates from the ordinary heap, whatever arena is in use: for what
/// a computation in an arena hands out of it.
class OutsideArena {
 public:
  OutsideArena() noexcept { ++detail::arena_suspended; }
  ~OutsideArena() { --detail::arena_suspended; }
  OutsideArena(const OutsideArena&) = delete;
  OutsideArena& operator=(const OutsideArena&) = delete;
};

}  // namespace sim
