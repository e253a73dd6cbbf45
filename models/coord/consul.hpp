#pragma once
// A Consul-like key-value store with sessions, for locks: one server (the leader of a healthy
// cluster), sessions with a TTL and the health of the node that created them, keys acquired
// and released by a session, and the lock-delay that Consul took from Chubby.
//
// Imitates Consul's KV and session endpoints as its documentation describes them
// (docs/models.md, Consul; not checked against a server, as Debian ships none):
// - a session is invalidated when its TTL passes without a renewal (the server allows twice
//   the TTL: Consul's SessionTTLMultiplier), when its node's health check fails (the node is
//   down), or when it is destroyed;
// - `acquire` takes a key for a session if no session holds it, and raises the key's
//   LockIndex when the holder changes; a key held by another session, or inside its
//   lock-delay, is refused (false, not an error); an invalidated session is an error;
// - an invalidated session's keys are released (behavior "release") or deleted ("delete"),
//   and each is then refused to every session for the session's lock-delay (at most 60 s);
//   a key released with `release` has no lock-delay;
// - a blocking GET (`wait_index`) answers when the key's ModifyIndex passes the index, or
//   after the wait.
// The LockIndex never goes back for a key, so (key, LockIndex) is a sequencer, Consul's
// fencing token.

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/net/rpc.hpp"
#include "models/node/node.hpp"

namespace models::consul {

/// The bounds Consul sets: a session TTL from 10 s (session_ttl_min) to 24 h, a lock-delay
/// of at most 60 s.
inline constexpr sim::Duration kMinTtl = std::chrono::seconds(10);
inline constexpr sim::Duration kMaxTtl = std::chrono::hours(24);
inline constexpr sim::Duration kMaxLockDelay = std::chrono::seconds(60);

/// What happens to a session's keys when it is invalidated.
enum class Behavior { release, del };

/// A session as PUT /v1/session/create takes it.
struct SessionOptions {
  sim::Duration ttl{};                                   // zero: none; else kMinTtl .. kMaxTtl
  sim::Duration lock_delay = std::chrono::seconds(15);   // Consul's default; 0 .. kMaxLockDelay
  Behavior behavior = Behavior::release;
  bool node_check = true;  // bound to the creating node's health (serfHealth), as by default
};

/// A request the server refused, as the API client returns it: "Unexpected response code: 500
/// (invalid session \"3\")".
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct KeyValue {
  std::string key{};
  std::string value{};
  std::uint64_t create_index = 0;
  std::uint64_t modify_index = 0;
  std::uint64_t lock_index = 0;  // acquisitions by a new session
  std::uint64_t session = 0;     // the holder; 0: none
  bool operator==(const KeyValue&) const = default;
};

struct Request {
  enum class Kind { create_session, renew, destroy, get, put, del, acquire, release } kind = Kind::get;
  std::string key{};
  std::string value{};
  std::uint64_t session = 0;
  SessionOptions options{};         // create_session
  std::uint64_t wait_index = 0;     // get: block until the key's ModifyIndex passes it (0: answer now)
  sim::Duration wait{};             // get: ...or this much has passed
};

struct Response {
  bool ok = true;            // acquire, release: taken, let go; renew: the session exists
  std::string error{};       // the server refused the request: "invalid session", ...
  std::uint64_t index = 0;   // the store's index (X-Consul-Index)
  std::uint64_t session = 0; // create_session: the new session's id
  std::optional<KeyValue> kv{};
  bool missing = false;      // get: no such key (404)
};

// How a trial's call log tells them, as the HTTP API's paths do: "PUT /v1/kv/lock?acquire=3",
// answered "true, index 7".
std::string call_text(const Request& request);
std::string reply_text(const Response& response);

struct ServerConfig {
  sim::Distribution service = sim::fixed(std::chrono::microseconds(200));  // a committed Raft write, roughly
  /// How often the leader looks for sessions to invalidate and blocking queries to answer.
  sim::Duration tick = std::chrono::milliseconds(100);
  /// How long a node is down before its health check turns critical (gossip's detection).
  sim::Duration failure_detection = std::chrono::seconds(2);
};

class Server {
 public:
  Server(Network& net, Node& node, ServerConfig config = {});
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  void start();
  void accept(Request request, ReplyTo<Response> reply);
  Node& node() const { return node_; }
  std::size_t queued() const { return inbox_.size(); }

