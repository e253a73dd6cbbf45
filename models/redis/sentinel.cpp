#include "models/redis/sentinel.hpp"

#include <fmt/format.h>

namespace models::redis {

Sentinel::Sentinel(Network& net, Node& node, std::vector<Server*> servers, SentinelConfig config)
    : net_(net), node_(node), servers_(std::move(servers)), config_(config) {
  if (servers_.empty()) throw sim::UsageError("models::redis::Sentinel: needs at least one server");
  master_ = servers_.front();
  for (std::size_t i = 1; i < servers_.size(); ++i) master_->add_replica(*servers_[i]);
}

bool Sentinel::ping(Server& server) {
  try {
    const redis::Reply r =
        call_server<redis::Reply>(net_, node_.id(), server, Command::pttl("sentinel:ping"), config_.ping_timeout);
    return r.kind != redis::Reply::Kind::error;
  } catch (const sim::Timeout&) {
    return false;
  }
}

void Sentinel::start() {
  node_.spawn(node_.name() + ".sentinel", [this] {
    sim::Time last_reply = sim::now();
    for (;;) {
      if (ping(*master_)) {
        last_reply = sim::now();
      } else if (sim::now() - last_reply >= config_.down_after) {
        fail_over();
        last_reply = sim::now();
      }
      // A former master that answers again while believing it is a master is demoted.
      for (Server* s : servers_)
        if (s != master_ && s->role() == Role::master && s->node().is_up() && ping(*s)) master_->add_replica(*s);
      sim::sleep_for(config_.ping_interval);
    }
  }, sim::SpawnOptions{.background = true});
}

void Sentinel::fail_over() {
  Server* best = nullptr;
  for (Server* s : servers_)
    if (s != master_ && s->node().is_up() && (best == nullptr || s->applied() > best->applied())) best = s;
  if (best == nullptr) return;
  Server* old = master_;
  best->promote();
  master_ = best;
  ++failovers_;
  node_.engine().record(node_.engine().trace().kind("redis.failover"), best->node().id(), old->node().id());
  for (Server* s : servers_)
    if (s != best && s != old) best->add_replica(*s);
}

}  // namespace models::redis
