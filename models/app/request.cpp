#include "models/app/request.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <charconv>
#include <iterator>

namespace models {

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::none: return "none";
    case ErrorKind::timeout: return "timeout";
    case ErrorKind::rejected: return "rejected";
    case ErrorKind::duplicate_key: return "duplicate_key";
    case ErrorKind::deadlock: return "deadlock";
    case ErrorKind::lock_wait_timeout: return "lock_wait_timeout";
    case ErrorKind::autoinc_failed: return "autoinc_failed";
    case ErrorKind::lock_busy: return "lock_busy";
    case ErrorKind::dropped: return "dropped";
    case ErrorKind::fenced: return "fenced";
    case ErrorKind::internal: return "internal";
    case ErrorKind::session_expired: return "session_expired";
    case ErrorKind::server_error: return "server_error";
    case ErrorKind::business: return "business";
  }
  return "?";
}

std::string call_text(const Request& r) { return fmt::format("op {} attempt {} (key {})", r.operation, r.attempt, r.key); }

std::string call_caller(const Request& r) { return fmt::format("client {}", r.client); }

std::pair<std::int64_t, std::uint32_t> call_attempt(const Request& r) {
  return {static_cast<std::int64_t>(r.operation), r.attempt};
}

std::string Origin::text() const {
  // Written on the stack and copied out once: formatted straight into a string, the string
  // grows piece by piece (a strategy names its origin at each connection and lock).
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), FMT_COMPILE("{} worker {}, client {}, op {} attempt {}"), server, worker, client,
                 operation, attempt);
  return fmt::to_string(out);
}

namespace {

// Reads `word` and then a number from the front of `text`, leaving what follows.
template <class N>
bool take(std::string_view& text, std::string_view word, N& number) {
  if (!text.starts_with(word)) return false;
  text.remove_prefix(word.size());
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc() || end == text.data()) return false;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  return true;
}

}  // namespace

std::optional<Origin> Origin::read(std::string_view text) {
  const auto at = text.find(" worker ");
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  Origin o;
  o.server = std::string(text.substr(0, at));
  text.remove_prefix(at);
  if (!take(text, " worker ", o.worker) || !take(text, ", client ", o.client) || !take(text, ", op ", o.operation) ||
      !take(text, " attempt ", o.attempt) || !text.empty())
    return std::nullopt;
  return o;
}

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
