#include "models/redis/client.hpp"

namespace models::redis {

Client::Client(Network& net, Node& from, Server& server, sim::Duration timeout)
    : net_(net), from_(from), server_(&server), timeout_(timeout) {}
Client::Client(Network& net, Node& from, Sentinel& sentinel, sim::Duration timeout)
    : net_(net), from_(from), sentinel_(&sentinel), timeout_(timeout) {}

redis::Reply Client::run(const Command& command, sim::Duration timeout) {
  return call_server<redis::Reply>(net_, from_.id(), target(), command, timeout);
}

}  // namespace models::redis
