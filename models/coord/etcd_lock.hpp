#pragma once
// etcd's concurrency.Mutex on the etcd-like store (docs/models.md, Lock services).
//
// Each contender puts `<prefix><lease id in hex>` bound to its session's lease, unless it is
// already there; the owner is the key with the lowest create revision; a waiter watches
// the deletion of the key created just before its own, then looks again. The holder's
// create revision is its fencing token, and `still_owner()` is the compare the holder puts
// in its transactions (IsOwner). The lock lasts as long as the lease: a holder paused past
// the TTL loses it to the next waiter and, if it writes without the compare, writes stale.

#include <optional>
#include <string>

#include "models/coord/etcd.hpp"

namespace models::etcd {

class Mutex {
 public:
  Mutex(Client& client, std::int64_t lease, std::string prefix);

  /// Waits for the lock, at most `wait` (on the client's clock) if given; true when held. On giving
  /// up, deletes its key. False at once when the lease is already gone.
  bool lock(std::optional<sim::Duration> wait = std::nullopt);
  void unlock();

  const std::string& key() const { return key_; }
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

}  // namespace models::etcd
