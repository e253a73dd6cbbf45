#pragma once
// What clients send to app servers and what they get back.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "sim/sim.hpp"

namespace models {

/// How an attempt failed, as the client sees it. Traces hold a kind by its number: a new one goes last.
enum class ErrorKind : std::uint8_t {
  none,
  timeout,            // no reply within the attempt's timeout
  rejected,           // the server's accept queue was full
  duplicate_key,      // MySQL 1062
  deadlock,           // MySQL 1213, the transaction was rolled back
  lock_wait_timeout,  // MySQL 1205
  lock_busy,          // a lock service said another holder has it
  dropped,            // the server chose to drop the request (busy key)
  fenced,             // the storage refused the write: a later lock holder's token was seen
  internal,           // anything else the handler reports
  autoinc_failed,     // MySQL 1467: a deadlock's victim that waited for the AUTO-INC lock, rolled back
  session_expired,    // the lock service's session ended under the call (ZooKeeper's SessionExpired, its node gone)
  server_error,       // another error of the database the handler let through: Response::code names it (1690, 40001)
  business,           // an answer of the strategy's own (a seat already taken): Response::code names it
};
const char* to_string(ErrorKind kind);

/// One attempt of one logical operation ("bind OpenID `key` to device `value`").
struct Request {
  std::uint64_t operation = 0;  // the logical operation, the same on every attempt
  std::uint32_t attempt = 1;    // 1 for the first
  std::uint32_t client = 0;
  std::uint64_t key = 0;
  std::uint64_t value = 0;
  sim::Time sent;               // true time the attempt left the client
};

/// Who a connection or a lock holder is while an app server's worker works on a client's
/// attempt, as connections and lock records name it: "app-1 worker 4, client 7, op 7 attempt 1"
/// (`text()`). Other origins are a process's own name ("s1", "cleanup job", "DBA").
struct Origin {
  std::string server;          // "app-1"
  std::uint32_t worker = 0;    // from 1
  std::uint32_t client = 0;
  std::uint64_t operation = 0;
  std::uint32_t attempt = 0;
  std::string text() const;
  /// The origin `text` names, where `text()` wrote it; none for a process's own name.
  static std::optional<Origin> read(std::string_view text);
  bool operator==(const Origin&) const = default;
};

/// Where time went: for one attempt on the server, its waits (the other parts stay zero);
/// for a logical operation, every part, summing to its latency. Waits are true (simulated)
/// time, never a node's clock, so that they add up across nodes.
struct TimeSpent {
  sim::Duration queue{};         // in the app server's accept queue, waiting for a worker
  sim::Duration pool{};          // waiting for a pooled database connection
  sim::Duration db_lock{};       // statements waiting for row, gap and insert-intention locks
  sim::Duration lock_service{};  // acquiring locks: lock-service calls and their retry loops, lock tables, mutexes
  sim::Duration timed_out{};     // attempts the client gave up on (no answer in time): where it went is unknown
  sim::Duration backoff{};       // the client sleeping between attempts
  sim::Duration service_network{};  // the rest: handler work, statements and commands served, network, pauses

  /// Every part: for an operation, its latency.
  sim::Duration total() const { return queue + pool + db_lock + lock_service + timed_out + backoff + service_network; }
  /// The server's waits, the parts an answered attempt brings back.
  sim::Duration waits() const { return queue + pool + db_lock + lock_service; }
  bool operator==(const TimeSpent&) const = default;
};

/// Adds the time from its construction to its end to one part of `spent`, less what the other
/// parts gained meanwhile: a wait measured inside another (a pool or row-lock wait inside a
/// lock acquire) counts once, as the inner one, so the parts never overlap.
class TimeSpentIn {
 public:
  TimeSpentIn(TimeSpent& spent, sim::Duration TimeSpent::*part);
  ~TimeSpentIn();
  TimeSpentIn(const TimeSpentIn&) = delete;
  TimeSpentIn& operator=(const TimeSpentIn&) = delete;

 private:
  TimeSpent& spent_;
  sim::Duration TimeSpent::*part_;
  sim::Time start_;
  sim::Duration before_;  // spent_.total() at the start
};

struct Response {
  ErrorKind error = ErrorKind::none;
  /// server_error: the server's code ("1690", "40001"); business: the answer's name ("seat_taken").
  std::string code{};
  /// The attempt's waits on the server (queue, pool, db_lock, lock_service), set by the AppServer.
  TimeSpent time{};
  bool ok() const { return error == ErrorKind::none; }
};

// How a trial's call log tells an attempt (net/call_log.hpp): "op 7 attempt 2 (key 3)" from
// "client 7", answered "ok" or with its error.
std::string call_text(const Request& request);
std::string call_caller(const Request& request);
std::pair<std::int64_t, std::uint32_t> call_attempt(const Request& request);
std::string reply_text(const Response& response);

}  // namespace models
