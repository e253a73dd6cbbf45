#include "models/app/request.hpp"

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

}  // namespace models
