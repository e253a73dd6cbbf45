#include "models/redis/redlock.hpp"

#include <fmt/format.h>

#include <cmath>

namespace models::redis {

Redlock::Redlock(Network& net, Node& client_node, std::vector<Server*> masters, RedlockConfig config)
    : node_(client_node), config_(config), stream_(client_node.engine().stream(client_node.name() + ".redlock")) {
  if (masters.empty()) throw sim::UsageError("models::redis::Redlock: needs at least one master");
  for (Server* m : masters) clients_.emplace_back(net, client_node, *m, config_.node_timeout);
}

bool Redlock::lock_instance(Client& client, const std::string& resource, const std::string& value) {
  ++commands_sent_;
  try {
    return client.run(Command::set_nx_px(resource, value, config_.ttl)).kind == Reply::Kind::ok;
  } catch (const sim::Timeout&) {
    return false;
  }
}

void Redlock::unlock_all(const std::string& resource, const std::string& value) {
  for (Client& c : clients_) {
    ++commands_sent_;
    try {
      c.run(Command::cas_del(resource, value));
    } catch (const sim::Timeout&) {
    }
  }
}

Redlock::Lock Redlock::lock(const std::string& resource) {
  const sim::Duration drift =
      sim::Duration{std::llround(static_cast<double>(config_.ttl.count()) * config_.clock_drift_factor)} + config_.drift_extra;
  for (int attempt = 0; attempt < config_.retry_count; ++attempt) {
    const std::string value = fmt::format("{:016x}", stream_.bits());
    const sim::Time start = node_.clock().now();
    int granted = 0;
    for (Client& c : clients_) granted += lock_instance(c, resource, value) ? 1 : 0;
    const sim::Duration validity = config_.ttl - (node_.clock().now() - start) - drift;
    if (granted >= quorum() && validity > sim::Duration::zero()) return Lock{true, resource, value, validity, granted};
    unlock_all(resource, value);
    sim::sleep_for(sim::Duration{static_cast<std::int64_t>(stream_.choose(static_cast<std::uint64_t>(config_.retry_delay_max.count()) + 1))});
  }
  return Lock{false, resource, {}, {}, 0};
}

void Redlock::unlock(const Lock& lock) {
  if (lock.held) unlock_all(lock.resource, lock.value);
}

}  // namespace models::redis
