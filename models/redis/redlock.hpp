#pragma once
// The Redlock client, as the reference implementation redlock-rb runs it (docs/models.md,
// Lock services and Figures the models take): N independent masters; one random value per
// attempt; SET resource value NX PX ttl on each master in turn, each with a short timeout;
// the lock is held if a quorum (N/2 + 1) granted it and the validity, ttl - elapsed - drift
// with drift = ttl x 0.01 + 2 ms, is still positive; otherwise unlock every master and
// retry after a random delay. Elapsed time is read from the client node's clock. There is
// no fencing token.

#include <string>
#include <vector>

#include "models/redis/client.hpp"

namespace models::redis {

struct RedlockConfig {
  sim::Duration ttl = std::chrono::seconds(10);
  sim::Duration node_timeout = std::chrono::milliseconds(50);
  int retry_count = 3;
  sim::Duration retry_delay_max = std::chrono::milliseconds(200);
  double clock_drift_factor = 0.01;
  sim::Duration drift_extra = std::chrono::milliseconds(2);
};

class Redlock {
 public:
  struct Lock {
    bool held = false;
    std::string resource;
    std::string value;
    sim::Duration validity{};  // how long the holder may assume it holds the lock
    int granted = 0;           // masters that granted it on the successful attempt
  };

  Redlock(Network& net, Node& client_node, std::vector<Server*> masters, RedlockConfig config = {});

  /// Tries up to retry_count times; the result says whether the lock is held.
  Lock lock(const std::string& resource);
  /// Deletes the lock on every master where it still has this lock's value.
  void unlock(const Lock& lock);
  int quorum() const { return static_cast<int>(clients_.size()) / 2 + 1; }
  /// Commands sent to the masters so far, answered or not.
  std::uint64_t commands_sent() const { return commands_sent_; }

 private:
  bool lock_instance(Client& client, const std::string& resource, const std::string& value);
  void unlock_all(const std::string& resource, const std::string& value);

  Node& node_;
  std::vector<Client> clients_;
  RedlockConfig config_;
  sim::Stream stream_;
  std::uint64_t commands_sent_ = 0;
};

}  // namespace models::redis
