// The programs' operator new and delete, their C++ exceptions' memory and their statics'
// initialisation, routed to the thread's arena while one is in use (sim/arena.hpp).
//
// - operator new allocates from the arena in use, else from the ordinary heap; operator
//   delete gives a block back to the arena it came from, else to the heap.
// - An exception thrown in an arena lives in it (__cxa_allocate_exception and
//   __cxa_free_exception, which the C++ runtime calls through the dynamic linker, so a
//   program's own definitions take their place): a trial restored in place gets back the
//   exceptions its processes were handling, their reference counts included.
// - A function's static initialised while an arena is in use is allocated outside it
//   (__cxa_guard_acquire and release, wrapped by the linker): it outlives every trial.
//
// The ordinary heap is mimalloc's where the program links it (LOCKSIM_MIMALLOC): its own
// operator new, built as C, aborts when memory runs out (exit 134, nothing said), and a
// new-handler cannot stop it, as Debian's build binds its lookup of the handler inside the
// library. Over mi_malloc, a null pointer becomes std::bad_alloc, which main() turns into one
// line and exit 2. C code (Lua's allocator, Open MPI) keeps its malloc, mimalloc's too.

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "sim/arena.hpp"

#if LOCKSIM_MIMALLOC
#include <mimalloc.h>
#endif

namespace {

#if LOCKSIM_MIMALLOC
void* heap_allocate(std::size_t size) { return mi_malloc(size == 0 ? 1 : size); }
void* heap_allocate(std::size_t size, std::size_t align) { return mi_malloc_aligned(size == 0 ? 1 : size, align); }
void heap_free(void* p) { mi_free(p); }
#else
void* heap_allocate(std::size_t size) { return std::malloc(size == 0 ? 1 : size); }
void* heap_allocate(std::size_t size, std::size_t align) {
  return std::aligned_alloc(align, std::max(align, (size + align - 1) / align * align));  // a multiple of align, as C asks
}
void heap_free(void* p) { std::free(p); }
#endif

void* allocate(std::size_t size) {
  if (sim::Arena* arena = sim::current_arena()) return arena->allocate(size);
  void* p = heap_allocate(size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void* allocate(std::size_t size, std::align_val_t align) {
  if (sim::Arena* arena = sim::current_arena()) return arena->allocate(size, static_cast<std::size_t>(align));
  void* p = heap_allocate(size, static_cast<std::size_t>(align));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

template <class... Align>
void* allocate_or_null(std::size_t size, Align... align) noexcept {
  try {
    return allocate(size, align...);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

void release(void* p) noexcept {
  if (p == nullptr || sim::Arena::release(p)) return;
  heap_free(p);
}

// The C++ runtime's own (libstdc++'s), for exceptions thrown outside any arena.
struct Runtime {
  void* (*allocate_exception)(std::size_t) = nullptr;
  void (*free_exception)(void*) = nullptr;
  void* (*allocate_dependent)() = nullptr;
  void (*free_dependent)(void*) = nullptr;
  Runtime() {
    allocate_exception = reinterpret_cast<void* (*)(std::size_t)>(::dlsym(RTLD_NEXT, "__cxa_allocate_exception"));
    free_exception = reinterpret_cast<void (*)(void*)>(::dlsym(RTLD_NEXT, "__cxa_free_exception"));
    allocate_dependent = reinterpret_cast<void* (*)()>(::dlsym(RTLD_NEXT, "__cxa_allocate_dependent_exception"));
    free_dependent = reinterpret_cast<void (*)(void*)>(::dlsym(RTLD_NEXT, "__cxa_free_dependent_exception"));
    if (!allocate_exception || !free_exception || !allocate_dependent || !free_dependent) std::abort();
  }
};
const Runtime& runtime() {
  static const Runtime r;
  return r;
}
[[maybe_unused]] const Runtime& runtime_at_start = runtime();

// libstdc++'s header before a thrown object (__cxa_refcounted_exception) and its dependent
// exception (__cxa_dependent_exception, which std::rethrow_exception throws) on x86-64: the
// runtime allocates and zeroes them so, and frees them by the same sizes.
constexpr std::size_t kExceptionHeader = 128;
constexpr std::size_t kDependentException = 112;

}  // namespace

void* operator new(std::size_t size) { return allocate(size); }
void* operator new[](std::size_t size) { return allocate(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return allocate_or_null(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return allocate_or_null(size); }
void* operator new(std::size_t size, std::align_val_t align) { return allocate(size, align); }
void* operator new[](std::size_t size, std::align_val_t align) { return allocate(size, align); }
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept { return allocate_or_null(size, align); }
void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept { return allocate_or_null(size, align); }

void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }

extern "C" {

void* __cxa_allocate_exception(std::size_t thrown_size) noexcept {
  sim::Arena* arena = sim::current_arena();
  if (arena == nullptr) return runtime().allocate_exception(thrown_size);
  void* block = nullptr;
  try {
    block = arena->allocate(thrown_size + kExceptionHeader);
  } catch (const std::bad_alloc&) {
    std::abort();  // as the runtime does when it has no memory for an exception
  }
  std::memset(block, 0, kExceptionHeader);
  return static_cast<char*>(block) + kExceptionHeader;
}

void __cxa_free_exception(void* thrown) noexcept {
  if (sim::Arena::release(static_cast<char*>(thrown) - kExceptionHeader)) return;
  runtime().free_exception(thrown);
}

void* __cxa_allocate_dependent_exception() noexcept {
  sim::Arena* arena = sim::current_arena();
  if (arena == nullptr) return runtime().allocate_dependent();
  void* block = nullptr;
  try {
    block = arena->allocate(kDependentException);
  } catch (const std::bad_alloc&) {
    std::abort();
  }
  std::memset(block, 0, kDependentException);
  return block;
}

void __cxa_free_dependent_exception(void* dependent) noexcept {
  if (sim::Arena::release(dependent)) return;
  runtime().free_dependent(dependent);
}

// A function's static: its initialisation runs outside the thread's arena.
int __real___cxa_guard_acquire(std::uint64_t* guard);
void __real___cxa_guard_release(std::uint64_t* guard);
void __real___cxa_guard_abort(std::uint64_t* guard);

int __wrap___cxa_guard_acquire(std::uint64_t* guard) {
  const int initialise = __real___cxa_guard_acquire(guard);
  if (initialise != 0) ++sim::detail::arena_suspended;
  return initialise;
}
void __wrap___cxa_guard_release(std::uint64_t* guard) {
  --sim::detail::arena_suspended;
  __real___cxa_guard_release(guard);
}
void __wrap___cxa_guard_abort(std::uint64_t* guard) {
  --sim::detail::arena_suspended;
  __real___cxa_guard_abort(guard);
}

}  // extern "C"
