#pragma once
// Exceptions the engine raises into process code and to the caller of Engine::run().

#include <stdexcept>
#include <string>

namespace sim {

/// A timed wait (Mailbox::get_for, Future::get_for, ...) reached its deadline.
class Timeout : public std::runtime_error {
 public:
  Timeout() : std::runtime_error("sim::Timeout: deadline reached") {}
};

/// Thrown at a process's wait point when its node crashes or the process is killed.
/// Deliberately not a std::exception, so `catch (const std::exception&)` in model
/// code cannot swallow a crash; a `catch (...)` must rethrow it.
struct Killed {};

/// Engine::run() was interrupted from outside, by EngineConfig::interrupt (a run's --time
/// deadline): the run did not finish, and nothing of it is a result.
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("sim::Interrupted: the run was interrupted from outside") {}
};

/// The engine was misused (waiting outside a process, a negative duration, a zero budget...).
/// The message names the call.
class UsageError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// A process body let an exception escape; run() rethrows it with the process named.
class ProcessError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A replayed run asked a question the record cannot answer the way it was recorded.
class ReplayDivergence : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace sim