  /// Whether `session` holds `key` now, as the server will judge it (for checkers).
  bool holds(const std::string& key, std::uint64_t session) const;
  /// When `session` was invalidated (its TTL or its node's health), kNever while it was not
  /// (destroying it by request is not an invalidation the checkers are told of).
  sim::Time invalidated_at(std::uint64_t session) const;
  /// Until when `key` is refused for a lock-delay (sim::Time{}: it is not).
  sim::Time lock_delay_until(const std::string& key) const;

 private:
  struct Session {
    SessionOptions options;
    sim::NodeId node = 0;
    sim::Time expires_at = sim::kNever;  // on the server's monotonic clock
  };
  struct Job {
    Request request;
    ReplyTo<Response> reply;
  };
  struct BlockedGet {
    std::string key;
    std::uint64_t index = 0;
    sim::Time until;  // on the server's monotonic clock
    ReplyTo<Response> reply;
  };
  void serve();
  Response execute(const Request& r, ReplyTo<Response>& reply, bool& answered);
  /// When `s` is due to be invalidated by its TTL or its node's health, kNever if not.
  sim::Time due(const Session& s) const;
  /// Invalidates every session that is due, and answers blocking queries whose wait is over.
  void tick();
  void invalidate(std::uint64_t id, sim::Time at, bool by_request);
  void changed(const std::string& key);
  Response answer(const std::string& key) const;

  Network& net_;
  Node& node_;
  ServerConfig config_;
  sim::Mailbox<Job> inbox_;
  std::uint64_t index_ = 1;
  std::uint64_t next_session_ = 1;
  std::map<std::string, KeyValue> keys_;
  std::map<std::uint64_t, Session> sessions_;
  std::map<std::uint64_t, sim::Time> invalidated_;  // on the true clock, for checkers
  std::map<std::string, sim::Time> lock_delay_;     // key -> until, on the server's monotonic clock
  std::map<sim::NodeId, sim::Time> down_since_;     // nodes seen down, by the health checks
  std::vector<BlockedGet> blocked_;
};

/// A client of the store from an app node, with a timeout per request (a blocking GET waits its
/// wait on top). A value: it holds references to the world only.
class Client {
 public:
  Client(Network& net, Node& from, Server& server, sim::Duration timeout = std::chrono::seconds(5))
      : net_(&net), from_(&from), server_(&server), timeout_(timeout) {}
  Node& node() const { return *from_; }
  /// Sends `request`; throws sim::Timeout when no reply comes in time.
  Response run(const Request& request) const;

  /// A new session, or the server's error.
  Response create_session(const SessionOptions& options) const {
    return run({.kind = Request::Kind::create_session, .options = options});
  }
  bool renew(std::uint64_t session) const { return run({.kind = Request::Kind::renew, .session = session}).ok; }
  void destroy(std::uint64_t session) const { run({.kind = Request::Kind::destroy, .session = session}); }
  Response get(const std::string& key, std::uint64_t wait_index = 0, sim::Duration wait = {}) const;
  Response acquire(const std::string& key, const std::string& value, std::uint64_t session) const {
    return run({.kind = Request::Kind::acquire, .key = key, .value = value, .session = session});
  }
  Response release(const std::string& key, std::uint64_t session) const {
    return run({.kind = Request::Kind::release, .key = key, .session = session});
  }

 private:
  Network* net_;
  Node* from_;
  Server* server_;
  sim::Duration timeout_;
};

/// Renews `session` from the client's node every ttl / 2, as the API client's RenewPeriodic
/// does, until the session is gone or the node crashes. A pause of the node stops it.
void renew_in_background(Client client, std::uint64_t session, sim::Duration ttl);

}  // namespace models::consul
