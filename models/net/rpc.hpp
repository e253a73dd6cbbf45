#pragma once
// Request/reply over the simulated network, with a caller-side timeout.
//
// The request travels one link, the server acts, the reply travels back on the reverse
// link. Either message can be lost or late: a caller that times out does not know whether
// the server acted (the root of the production case, sources/003 section 2). A
// reply arriving after the caller gave up is dropped unread.

#include <concepts>
#include <cstdint>
#include <tuple>
#include <optional>
#include <string>
#include <utility>

#include "models/net/network.hpp"

namespace models {

/// A message type told in a trial's call log: it has a `call_text` overload (call_log.hpp).
template <class T>
concept LoggedRequest = requires(const T& message) {
  { call_text(message) } -> std::convertible_to<std::string>;
};
/// A reply type told in the call log: it has a `reply_text` overload.
template <class T>
concept LoggedReply = requires(const T& reply) {
  { reply_text(reply) } -> std::convertible_to<std::string>;
};

/// Who made a call, as the call log names it: the calling process, unless the request names
/// its caller (an overload of call_caller in its namespace).
template <class Req>
std::string call_caller(const Req&) {
  return sim::this_process_name();
}

/// The client operation a request is an attempt of, and which attempt, as the call log keeps
/// them: none ({-1, 0}) unless the request's type says (an overload of call_attempt).
template <class Req>
std::pair<std::int64_t, std::uint32_t> call_attempt(const Req&) {
  return {-1, 0};
}

/// How a server answers one request, once, over the network back to its caller.
template <class Resp>
class ReplyTo {
 public:
  ReplyTo(Network& net, sim::NodeId server, sim::NodeId caller, sim::Promise<Resp> promise, std::size_t call = CallLog::kNone)
      : net_(&net), server_(server), caller_(caller), promise_(std::move(promise)), call_(call) {}

  /// Sends `response` to the caller (it may be lost or arrive after the caller gave up).
  void send(Resp response) {
    std::size_t call = CallLog::kNone;
    if (CallRecord* record = logged()) {
      record->answered = net_->engine().now();
      if constexpr (LoggedReply<Resp>) record->reply = reply_text(response);
      call = call_;
    }
    net_->send(server_, caller_, [net = net_, call, promise = promise_, response = std::move(response)]() mutable {
      if (call != CallLog::kNone && net->calls() != nullptr)
        if (CallRecord* record = net->calls()->find(call)) record->returned = net->engine().now();
      if (!promise.satisfied()) promise.set_value(std::move(response));
    });
  }
  /// The request reached the server's node (try_call's delivery marks it in the call log).
  void arrived() {
    if (CallRecord* record = logged()) record->arrived = net_->engine().now();
  }
  /// The calling process takes the request up (an app server's worker out of its queue): the
  /// call log names it as the callee from now on.
  void taken() {
    if (CallRecord* record = logged()) {
      record->callee = sim::this_process_name();
      record->taken = net_->engine().now();
    }
  }
  sim::NodeId caller() const { return caller_; }

 private:
  CallRecord* logged() const {
    return call_ != CallLog::kNone && net_->calls() != nullptr ? net_->calls()->find(call_) : nullptr;
  }

  Network* net_;
  sim::NodeId server_;
  sim::NodeId caller_;
  sim::Promise<Resp> promise_;
  std::size_t call_;  // in the network's call log; kNone: not kept
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
  std::size_t call = CallLog::kNone;
  if constexpr (LoggedRequest<Req>)
    if (CallLog* log = net.calls())
      if ((call = log->open(net.engine().node_name(from), call_caller(request), net.engine().node_name(to), call_text(request),
                            net.engine().now())) != CallLog::kNone) {
        CallRecord& record = *log->find(call);
        std::tie(record.operation, record.attempt) = call_attempt(request);
      }
  net.send(from, to, [reply = ReplyTo<Resp>(net, to, from, std::move(promise), call), request = std::move(request),
                      arrive = std::move(arrive)]() mutable {
    reply.arrived();
    arrive(std::move(request), std::move(reply));
  });
  std::optional<Resp> reply = timeout == kNoTimeout ? answer.try_get_until(sim::kNever) : answer.try_get_for(timeout);
  if (!reply && call != CallLog::kNone)
    if (CallRecord* record = net.calls()->find(call)) record->gave_up = net.engine().now();
  return reply;
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
                        [&server](Req&& r, ReplyTo<Resp>&& reply) { server.accept(std::move(r), std::move(reply)); });
}
template <class Resp, class Server, class Req>
Resp call_server(Network& net, sim::NodeId from, Server& server, Req request, sim::Duration timeout) {
  std::optional<Resp> reply = try_call_server<Resp>(net, from, server, std::move(request), timeout);
  if (!reply) throw sim::Timeout();
  return std::move(*reply);
}

}  // namespace models
