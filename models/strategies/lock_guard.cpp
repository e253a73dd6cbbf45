#include "models/strategies/lock_guard.hpp"

#include <utility>

#include "sim/process.hpp"

namespace models::strategies {

LockGuard::LockGuard(LockGuard&& other) noexcept
    : hold_(std::move(other.hold_)),
      unlock_(std::exchange(other.unlock_, nullptr)),
      failed_unlock_(other.failed_unlock_),
      token_(other.token_),
      kept_(other.kept_) {}

void LockGuard::unlock() {
  Unlock unlock = std::exchange(unlock_, nullptr);
  if (unlock) unlock(hold_);
}

void LockGuard::unlock(const Unlock& instead) {
  if (std::exchange(unlock_, nullptr)) instead(hold_);
}

LockGuard::~LockGuard() {
  if (!held()) return;
  if (sim::this_process_killed()) {
    // The node crashed (or the run is over) and the process unwinds: no unlock call is sent
    // (it would wait, and a killed process cannot). A lock in its memory goes with it. The
    // hold ends below either way.
    if (kept_ == Kept::in_process) unlock();
    return;
  }
  try {
    unlock();
  } catch (...) {  // sim::Killed too: the node crashed during the unlock; the handler rethrows it
    if (failed_unlock_ != nullptr) *failed_unlock_ = std::current_exception();
  }
}

}  // namespace models::strategies
