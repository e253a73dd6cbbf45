#include "sim/restorable.hpp"

#include <algorithm>
#include <new>
#include <stdexcept>
#include <utility>

#include "sim/engine.hpp"
#include "sim/errors.hpp"

namespace sim {
namespace {
// The computation the thread runs now, and what it is told on each switch.
thread_local Restorable* tl_running = nullptr;

// A margin below a stack's deepest frame that a save keeps: the red zone of the frame that
// called pause() and the switch's own frame.
constexpr std::uintptr_t kStackMargin = 512;
}  // namespace

Restorable::Restorable(Arena& arena, std::size_t stack_bytes) : arena_(arena), stack_bytes_((stack_bytes + 63) / 64 * 64) {}

bool Restorable::start(std::function<void()> body) {
  if (tl_running != nullptr) throw UsageError("sim::Restorable::start: called from inside a computation");
  body_ = std::move(body);
  arena_.clear();
  stack_ = static_cast<char*>(arena_.allocate(stack_bytes_, 64));
  fiber_ = detail::make_context(stack_ + stack_bytes_, stack_bytes_, &Restorable::entry);
  fiber_exceptions_ = {};
  fiber_engine_ = nullptr;
  ended_ = false;
  paused_ = true;  // as if paused before its first step
  error_.clear();
  out_of_memory_ = false;
  return run_until_stop(0);
}

bool Restorable::resume(std::uint64_t value) {
  if (!paused_) throw UsageError("sim::Restorable::resume: the computation is not paused");
  return run_until_stop(value);
}

bool Restorable::run_until_stop(std::uint64_t value) {
  paused_ = false;
  // The caller's exceptions and engine are filed while the computation runs, and its own put
  // in place: a computation may stop inside a catch block, and the caller may throw meanwhile.
  detail::ExceptionState* running = detail::thread_exception_state();
  caller_exceptions_ = *running;
  *running = fiber_exceptions_;
  caller_engine_ = detail::exchange_current_engine(fiber_engine_);
  tl_running = this;
  {
    UseArena in(&arena_);
    const detail::Transfer back = detail::jump_context(fiber_, reinterpret_cast<void*>(value));
    fiber_ = back.fctx;
  }
  tl_running = nullptr;
  fiber_engine_ = detail::exchange_current_engine(caller_engine_);
  fiber_exceptions_ = *running;
  *running = caller_exceptions_;
  if (ended_) {
    if (out_of_memory_) throw std::bad_alloc();
    if (!error_.empty()) throw std::runtime_error(error_);
    return false;
  }
  paused_ = true;
  return true;
}

std::uint64_t Restorable::pause() {
  Restorable* self = tl_running;
  if (self == nullptr) throw UsageError("sim::Restorable::pause: called outside a computation");
  const detail::Transfer t = detail::jump_context(self->caller_, nullptr);
  // Continued: by resume(), or by resume() after a restore; either way `self` is the same.
  self->caller_ = t.fctx;
  return reinterpret_cast<std::uintptr_t>(t.data);
}

void Restorable::finish() {
  Restorable* self = tl_running;
  if (self == nullptr) throw UsageError("sim::Restorable::finish: called outside a computation");
  self->ended_ = true;
  detail::jump_context(self->caller_, nullptr);
  __builtin_unreachable();  // nothing resumes an ended computation: start() or restore() come first
}

void Restorable::entry(detail::Transfer t) {
  Restorable* self = tl_running;
  self->caller_ = t.fctx;
  try {
    self->body_();
  } catch (const std::bad_alloc&) {
    self->out_of_memory_ = true;
  } catch (const std::exception& e) {
    OutsideArena outside;
    self->error_ = e.what();
    if (self->error_.empty()) self->error_ = "sim::Restorable: the computation failed";
  } catch (...) {
    OutsideArena outside;
    self->error_ = "sim::Restorable: the computation failed with a non-standard exception";
  }
  self->ended_ = true;
  detail::jump_context(self->caller_, nullptr);
  __builtin_unreachable();
}

void Restorable::save(Point& into) {
  if (!paused_) throw UsageError("sim::Restorable::save: the computation is not paused");
  // Left out: the unused parts of the engine's stacks, and of the computation's own below its
  // deepest frame: the pause's, where a callback runs on it below the scheduler's suspended frame
  // or the scheduler itself paused, else the scheduler's frame, where a process paused on its own.
  // The paused context is the pause's deepest frame, wherever it stands.
  holes_.clear();
  const void* deepest = fiber_;
  if (fiber_engine_ != nullptr) {
    fiber_engine_->unused_stacks(fiber_, holes_);
    const void* scheduler = fiber_engine_->scheduler_frame();
    const bool paused_here = fiber_ >= static_cast<const void*>(stack_) && fiber_ < static_cast<const void*>(stack_ + stack_bytes_);
    if (scheduler != nullptr && !paused_here) deepest = scheduler;
  }
  if (const Arena::Range own = unused_below(deepest); own.first != own.second) holes_.push_back(own);
  holes_.emplace_back(stack_ + stack_bytes_, stack_ + Arena::usable(stack_));  // its block's tail, never written
  std::sort(holes_.begin(), holes_.end());
  arena_.save(into.memory, holes_);
  into.context = fiber_;
  into.exceptions = fiber_exceptions_;
  into.engine = fiber_engine_;
}

void Restorable::restore(const Point& from) {
  arena_.restore(from.memory);
  fiber_ = from.context;
  fiber_exceptions_ = from.exceptions;
  fiber_engine_ = from.engine;
  ended_ = false;
  paused_ = true;
  error_.clear();
  out_of_memory_ = false;
}

Arena::Range Restorable::unused_below(const void* deepest) const {
  const auto low = reinterpret_cast<std::uintptr_t>(stack_);
  const auto sp = reinterpret_cast<std::uintptr_t>(deepest);
  if (sp < low + kStackMargin || sp >= low + stack_bytes_) return {stack_, stack_};
  return {stack_, reinterpret_cast<const void*>(sp - kStackMargin)};
}

}  // namespace sim
