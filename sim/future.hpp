#pragma once
// A one-shot value between processes: a reply, a grant. The setter may be a process or
// a callback; a value set after the reader gave up is kept and simply never read (the
// late reply of a timed-out call).

#include <exception>
#include <memory>
#include <optional>
#include <string>

#include "sim/process.hpp"

namespace sim {

template <class T>
class Promise;

template <class T>
class Future {
 public:
  Future() = default;

  bool valid() const { return state_ != nullptr; }
  bool ready() const { return state_ && (state_->value || state_->error); }

  /// Waits for the value (or rethrows the exception set instead).
  T get() { return get_until(kNever); }
  /// Waits at most `d`; throws sim::Timeout.
  T get_for(Duration d) {
    if (d < Duration::zero()) throw UsageError("sim::Future::get_for: negative timeout " + format_duration(d));
    return get_until(engine("sim::Future::get_for").now() + d);
  }
  T get_until(Time deadline) {
    std::optional<T> value = try_get_until(deadline);
    if (!value) throw Timeout();
    return std::move(*value);
  }
  /// As get_for, but returns nullopt at the deadline instead of throwing sim::Timeout (the
  /// future then stays readable): for callers to whom a timeout is an everyday outcome, a
  /// client's call, say, where an exception per timeout costs more than the call.
  std::optional<T> try_get_for(Duration d) {
    if (d < Duration::zero()) throw UsageError("sim::Future::try_get_for: negative timeout " + format_duration(d));
    return try_get_until(engine("sim::Future::try_get_for").now() + d);
  }
  std::optional<T> try_get_until(Time deadline) {
    if (!state_) throw UsageError("sim::Future::get: the future has no state (default-constructed or already read)");
    Engine& e = engine("sim::Future::get");
    while (!ready()) {
      if (e.now() >= deadline) return std::nullopt;
      const WaitHandle h = e.prepare_wait("sim::Future::get");
      state_->waiter = h;
      if (deadline != kNever) e.wake_at(h, deadline);
      e.wait(h, WaitInfo{"Future::get", &state_->name, deadline});
    }
    auto state = std::move(state_);
    if (state->error) std::rethrow_exception(state->error);
    return std::move(*state->value);
  }

 private:
  friend class Promise<T>;
  struct State {
    std::string name;
    std::optional<T> value;
    std::exception_ptr error;
    std::optional<WaitHandle> waiter;
  };
  explicit Future(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

template <class T>
class Promise {
 public:
  explicit Promise(std::string name = "future") : state_(std::make_shared<State>()) { state_->name = std::move(name); }

  /// The reading side; there is one.
  Future<T> get_future() const { return Future<T>(state_); }
  bool satisfied() const { return state_->value || state_->error; }

  void set_value(T value) {
    check_unset("sim::Promise::set_value");
    state_->value.emplace(std::move(value));
    wake_reader();
  }
  void set_exception(std::exception_ptr error) {
    check_unset("sim::Promise::set_exception");
    state_->error = std::move(error);
    wake_reader();
  }

 private:
  using State = typename Future<T>::State;
  void check_unset(const char* call) const {
    if (satisfied()) throw UsageError(std::string(call) + ": '" + state_->name + "' is already set");
  }
  void wake_reader() {
    Engine* e = Engine::current();
    if (state_->waiter && e != nullptr && e->is_waiting(*state_->waiter)) e->wake(*state_->waiter);
    state_->waiter.reset();
  }
  std::shared_ptr<State> state_;
};

}  // namespace sim
