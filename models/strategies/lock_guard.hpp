#pragma once
// A held lock, released when its scope ends: the `finally { unlock(); }` of the articles'
// code as a scoped object (C++'s std::lock_guard, Java's try-with-resources).
//
// The guard releases on every way out of the scope: the strategy's own unlock() on the
// normal path, or its destructor when the scope is left early or by an exception (a MySQL
// error, a timeout, a KeeperException). A crash releases nothing: the holder's process is
// gone, and only the lock service's expiry (or nothing) frees the lock. Its checker hold
// ends with the process either way.
//
// An unlock is a call over the network and can fail itself. In Java an exception thrown in
// `finally` replaces the one that was propagating; a destructor cannot throw while an
// exception unwinds, so it leaves its failure in `failed_unlock`, and the handler that
// catches the body's error (Strategy::handle) rethrows it in its place.

#include <cstdint>
#include <exception>
#include <functional>

#include "models/checkers/locks.hpp"

namespace models::strategies {

class LockGuard {
 public:
  /// Removes the lock at its service; ends the checker hold first (the holder stops
  /// believing before it sends the unlock).
  using Unlock = std::function<void(checkers::Hold&)>;

  /// Where the lock lives: at a lock service, where a crash of the holder leaves it, or in
  /// the holder's own process (a local mutex), which a crash frees with the process.
  enum class Kept { at_service, in_process };

  /// A lock held from now on, reported to the checkers as `hold` (inactive for locks no
  /// checker judges). `token` is the lock's fencing token where the service gives one.
  LockGuard(checkers::Hold hold, Unlock unlock, std::exception_ptr* failed_unlock, std::int64_t token = 0,
            Kept kept = Kept::at_service)
      : hold_(std::move(hold)), unlock_(std::move(unlock)), failed_unlock_(failed_unlock), token_(token), kept_(kept) {}
  LockGuard(LockGuard&& other) noexcept;
  LockGuard& operator=(LockGuard&&) = delete;
  LockGuard(const LockGuard&) = delete;
  LockGuard& operator=(const LockGuard&) = delete;
  /// Unlocks unless unlocked already or the holder's process was killed (then only a lock
  /// kept in the process goes, with it).
  ~LockGuard();

  /// Unlocks now; throws what the unlock call throws. Once: a failed unlock is not retried.
  void unlock();
  /// Unlocks now the way `instead` does rather than the acquiring client's way (a script's
  /// choice of a plain DEL over the compare-and-delete it acquired for); throws what it throws.
  void unlock(const Unlock& instead);
  bool held() const { return static_cast<bool>(unlock_); }

  /// The checker's record of this hold: critical-section steps and writes go there.
  checkers::Hold& hold() { return hold_; }
  /// The fencing token the lock service gave (a ZooKeeper zxid, an etcd revision); 0: none.
  std::int64_t token() const { return token_; }

 private:
  checkers::Hold hold_;
  Unlock unlock_;
  std::exception_ptr* failed_unlock_;
  std::int64_t token_;
  Kept kept_;
};

}  // namespace models::strategies
