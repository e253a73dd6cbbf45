#include "app/allocation_failure.hpp"

#if LOCKSIM_MIMALLOC
#include <mimalloc.h>

#include <new>

namespace {

// mimalloc's own functions, called by name: the program then needs the library, which also
// stands in for malloc and free in the C code it runs (Lua's allocator, Open MPI). Calling
// std::malloc here instead let the linker drop the library (as-needed) and left the whole
// program on glibc's allocator, 1.7 times slower on a dfs search.
void* allocate(std::size_t size) {
  void* p = mi_malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void* allocate(std::size_t size, std::align_val_t align) {
  void* p = mi_malloc_aligned(size == 0 ? 1 : size, static_cast<std::size_t>(align));
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

}  // namespace

void* operator new(std::size_t size) { return allocate(size); }
void* operator new[](std::size_t size) { return allocate(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return allocate_or_null(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return allocate_or_null(size); }
void* operator new(std::size_t size, std::align_val_t align) { return allocate(size, align); }
void* operator new[](std::size_t size, std::align_val_t align) { return allocate(size, align); }
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept { return allocate_or_null(size, align); }
void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept { return allocate_or_null(size, align); }

void operator delete(void* p) noexcept { mi_free(p); }
void operator delete[](void* p) noexcept { mi_free(p); }
void operator delete(void* p, std::size_t) noexcept { mi_free(p); }
void operator delete[](void* p, std::size_t) noexcept { mi_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { mi_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { mi_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { mi_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { mi_free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { mi_free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { mi_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { mi_free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { mi_free(p); }
#endif
