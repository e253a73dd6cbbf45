#pragma once
// Redis commands and replies as typed values (no RESP parsing): the subset lock
// strategies use, and the Lua scripts they run as named atomic operations.

#include <cstdint>
#include <string>

#include "sim/sim.hpp"

namespace models::redis {

enum class Op : std::uint8_t {
  get,
  set,          // with nx / xx / ttl
  del,
  pexpire,
  pttl,
  incr,
  cas_del,      // the Lua unlock: if GET key == value then DEL key
  cas_pexpire,  // renewal: if GET key == value then PEXPIRE key ttl
  hlock_acquire,  // Redisson's lock script: take or re-enter the hash lock for owner `value`
  hlock_renew,    // Redisson's watchdog script: PEXPIRE if `value` owns it
  hlock_release,  // Redisson's unlock script: decrement owner's count, DEL at zero
};
const char* to_string(Op op);
/// Whether the command can change the keyspace (and so is persisted and replicated).
bool is_write(Op op);

struct Command {
  Op op = Op::get;
  std::string key{};
  std::string value{};  // SET's value; the expected value or lock owner of the scripts
  bool nx = false;     // SET: only if absent
  bool xx = false;     // SET: only if present
  sim::Duration ttl{};  // SET PX / PEXPIRE / scripts' lease; zero: no expiry

  static Command get(std::string key) { return {.op = Op::get, .key = std::move(key)}; }
  /// SET key value NX PX ttl: the atomic lock acquisition.
  static Command set_nx_px(std::string key, std::string value, sim::Duration ttl) {
    return {.op = Op::set, .key = std::move(key), .value = std::move(value), .nx = true, .ttl = ttl};
  }
  static Command set(std::string key, std::string value, sim::Duration ttl = {}) {
    return {.op = Op::set, .key = std::move(key), .value = std::move(value), .ttl = ttl};
  }
  static Command del(std::string key) { return {.op = Op::del, .key = std::move(key)}; }
  static Command pexpire(std::string key, sim::Duration ttl) { return {.op = Op::pexpire, .key = std::move(key), .ttl = ttl}; }
  static Command pttl(std::string key) { return {.op = Op::pttl, .key = std::move(key)}; }
  static Command incr(std::string key) { return {.op = Op::incr, .key = std::move(key)}; }
  static Command cas_del(std::string key, std::string value) {
    return {.op = Op::cas_del, .key = std::move(key), .value = std::move(value)};
  }
  static Command cas_pexpire(std::string key, std::string value, sim::Duration ttl) {
    return {.op = Op::cas_pexpire, .key = std::move(key), .value = std::move(value), .ttl = ttl};
  }
  static Command hlock(Op op, std::string key, std::string owner, sim::Duration lease) {
    return {.op = op, .key = std::move(key), .value = std::move(owner), .ttl = lease};
  }
};

struct Reply {
  enum class Kind : std::uint8_t { ok, nil, integer, bulk, error };
  Kind kind = Kind::ok;
  std::int64_t integer = 0;
  std::string text{};  // a bulk string, or the error message

  static Reply ok() { return {}; }
  static Reply nil() { return {.kind = Kind::nil}; }
  static Reply number(std::int64_t n) { return {.kind = Kind::integer, .integer = n}; }
  static Reply bulk(std::string s) { return {.kind = Kind::bulk, .text = std::move(s)}; }
  static Reply error(std::string message) { return {.kind = Kind::error, .text = std::move(message)}; }
  bool is_nil() const { return kind == Kind::nil; }
  bool operator==(const Reply&) const = default;
};

// How a trial's call log tells them (net/call_log.hpp), as redis-cli would show them:
// "SET lock:openid:0 app-1-3-7-1 NX PX 10000", answered "OK", "(nil)", "(integer) 1".
std::string call_text(const Command& command);
std::string reply_text(const Reply& reply);

}  // namespace models::redis
