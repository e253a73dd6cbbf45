#include "sim/arena.hpp"

#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <mutex>
#include <new>

#include "sim/sanitizer.hpp"

namespace sim {
namespace {

// Every arena is a slot of one reservation, so that operator delete tells an arena's block from
// any other with one subtraction, and finds its arena's books with a shift. The reservation is
// address space, which a process's ceiling (RLIMIT_AS: `locksim` sets one) counts: a quarter of
// what the ceiling leaves, at most 64 GiB, in slots of 64 MiB to 1 GiB.
constexpr std::size_t kSlots = 64;
constexpr unsigned kSmallestSlotShift = 26, kLargestSlotShift = 30;
constexpr std::size_t kCommitStep = std::size_t{16} << 20;

std::atomic<std::uintptr_t> reservation{0};  // 0: not reserved (yet, or it failed)
std::atomic<unsigned> slot_shift{kLargestSlotShift};
std::mutex slots_mutex;
Arena* slots[kSlots] = {};
bool reservation_failed = false;

bool reserve() {
  if (reservation.load(std::memory_order_acquire) != 0) return true;
  if (reservation_failed) return false;
  std::size_t room = kSlots << kLargestSlotShift;
  if (rlimit limit{}; ::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    room = std::min<std::size_t>(room, limit.rlim_cur / 4);
  unsigned shift = kLargestSlotShift;
  while (shift > kSmallestSlotShift && (kSlots << shift) > room) --shift;
  void* p = (kSlots << shift) > room ? MAP_FAILED
                                     : ::mmap(nullptr, kSlots << shift, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    reservation_failed = true;
    return false;
  }
  slot_shift.store(shift, std::memory_order_relaxed);
  reservation.store(reinterpret_cast<std::uintptr_t>(p), std::memory_order_release);
  return true;
}

// Size classes of whole blocks (a 16-byte head included): 16-byte steps up to 1 KiB, then four
// a doubling.
constexpr std::size_t kSmall = 64;  // classes of 16 .. 1024 bytes
constexpr std::size_t kClasses = kSmall + 4 * 40;

std::size_t class_of(std::size_t n) {
  if (n <= 1024) return (n + 15) / 16 - 1;
  const unsigned p = 63 - static_cast<unsigned>(std::countl_zero(n - 1));  // 2^p < n <= 2^(p+1), p >= 10
  const std::size_t quarter = std::size_t{1} << (p - 2);
  const std::size_t q = (n - (std::size_t{1} << p) + quarter - 1) / quarter;  // 1 .. 4
  return kSmall + (p - 10) * 4 + (q - 1);
}

std::size_t size_of(std::size_t c) {
  if (c < kSmall) return (c + 1) * 16;
  const std::size_t p = (c - kSmall) / 4 + 10, q = (c - kSmall) % 4 + 1;
  return (std::size_t{1} << p) + q * (std::size_t{1} << (p - 2));
}

// Before every block handed out: its class and how far the caller's address is from the
// block's start. A free block's first word links the class's free list.
struct Head {
  std::uint32_t size_class;
  std::uint32_t shift;
};
constexpr std::size_t kHeadRoom = 16;

}  // namespace

// The allocator's books, at the arena's start: saved and restored with the blocks.
struct Arena::Books {
  std::size_t top;
  void* free[kClasses];
};

std::size_t Arena::first_block() { return (sizeof(Books) + 63) / 64 * 64; }

bool Arena::supported() {
#if defined(LOCKSIM_ASAN)
  return false;
#else
  std::lock_guard lock(slots_mutex);
  return reserve();
#endif
}

Arena::Arena(std::size_t capacity) {
#if defined(LOCKSIM_ASAN)
  throw std::bad_alloc();  // see supported()
#endif
  std::lock_guard lock(slots_mutex);
  if (!reserve()) throw std::bad_alloc();
  capacity_ = std::min(capacity, std::size_t{1} << slot_shift.load(std::memory_order_relaxed));
  slot_ = kSlots;
  for (std::size_t i = 0; i < kSlots; ++i)
    if (slots[i] == nullptr) {
      slot_ = i;
      break;
    }
  if (slot_ == kSlots) throw std::bad_alloc();
  start_ = reinterpret_cast<char*>(reservation.load(std::memory_order_relaxed)) + (slot_ << slot_shift.load(std::memory_order_relaxed));
  commit(first_block());
  books_ = reinterpret_cast<Books*>(start_);
  clear();
  slots[slot_] = this;
}

Arena::~Arena() {
  std::lock_guard lock(slots_mutex);
  ::madvise(start_, committed_, MADV_DONTNEED);
  ::mprotect(start_, committed_, PROT_NONE);
  slots[slot_] = nullptr;
}

void Arena::commit(std::size_t up_to) {
  if (up_to <= committed_) return;
  if (up_to > capacity_) throw std::bad_alloc();
  const std::size_t to = std::min(capacity_, (up_to + kCommitStep - 1) / kCommitStep * kCommitStep);
  if (::mprotect(start_ + committed_, to - committed_, PROT_READ | PROT_WRITE) != 0) throw std::bad_alloc();
  committed_ = to;
}

void* Arena::allocate(std::size_t size, std::size_t align) {
  const std::size_t need = size + kHeadRoom + (align > kHeadRoom ? align - kHeadRoom : 0);
  const std::size_t c = class_of(need);
  char* block = static_cast<char*>(books_->free[c]);
  if (block != nullptr) {
    books_->free[c] = *reinterpret_cast<void**>(block);
  } else {
    const std::size_t bytes = size_of(c);
    commit(books_->top + bytes);
    block = start_ + books_->top;
    books_->top += bytes;
  }
  char* user = block + kHeadRoom;
  if (align > kHeadRoom) user = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(user) + align - 1) & ~(align - 1));
  Head head{static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(user - block)};
  std::memcpy(user - sizeof(Head), &head, sizeof(Head));
  return user;
}

