#pragma once
// A Redis client on an app node (Jedis-like: docs/models.md, Figures the models take: 2 s
// timeout): sends one command at a time to a server, or to the master a sentinel names, and
// waits for the reply; a timeout throws sim::Timeout, with no way to know whether the
// command ran.

#include "models/redis/sentinel.hpp"

namespace models::redis {

class Client {
 public:
  Client(Network& net, Node& from, Server& server, sim::Duration timeout = std::chrono::seconds(2));
  Client(Network& net, Node& from, Sentinel& sentinel, sim::Duration timeout = std::chrono::seconds(2));

  /// Runs `command` on the server; throws sim::Timeout when no reply comes in time.
  redis::Reply run(const Command& command) { return run(command, timeout_); }
  redis::Reply run(const Command& command, sim::Duration timeout);

  Server& target() const { return sentinel_ != nullptr ? sentinel_->master() : *server_; }
  Node& node() const { return from_; }

 private:
  Network& net_;
  Node& from_;
  Server* server_ = nullptr;
  Sentinel* sentinel_ = nullptr;
  sim::Duration timeout_;
};

}  // namespace models::redis
