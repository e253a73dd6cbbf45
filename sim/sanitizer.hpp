#pragma once
// AddressSanitizer's view of the process stacks (internal to sim/). ASan keeps, per thread,
// the bounds of the stack it runs on; the engine switches stacks by hand (sim/context.hpp),
// so each switch is announced to it, or it takes a process's frames for a wild region and
// both reports false errors and misses real ones. LOCKSIM_ASAN is defined only in a build
// instrumented by ASan (cmake -DLOCKSIM_SANITIZE=ON); the engine's uses of what follows are
// all inside `#if defined(LOCKSIM_ASAN)`, so the normal build compiles exactly as without it.

#if defined(__SANITIZE_ADDRESS__)
#define LOCKSIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LOCKSIM_ASAN 1
#endif
#endif

#if defined(LOCKSIM_ASAN)

#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>

#include <cstddef>

namespace sim::detail {

/// Instrumented frames carry redzones and keep more locals in memory: process stacks are
/// this many times EngineConfig::stack_bytes.
inline constexpr std::size_t kSanitizerStackScale = 4;

/// A stack as ASan takes it: lowest address and size.
struct StackBounds {
  const void* bottom = nullptr;
  std::size_t size = 0;
};

/// Before a switch to the stack `to`. `fake_stack_save` keeps the current context's fake
/// stack (ASan's frames for use-after-return checks) until it is continued; nullptr when the
/// current context will never be continued, so that its fake stack is released.
inline void start_switch(void** fake_stack_save, StackBounds to) {
  __sanitizer_start_switch_fiber(fake_stack_save, to.bottom, to.size);
}

/// First thing after a switch lands, with what start_switch saved for this context
/// (nullptr for a context entered for the first time); returns the stack switched from.
inline StackBounds finish_switch(void* fake_stack_save) {
  StackBounds from;
  __sanitizer_finish_switch_fiber(fake_stack_save, &from.bottom, &from.size);
  return from;
}

}  // namespace sim::detail

#endif
