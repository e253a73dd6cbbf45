#include "models/app/remote.hpp"

namespace models {

RemoteService::RemoteService(Network& net, Node& node, RemoteServiceConfig config)
    : net_(net), node_(node), config_(std::move(config)), stream_(node.engine().stream(node.name() + ".remote")) {}

void RemoteService::create(sim::NodeId from, std::int64_t id, sim::Duration timeout) {
  call_server<bool>(net_, from, *this, id, timeout);
}

void RemoteService::accept(std::int64_t id, ReplyTo<bool> reply) {
  // Requests are served concurrently: each is recorded, then answered after its service time.
  records_.insert(id);
  node_.engine().after(config_.service.sample_duration(stream_), node_.id(),
                       [reply = std::move(reply)]() mutable { reply.send(true); });
}

}  // namespace models
