#pragma once
// The context switch under every process (sim/engine.cpp): Boost.Context's contexts, made by
// its make_fcontext, and switched by jump_context.
//
// Boost's jump_fcontext continues the target context with an indirect jump. The call into
// it then never meets its return, so the CPU's return-address predictor stays one entry out
// of step, and every return the resumed process makes up its stack is mispredicted. On
// x86-64, jump_context does the same as jump_fcontext on the same frame layout (it can
// continue any context that make_fcontext or jump_fcontext made, and the reverse), and
// continues with `ret`, which keeps the predictor in step. Elsewhere it is jump_fcontext
// itself.

#include <boost/context/detail/fcontext.hpp>
#include <cxxabi.h>

namespace sim::detail {

using Context = boost::context::detail::fcontext_t;
using Transfer = boost::context::detail::transfer_t;

/// Suspends the running context and continues `to`, handing it `data`. Returns when some
/// context continues this one: with that context, suspended, and the data it handed over.
#if defined(__x86_64__) && defined(__ELF__)
extern "C" Transfer locksim_jump_context(Context to, void* data);
inline Transfer jump_context(Context to, void* data) { return locksim_jump_context(to, data); }
#else
inline Transfer jump_context(Context to, void* data) { return boost::context::detail::jump_fcontext(to, data); }
#endif

/// Calls fn(arg) on another stack, below `top`, and returns. Unlike a switch it keeps no
/// context: for a short call that needs a deeper stack (or a hotter one) than the caller's.
/// fn must not throw. Where there is no such call, kCallOnStack is false.
#if defined(__x86_64__) && defined(__ELF__)
inline constexpr bool kCallOnStack = true;
extern "C" void locksim_call_on_stack(void (*fn)(void*), void* arg, void* top);
inline void call_on_stack(void (*fn)(void*), void* arg, void* top) { locksim_call_on_stack(fn, arg, top); }
#else
inline constexpr bool kCallOnStack = false;
inline void call_on_stack(void (*fn)(void*), void* arg, void*) { fn(arg); }
#endif

/// The C++ runtime's record of the exceptions being handled, kept per thread (the Itanium C++
/// ABI's __cxa_eh_globals, section 2.2.2: the chain of caught exceptions, newest first, and the
/// count of those thrown and not yet caught). A process may suspend inside a catch block, so
/// each context keeps its own and a switch swaps them: with one record per thread, a process's
/// `throw;` rethrew another's exception, and the end of its handler released the other's.
struct ExceptionState {
  void* caught = nullptr;
  unsigned int uncaught = 0;
};
/// The running thread's record, where the runtime keeps it.
inline ExceptionState* thread_exception_state() { return reinterpret_cast<ExceptionState*>(abi::__cxa_get_globals()); }

/// A context that starts `entry` on the stack below `top` when first continued. `entry`
/// receives the context that continued it and its data, and must never return.
inline Context make_context(void* top, std::size_t size, void (*entry)(Transfer)) {
  return boost::context::detail::make_fcontext(top, size, entry);
}

}  // namespace sim::detail
