#include "models/app/request.hpp"

#include <fmt/format.h>

namespace models {

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::none: return "none";
    case ErrorKind::timeout: return "timeout";
    case ErrorKind::rejected: return "rejected";
    case ErrorKind::duplicate_key: return "duplicate_key";
    case ErrorKind::deadlock: return "deadlock";
    case ErrorKind::lock_wait_timeout: return "lock_wait_timeout";
    case ErrorKind::lock_busy: return "lock_busy";
    case ErrorKind::dropped: return "dropped";
    case ErrorKind::fenced: return "fenced";
    case ErrorKind::internal: return "internal";
  }
  return "?";
}

std::string call_text(const Request& r) { return fmt::format("op {} attempt {} (key {})", r.operation, r.attempt, r.key); }

std::string call_caller(const Request& r) { return fmt::format("client {}", r.client); }

std::string reply_text(const Response& r) { return r.ok() ? "ok" : to_string(r.error); }

TimeSpentIn::TimeSpentIn(TimeSpent& spent, sim::Duration TimeSpent::*part)
    : spent_(spent), part_(part), start_(sim::now()), before_(spent.total()) {}

TimeSpentIn::~TimeSpentIn() {
  // A killed process is unwinding: its attempt will never be answered, and the engine may be
  // shutting down.
  if (sim::this_process_killed()) return;
  const sim::Duration elapsed = sim::now() - start_;
  const sim::Duration inner = spent_.total() - before_;
  // Inner waits lie inside this one; were one measured outside, this part would go negative,
  // which the client's check of an operation's parts reports.
  spent_.*part_ += elapsed - inner;
}

}  // namespace models
