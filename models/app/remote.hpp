#pragma once
// Another service the handler calls (a wallet service creating a wallet for the new
// account, say): it records what it was asked to create, keyed by the caller's id, and
// answers after a service time. A caller that times out cannot tell whether the record was
// made: it usually was.

#include <map>
#include <set>

#include "models/net/rpc.hpp"
#include "models/node/node.hpp"

namespace models {

struct RemoteServiceConfig {
  sim::Distribution service = sim::lognormal_median(std::chrono::milliseconds(20), 0.8);
};

class RemoteService {
 public:
  RemoteService(Network& net, Node& node, RemoteServiceConfig config = {});
  /// Creates the record for `id` (again: nothing new) from `from`; throws sim::Timeout
  /// when no answer comes within `timeout`.
  void create(sim::NodeId from, std::int64_t id, sim::Duration timeout);
  void accept(std::int64_t id, ReplyTo<bool> reply);
  Node& node() const { return node_; }
  /// The ids it has records for (for checkers).
  const std::set<std::int64_t>& records() const { return records_; }

 private:
  Network& net_;
  Node& node_;
  RemoteServiceConfig config_;
  sim::Stream stream_;
  std::set<std::int64_t> records_;
};

}  // namespace models
