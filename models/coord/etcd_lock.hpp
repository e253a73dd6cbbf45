#pragma once
// etcd's concurrency.Mutex on the etcd-like store (docs/models.md, Lock services).
//
// Each contender puts `<prefix><lease id in hex>` bound to its session's lease, unless it is
// already there; the owner is the key with the lowest create revision; a waiter watches
// the deletion of the key created just before its own, then looks again. The holder's
// create revision is its fencing token, and `still_owner()` is the compare the holder puts
// in its transactions (IsOwner). The lock lasts as long as the lease: a holder paused past
// the TTL loses it to the next waiter and, if it writes without the compare, writes stale.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "models/coord/etcd.hpp"

namespace models::etcd {

class Mutex {
 public:
  /// How Unlock deletes the key: by its name, as etcd's Mutex.Unlock does (a retry after a lost
  /// reply then deletes whatever key of that name is there, a later lock of the same session
  /// included: etcd-io/etcd#22082), or only while the key still has the create revision we
  /// locked with (the compare of the fix proposed in etcd-io/etcd#22115).
  enum class Unlock { by_name, if_owner };

  Mutex(Client& client, std::int64_t lease, std::string prefix);

  /// Waits for the lock, at most `wait` (on the client's clock) if given; true when held. On giving
  /// up, deletes its key. False at once when the lease is already gone.
  bool lock(std::optional<sim::Duration> wait = std::nullopt);
  /// Deletes our key; throws sim::Timeout when no reply comes, and then stays unlockable, as
  /// Mutex.Unlock keeps myKey and myRev after an error.
  void unlock(Unlock how = Unlock::by_name);

  const std::string& key() const { return key_; }
  Client& client() const { return client_; }
  /// Our key's create revision: higher for every later holder.
  std::int64_t token() const { return revision_; }
  /// A compare that holds only while we still own the lock.
  Compare still_owner() const { return {Compare::Target::create_revision, Compare::Result::equal, key_, revision_}; }

 private:
  Client& client_;
  std::int64_t lease_;
  std::string prefix_;
  std::string key_;
  std::int64_t revision_ = 0;
};

/// What a caller does after an Unlock that got no reply: calls it again from a process of its
/// own on the client's node, every `every` on the node's clock, until one gets a reply or
/// `tries` have gone unanswered. `before_each` runs as each try is sent (for the checkers).
void retry_unlock_in_background(std::shared_ptr<Mutex> mutex, Mutex::Unlock how, sim::Duration every, int tries,
                                std::function<void()> before_each = {});

}  // namespace models::etcd
