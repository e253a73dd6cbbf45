#pragma once
// Lock recipes on the ZooKeeper-like service.
//
// `next_lower` is Curator's InterProcessMutex (docs/models.md, Lock services): create an
// EPHEMERAL_SEQUENTIAL node `_c_<guid>-lock-` under the lock path, list the children
// without a watch, hold the lock if ours has the lowest sequence number, else watch only
// the next-lower node and look again when it goes. A release wakes one waiter. The guid
// finds our node again when a create succeeded but its reply was lost (ZOOKEEPER-1262).
// `herd` is the naive recipe: every waiter watches the lock path's children, so each
// release wakes all N-1 waiters, of which one wins (the herd effect).
// The lock is as good as the session: a holder whose session expires (paused or cut off
// past the session timeout) has lost it, and learns so only on its next call.

#include <optional>
#include <string>

#include "models/coord/zookeeper.hpp"

namespace models::zk {

enum class LockRecipe { next_lower, herd };

class Mutex {
 public:
  Mutex(Client& client, std::string path, LockRecipe recipe = LockRecipe::next_lower);

  /// Waits for the lock, at most `wait` if given. True when held; on giving up, removes
  /// its node. Throws KeeperError if the session is lost meanwhile, sim::Timeout when the
  /// service stops answering.
  bool acquire(std::optional<sim::Duration> wait = std::nullopt);
  /// Deletes our node (already gone with an expired session: nothing to do).
  void release();

  bool held() const { return held_; }
  /// Our node's path while we wait or hold.
  const std::string& node() const { return node_; }
  /// Our node's create zxid: grows with every grant, a fencing token.
  Zxid token() const { return token_; }
  /// Watch events that woke this waiter.
  std::uint64_t wakeups() const { return wakeups_; }

 private:
  std::string create_protected(const std::string& guid);

  Client& client_;
  std::string path_;
  LockRecipe recipe_;
  std::string node_;
  Zxid token_ = 0;
  bool held_ = false;
  std::uint64_t wakeups_ = 0;
};

}  // namespace models::zk
