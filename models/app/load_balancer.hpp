#pragma once
// Spreads requests across app servers: at random, round-robin, or sticky by key (the
// same key always reaches the same server, as with consistent hashing on a user id).
// Sticky routing is what makes a per-node mutex (`synchronized`) exclude retries of
// one key (docs/models.md, Application patterns). A server taken out of service (drained by a
// rolling deploy) gets no new request; its keys go to the next server in service.

#include <cstdint>
#include <vector>

#include "models/app/server.hpp"

namespace models {

enum class Balance { random, round_robin, sticky };
const char* to_string(Balance balance);

class LoadBalancer {
 public:
  LoadBalancer(sim::Engine& engine, std::vector<AppServer*> servers, Balance balance);

  /// The server for the next request with `key`: among those in service, when some are out.
  AppServer& pick(std::uint64_t key);
  /// Takes `server` out of service (a rolling deploy drains it: it gets no new request) or
  /// back in. With every server out, requests go to them all as before.
  void set_in_service(const AppServer& server, bool in);
  const std::vector<AppServer*>& servers() const { return servers_; }
  Balance balance() const { return balance_; }

 private:
  std::vector<AppServer*> servers_;
  Balance balance_;
  sim::Stream stream_;
  std::size_t next_ = 0;
  std::vector<bool> out_;  // per server: taken out of service
  std::size_t out_count_ = 0;
};

}  // namespace models
