#pragma once
// Request/reply over the simulated network, with a caller-side timeout.
//
// The request travels one link, the server acts, the reply travels back on the reverse
// link. Either message can be lost or late: a caller that times out does not know whether
// the server acted (the root of the production case, ../shared/sources/003 section 2). A
// reply arriving after the caller gave up is dropped unread.

#include <optional>
#include <utility>

#include "models/net/network.hpp"

namespace models {

/// How a server answers one request, once, over the network back to its caller.
template <class Resp>
class ReplyTo {
 public:
  ReplyTo(Network& net, sim::NodeId server, sim::NodeId caller, sim::Promise<Resp> promise)
      : net_(&net), server_(server), caller_(caller), promise_(std::move(promise)) {}

  /// Sends `response` to the caller (it may be lost or arrive after the caller gave up).
  void send(Resp response) {
    net_->send(server_, caller_, [promise = promise_, response = std::move(response)]() mutable {
      if (!promise.satisfied()) promise.set_value(std::move(response));
    });
  }
  sim::NodeId caller() const { return caller_; }

 private:
  Network* net_;
  sim::NodeId server_;
  sim::NodeId caller_;
  sim::Promise<Resp> promise_;
};

/// A call's timeout that never ends (a person at a terminal waits for the answer).
inline constexpr sim::Duration kNoTimeout = sim::Duration::max();

/// Sends `request` from `from` to `to`; on arrival, `arrive(request, reply)` runs on `to`
/// (typically: put it in the server's queue). Waits at most `timeout` for the reply and
/// returns nullopt after that; kNoTimeout waits as long as the reply takes.
template <class Resp, class Req, class Arrive>
std::optional<Resp> try_call(Network& net, sim::NodeId from, sim::NodeId to, Req request, sim::Duration timeout,
                             Arrive arrive) {
  sim::Promise<Resp> promise("reply");
  sim::Future<Resp> answer = promise.get_future();
  net.send(from, to, [reply = ReplyTo<Resp>(net, to, from, std::move(promise)), request = std::move(request),
                      arrive = std::move(arrive)]() mutable { arrive(std::move(request), std::move(reply)); });
  if (timeout == kNoTimeout) return answer.try_get_until(sim::kNever);
  return answer.try_get_for(timeout);
}

/// try_call(), throwing sim::Timeout when no reply came in time.
template <class Resp, class Req, class Arrive>
Resp call(Network& net, sim::NodeId from, sim::NodeId to, Req request, sim::Duration timeout, Arrive arrive) {
  std::optional<Resp> reply = try_call<Resp>(net, from, to, std::move(request), timeout, std::move(arrive));
  if (!reply) throw sim::Timeout();
  return std::move(*reply);
}

/// call() to a server object living on `server.node()` that takes requests with
/// `server.accept(request, reply)`: an app server, a Redis node, the etcd-like store.
template <class Resp, class Server, class Req>
std::optional<Resp> try_call_server(Network& net, sim::NodeId from, Server& server, Req request, sim::Duration timeout) {
  return try_call<Resp>(net, from, server.node().id(), std::move(request), timeout,
                        [&server](Req r, ReplyTo<Resp> reply) { server.accept(std::move(r), std::move(reply)); });
}
template <class Resp, class Server, class Req>
Resp call_server(Network& net, sim::NodeId from, Server& server, Req request, sim::Duration timeout) {
  std::optional<Resp> reply = try_call_server<Resp>(net, from, server, std::move(request), timeout);
  if (!reply) throw sim::Timeout();
  return std::move(*reply);
}

}  // namespace models
