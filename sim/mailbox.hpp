#pragma once
// A process's queue of messages: any number of senders (processes or callbacks), any
// number of receivers. A put wakes one waiting receiver through an event at the current
// instant; a receiver that loses a message to another retries, so none is lost or
// handed out twice.

#include <algorithm>
#include <deque>
#include <limits>
#include <optional>
#include <string>

#include "sim/process.hpp"

namespace sim {

template <class T>
class Mailbox {
 public:
  static constexpr std::size_t kUnbounded = std::numeric_limits<std::size_t>::max();

  explicit Mailbox(std::string name = "mailbox", std::size_t capacity = kUnbounded)
      : name_(std::move(name)), capacity_(capacity) {}
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  const std::string& name() const { return name_; }
  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  std::size_t capacity() const { return capacity_; }
  bool full() const { return capacity_ != kUnbounded && items_.size() >= capacity_; }

  /// Adds a message, or returns false (and drops nothing) when the mailbox is full.
  bool try_put(T value) {
    if (full()) return false;
    items_.push_back(std::move(value));
    notify_one();
    return true;
  }

  /// Adds a message; the mailbox must not be full.
  void put(T value) {
    if (!try_put(std::move(value))) throw UsageError("sim::Mailbox::put: mailbox '" + name_ + "' is full");
  }

  /// The oldest message, if any, without waiting.
  std::optional<T> try_get() {
    if (items_.empty()) return std::nullopt;
    return take();
  }

  /// Waits for a message.
  T get() { return get_until(kNever); }
  /// Waits for a message, the way a server loop waits for its next request: returns
  /// nullopt, without throwing, when the process is killed (its node crashed, or the run
  /// ended). The caller must then return. Every run ends by killing its idle server
  /// loops: this spares each one an exception.
  ///   while (auto job = inbox.get_unless_killed()) handle(*job);
  std::optional<T> get_unless_killed() {
    Engine& e = engine("sim::Mailbox::get_unless_killed");
    for (;;) {
      if (!items_.empty()) return take();
      const WaitHandle h = e.prepare_wait("sim::Mailbox::get_unless_killed");
      waiters_.push_back(h);
      const bool alive = e.wait_unless_killed(h, WaitInfo{"Mailbox::get", &name_, kNever});
      const bool was_waiting = forget(h);
      if (!alive) {
        if (!was_waiting) notify_one();  // a put had chosen this receiver: hand its notice on
        return std::nullopt;
      }
    }
  }
  /// Waits at most `d` for a message; throws sim::Timeout.
  T get_for(Duration d) {
    if (d < Duration::zero()) throw UsageError("sim::Mailbox::get_for: negative timeout " + format_duration(d));
    return get_until(engine("sim::Mailbox::get_for").now() + d);
  }
  /// Waits until `deadline` for a message; throws sim::Timeout.
  T get_until(Time deadline) {
    Engine& e = engine("sim::Mailbox::get");
    for (;;) {
      if (!items_.empty()) return take();
      if (e.now() >= deadline) throw Timeout();
      const WaitHandle h = e.prepare_wait("sim::Mailbox::get");
      waiters_.push_back(h);
      if (deadline != kNever) e.wake_at(h, deadline);
      {
        // Killed while waiting: if a put had already chosen this receiver, hand its notice
        // on. A guard, not catch and rethrow: every run ends by killing its server loops
        // here, and a rethrow would unwind each stack a second time.
        struct OnKill {
          Mailbox* box;
          WaitHandle h;
          bool waiting = true;
          ~OnKill() {
            if (waiting && !box->forget(h)) box->notify_one();
          }
        } on_kill{this, h};
        e.wait(h, WaitInfo{"Mailbox::get", &name_, deadline});
        on_kill.waiting = false;
      }
      forget(h);
    }
  }

 private:
  T take() {
    T value = std::move(items_.front());
    items_.pop_front();
    return value;
  }

  // Wakes the longest-waiting receiver whose wait is still current.
  void notify_one() {
    while (!waiters_.empty()) {
      const WaitHandle h = waiters_.front();
      waiters_.pop_front();
      Engine* e = Engine::current();
      if (e != nullptr && e->is_waiting(h)) {
        e->wake(h);
        return;
      }
    }
  }

  // Removes `h` from the waiters; false if a put had already taken it off.
  bool forget(const WaitHandle& h) {
    if (waiters_.empty()) return false;
    auto it = std::find(waiters_.begin(), waiters_.end(), h);
    if (it == waiters_.end()) return false;
    waiters_.erase(it);
    return true;
  }

  std::string name_;
  std::size_t capacity_;
  std::deque<T> items_;
  std::deque<WaitHandle> waiters_;
};

}  // namespace sim
