#include "sim/stack_pool.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "sim/arena.hpp"
#include "sim/errors.hpp"
#include "sim/sanitizer.hpp"

namespace sim {
namespace {
constexpr std::size_t kStacksPerBlock = 64;
constexpr std::size_t kCacheLine = 64;

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// Blocks of plain stacks outlive their engine in a small per-thread cache: an explorer runs
// thousands of short engines one after another, and mapping, faulting in and unmapping a
// fresh block for each would cost more than the run. Only the block's address is reused;
// nothing of it reaches a result.
constexpr std::size_t kCachedBlocks = 8;
struct BlockCache {
  std::size_t stack_bytes = 0;
  std::vector<void*> blocks;
  ~BlockCache() {
    for (void* block : blocks) std::free(block);
  }
};
thread_local BlockCache block_cache;
}  // namespace

StackPool::StackPool(std::size_t stack_bytes, bool guard_pages)
    : guard_pages_(guard_pages && current_arena() == nullptr),
      page_bytes_(static_cast<std::size_t>(::sysconf(_SC_PAGESIZE))),
      arena_(current_arena()) {
  if (stack_bytes < 4096) throw UsageError("sim::EngineConfig: stack_bytes must be at least 4096");
#if defined(LOCKSIM_ASAN)
  stack_bytes *= detail::kSanitizerStackScale;
#endif
  stack_bytes_ = round_up(stack_bytes, page_bytes_);
}

StackPool::~StackPool() {
  if (arena_ != nullptr) {
    for (void* block : blocks_) Arena::deallocate(block);
    return;
  }
  for (void* block : blocks_) {
    if (block_cache.stack_bytes != stack_bytes_) {  // another stack size: start over
      for (void* old : block_cache.blocks) std::free(old);
      block_cache.blocks.clear();
      block_cache.stack_bytes = stack_bytes_;
    }
    if (block_cache.blocks.size() < kCachedBlocks) {
      block_cache.blocks.push_back(block);
    } else {
      std::free(block);
    }
  }
  for (char* mapping : mappings_) {
#if defined(LOCKSIM_ASAN)
    // Whatever is mapped here next starts clean (see allocate).
    ASAN_UNPOISON_MEMORY_REGION(mapping + page_bytes_, stack_bytes_);
#endif
    ::munmap(mapping, stack_bytes_ + page_bytes_);
  }
}

void StackPool::grow() {
  if (arena_ != nullptr) {
    // One stack at a time, only as many as the trial keeps alive at once: a snapshot of the arena
    // copies every stack below its top (but for the holes its caller leaves out).
    void* stack = arena_->allocate(stack_bytes_, kCacheLine);
    blocks_.push_back(stack);
    free_.push_back(static_cast<char*>(stack));
    return;
  }
  if (guard_pages_) {
    const std::size_t length = stack_bytes_ + page_bytes_;
    void* vp = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (vp == MAP_FAILED) throw std::bad_alloc();
    char* base = static_cast<char*>(vp);
    // Checked in every build: a guard page that silently fails to appear is the
    // heap corruption it exists to prevent.
    if (::mprotect(base, page_bytes_, PROT_NONE) != 0) {
      const int err = errno;
      ::munmap(base, length);
      throw std::runtime_error(std::string("sim: cannot protect a stack guard page (") + std::strerror(err) +
                               "); too many live processes for guard_pages (see vm.max_map_count)");
    }
    mappings_.push_back(base);
    free_.push_back(base + page_bytes_);
    return;
  }
  // Stacks a power of two apart would put every process's hot top frames in the same
  // few cache sets, and switching between many processes would thrash them; one extra
  // cache line per stack staggers them across all sets.
  const std::size_t stride = stack_bytes_ + kCacheLine;
  void* block = nullptr;
  if (block_cache.stack_bytes == stack_bytes_ && !block_cache.blocks.empty()) {
    block = block_cache.blocks.back();
    block_cache.blocks.pop_back();
  } else {
    block = std::aligned_alloc(page_bytes_, stride * kStacksPerBlock);
  }
  if (block == nullptr) throw std::bad_alloc();
  blocks_.push_back(block);
  // Pushed highest first so stacks are handed out in address order.
  for (std::size_t i = kStacksPerBlock; i-- > 0;) free_.push_back(static_cast<char*>(block) + i * stride);
}

boost::context::stack_context StackPool::allocate() {
  if (free_.empty()) grow();
  char* low = free_.back();
  free_.pop_back();
#if defined(LOCKSIM_ASAN)
  // A finished process never returned from its last frames, and ASan's marks of their
  // redzones are still on the stack: they would fault the next process's accesses there.
  ASAN_UNPOISON_MEMORY_REGION(low, stack_bytes_);
#endif
  boost::context::stack_context sctx;
  sctx.size = stack_bytes_;
  sctx.sp = low + stack_bytes_;
  return sctx;
}

void StackPool::deallocate(boost::context::stack_context& sctx) noexcept {
  free_.push_back(static_cast<char*>(sctx.sp) - sctx.size);
}

void StackPool::free_stacks(std::vector<std::pair<const void*, const void*>>& out) const {
  for (char* low : free_) out.emplace_back(low, low + stack_bytes_);
  if (arena_ != nullptr)
    for (const void* block : blocks_)
      out.emplace_back(static_cast<const char*>(block) + stack_bytes_, static_cast<const char*>(block) + Arena::usable(block));
}

}  // namespace sim
