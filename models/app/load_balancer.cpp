#include "models/app/load_balancer.hpp"

namespace models {
namespace {
// splitmix64's finaliser: spreads consecutive keys over the servers.
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
}  // namespace

const char* to_string(Balance balance) {
  switch (balance) {
    case Balance::random: return "random";
    case Balance::round_robin: return "round-robin";
    case Balance::sticky: return "sticky";
  }
  return "?";
}

LoadBalancer::LoadBalancer(sim::Engine& engine, std::vector<AppServer*> servers, Balance balance)
    : servers_(std::move(servers)), balance_(balance), stream_(engine.stream("load-balancer")) {
  if (servers_.empty()) throw sim::UsageError("models::LoadBalancer: needs at least one app server");
}

AppServer& LoadBalancer::pick(std::uint64_t key) {
  switch (balance_) {
    case Balance::random: return *servers_[stream_.choose(servers_.size())];
    case Balance::round_robin: return *servers_[next_++ % servers_.size()];
    case Balance::sticky: return *servers_[mix(key) % servers_.size()];
  }
  return *servers_.front();
}

}  // namespace models
