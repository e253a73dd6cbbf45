#pragma once
// What clients send to app servers and what they get back.

#include <cstdint>

#include "sim/sim.hpp"

namespace models {

/// How an attempt failed, as the client sees it.
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

struct Response {
  ErrorKind error = ErrorKind::none;
  bool ok() const { return error == ErrorKind::none; }
};

}  // namespace models
