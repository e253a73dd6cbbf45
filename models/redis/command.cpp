#include "models/redis/command.hpp"

#include <fmt/format.h>

#include <chrono>

namespace models::redis {

const char* to_string(Op op) {
  switch (op) {
    case Op::get: return "GET";
    case Op::set: return "SET";
    case Op::del: return "DEL";
    case Op::pexpire: return "PEXPIRE";
    case Op::pttl: return "PTTL";
    case Op::incr: return "INCR";
    case Op::cas_del: return "EVAL compare-and-delete";
    case Op::cas_pexpire: return "EVAL compare-and-pexpire";
    case Op::hlock_acquire: return "EVAL redisson-lock";
    case Op::hlock_renew: return "EVAL redisson-renew";
    case Op::hlock_release: return "EVAL redisson-unlock";
  }
  return "?";
}

bool is_write(Op op) { return op != Op::get && op != Op::pttl; }

std::string call_text(const Command& c) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(c.ttl).count();
  std::string out = fmt::format("{} {}", to_string(c.op), c.key);
  switch (c.op) {
    case Op::set:
      out += " " + c.value;
      if (c.nx) out += " NX";
      if (c.xx) out += " XX";
      if (c.ttl > sim::Duration::zero()) out += fmt::format(" PX {}", ms);
      break;
    case Op::pexpire: out += fmt::format(" {}", ms); break;
    case Op::cas_del: out += " " + c.value; break;
    case Op::cas_pexpire:
    case Op::hlock_acquire:
    case Op::hlock_renew: out += fmt::format(" {} {}", c.value, ms); break;
    case Op::hlock_release: out += " " + c.value; break;
    case Op::get:
    case Op::del:
    case Op::pttl:
    case Op::incr: break;
  }
  return out;
}

std::string reply_text(const Reply& r) {
  switch (r.kind) {
    case Reply::Kind::ok: return "OK";
    case Reply::Kind::nil: return "(nil)";
    case Reply::Kind::integer: return fmt::format("(integer) {}", r.integer);
    case Reply::Kind::bulk: return fmt::format("\"{}\"", r.text);
    case Reply::Kind::error: return "(error) " + r.text;
  }
  return "?";
}

}  // namespace models::redis
