#pragma once
// Failover of a Redis master, as Redis Sentinel does it (docs/models.md, Figures the models
// take: down-after-milliseconds 30 000 by default): the sentinel pings the master; when no
// reply has come for the down-after period it promotes the replica that has applied the
// most writes and points the other servers at it. Writes the old master acknowledged but
// had not yet replicated are lost, which is how a lock granted by the old master can be
// granted again by the new one. Clients ask the sentinel for the current master. The old
// master, once reachable again, is demoted to a replica of the new one.

#include <vector>

#include "models/redis/server.hpp"

namespace models::redis {

struct SentinelConfig {
  sim::Duration down_after = std::chrono::seconds(30);
  sim::Duration ping_interval = std::chrono::seconds(1);
  sim::Duration ping_timeout = std::chrono::milliseconds(500);
};

class Sentinel {
 public:
  /// `servers[0]` is the master at the start; the others are made its replicas.
  Sentinel(Network& net, Node& node, std::vector<Server*> servers, SentinelConfig config = {});
  Sentinel(const Sentinel&) = delete;
  Sentinel& operator=(const Sentinel&) = delete;

  /// Starts the monitoring process.
  void start();
  /// The server clients should talk to now.
  Server& master() const { return *master_; }
  int failovers() const { return failovers_; }

 private:
  bool ping(Server& server);
  void fail_over();

  Network& net_;
  Node& node_;
  std::vector<Server*> servers_;
  SentinelConfig config_;
  Server* master_;
  int failovers_ = 0;
};

}  // namespace models::redis