void Arena::deallocate(void* p) noexcept {
  char* user = static_cast<char*>(p);
  Head head;
  std::memcpy(&head, user - sizeof(Head), sizeof(Head));
  char* block = user - head.shift;
  const std::uintptr_t base = reservation.load(std::memory_order_relaxed);
  const unsigned shift = slot_shift.load(std::memory_order_relaxed);
  Books* books = reinterpret_cast<Books*>(base + ((reinterpret_cast<std::uintptr_t>(p) - base) >> shift << shift));
  *reinterpret_cast<void**>(block) = books->free[head.size_class];
  books->free[head.size_class] = block;
}

std::size_t Arena::usable(const void* p) noexcept {
  Head head;
  std::memcpy(&head, static_cast<const char*>(p) - sizeof(Head), sizeof(Head));
  return size_of(head.size_class) - head.shift;
}

namespace {
// The slot of the reservation `p` lies in; kSlots for memory outside it.
std::size_t slot_of(const void* p) noexcept {
  const std::uintptr_t base = reservation.load(std::memory_order_relaxed);
  const std::uintptr_t offset = reinterpret_cast<std::uintptr_t>(p) - base;
  const unsigned shift = slot_shift.load(std::memory_order_relaxed);
  return base == 0 || offset >= (kSlots << shift) ? kSlots : offset >> shift;
}
}  // namespace

Arena* Arena::owner(const void* p) noexcept {
  const std::size_t slot = slot_of(p);
  return slot < kSlots ? slots[slot] : nullptr;
}

bool Arena::release(void* p) noexcept {
  const std::size_t slot = slot_of(p);
  if (slot == kSlots) return false;
  if (slots[slot] != nullptr) deallocate(p);
  return true;
}

std::size_t Arena::used() const noexcept { return books_->top; }

void Arena::protect(bool read_only) {
  if (::mprotect(start_, committed_, read_only ? PROT_READ : PROT_READ | PROT_WRITE) != 0) throw std::bad_alloc();
}

void Arena::clear() noexcept {
  books_->top = first_block();
  std::fill(std::begin(books_->free), std::end(books_->free), nullptr);
}

void Arena::save(Snapshot& into, const std::vector<Range>& holes) const {
  OutsideArena outside;
  const std::size_t top = books_->top;
  into.top_ = top;
  into.pieces_.clear();
  std::size_t at = 0, total = 0;
  const auto keep = [&](std::size_t to) {
    if (to > at) {
      into.pieces_.emplace_back(at, to - at);
      total += to - at;
    }
  };
  for (const auto& [first, second] : holes) {
    const std::size_t lo = std::clamp<std::size_t>(static_cast<const char*>(first) - start_, at, top);
    const std::size_t hi = std::clamp<std::size_t>(static_cast<const char*>(second) - start_, lo, top);
    keep(lo);
    at = hi;
  }
  keep(top);
  into.kept_ = total;
  if (into.bytes_.size() < total) into.bytes_.resize(total);
  std::byte* out = into.bytes_.data();
  for (const auto& [offset, length] : into.pieces_) {
    std::memcpy(out, start_ + offset, length);
    out += length;
  }
}

void Arena::restore(const Snapshot& from) noexcept {
  const std::byte* in = from.bytes_.data();
  for (const auto& [offset, length] : from.pieces_) {
    std::memcpy(start_ + offset, in, length);
    in += length;
  }
}

}  // namespace sim
