#include "models/redis/command.hpp"

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

}  // namespace models::redis
