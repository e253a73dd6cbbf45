#pragma once
// Process stacks (internal to sim/).
//
// Plain stacks are carved from large page-aligned blocks and recycled through a free
// list: no allocator header sits inside a stack, so a live process keeps resident only
// the pages it has touched. Guarded stacks get a mapping each with a PROT_NONE page
// below them, so an overflow is a clean SIGSEGV; they cost one memory mapping per
// process (vm.max_map_count caps them near 30,000), hence for tests and debugging. While an
// arena is in use (sim/arena.hpp), each stack is a block of it and none has a guard page.

#include <cstddef>
#include <utility>
#include <vector>

#include <boost/context/stack_context.hpp>

namespace sim {

class Arena;

class StackPool {
 public:
  StackPool(std::size_t stack_bytes, bool guard_pages);
  ~StackPool();
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;

  boost::context::stack_context allocate();
  void deallocate(boost::context::stack_context& sctx) noexcept;
  /// What no process uses, appended to `out` as [low, high): the free stacks, and in arena mode
  /// each block's tail past its stack (a block is rounded up to its size class).
  void free_stacks(std::vector<std::pair<const void*, const void*>>& out) const;

 private:
  void grow();

  std::size_t stack_bytes_;
  bool guard_pages_;
  std::size_t page_bytes_;
  std::vector<char*> free_;     // lowest usable address of each free stack
  std::vector<void*> blocks_;   // plain mode: blocks of many stacks
  std::vector<char*> mappings_; // guarded mode: one mapping (guard page first) per stack
  Arena* arena_;                // arena mode: each stack a block of the arena, no guard page
};

}  // namespace sim
