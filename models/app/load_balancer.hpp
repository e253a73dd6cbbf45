#pragma once
// Spreads requests across app servers: at random, round-robin, or sticky by key (the
// same key always reaches the same server, as with consistent hashing on a user id).
// Sticky routing is what makes a per-node mutex (`synchronized`) exclude retries of
// one key (DOMAIN.md, Application patterns).

#include <cstdint>
#include <vector>

#include "models/app/server.hpp"

namespace models {

enum class Balance { random, round_robin, sticky };
const char* to_string(Balance balance);

class LoadBalancer {
 public:
  LoadBalancer(sim::Engine& engine, std::vector<AppServer*> servers, Balance balance);

  /// The server for the next request with `key`.
  AppServer& pick(std::uint64_t key);
  const std::vector<AppServer*>& servers() const { return servers_; }
  Balance balance() const { return balance_; }

 private:
  std::vector<AppServer*> servers_;
  Balance balance_;
  sim::Stream stream_;
  std::size_t next_ = 0;
};

}  // namespace models
