#include "models/app/load_balancer.hpp"

#include <algorithm>

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
  out_.assign(servers_.size(), false);
}

void LoadBalancer::set_in_service(const AppServer& server, bool in) {
  const auto it = std::find(servers_.begin(), servers_.end(), &server);
  if (it == servers_.end()) throw sim::UsageError("models::LoadBalancer: not one of its servers: " + server.name());
  const auto i = static_cast<std::size_t>(it - servers_.begin());
  if (out_[i] == !in) return;
  out_[i] = !in;
  out_count_ += in ? -1 : 1;
}

AppServer& LoadBalancer::pick(std::uint64_t key) {
  if (out_count_ > 0 && out_count_ < servers_.size()) {
    const std::size_t serving = servers_.size() - out_count_;
    // The k-th server in service, k counted as the policy counts over all of them.
    const auto in_service = [&](std::size_t k) -> AppServer& {
      for (std::size_t i = 0;; i = (i + 1) % servers_.size())
        if (!out_[i] && k-- == 0) return *servers_[i];
    };
    switch (balance_) {
      case Balance::random: return in_service(stream_.choose(serving));
      case Balance::round_robin: return in_service(next_++ % serving);
      case Balance::sticky: return in_service(mix(key) % serving);
    }
  }
  switch (balance_) {
    case Balance::random: return *servers_[stream_.choose(servers_.size())];
    case Balance::round_robin: return *servers_[next_++ % servers_.size()];
    case Balance::sticky: return *servers_[mix(key) % servers_.size()];
  }
  return *servers_.front();
}

}  // namespace models
