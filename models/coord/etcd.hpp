#pragma once
// An etcd-like key-value store for locks: one linearizable server (the leader of a
// healthy cluster), leases with a TTL kept alive by clients, a global revision, per-key
// create and mod revisions and versions, and transactions comparing them.
//
// Imitates etcd v3 as its Mutex uses it (docs/models.md, Lock services: the key is bound to a
// session lease, TTL 60 s by default; the owner is the key with the lowest create revision;
// IsOwner() is a compare on that revision guarding the holder's transactions). A lease not
// kept alive expires after its TTL, as judged by the server, deleting its keys; revisions
// never go back, so they serve as fencing tokens.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/net/rpc.hpp"
#include "models/node/node.hpp"

namespace models::etcd {

struct KeyValue {
  std::string key{};
  std::string value{};
  std::int64_t create_revision = 0;
  std::int64_t mod_revision = 0;
  std::int64_t version = 0;  // puts since creation
  std::int64_t lease = 0;
  bool operator==(const KeyValue&) const = default;
};

/// One condition of a transaction: `target` of `key` compared with `value` / `number`.
struct Compare {
  enum class Target { create_revision, mod_revision, version, value } target = Target::create_revision;
  enum class Result { equal, less, greater, not_equal } result = Result::equal;
  std::string key{};
  std::int64_t number = 0;  // for the revision and version targets (0: the key is absent)
  std::string value{};      // for the value target
};

/// A put or a delete inside a transaction.
struct Operation {
  enum class Kind { put, del } kind = Kind::put;
  std::string key{};
  std::string value{};
  std::int64_t lease = 0;
};

/// A change a watch reports: the key's state after a put, or the key deleted.
struct Event {
  enum class Type { put, del } type = Type::put;
  KeyValue kv{};  // for a delete: the key, and mod_revision = the deleting revision
  bool operator==(const Event&) const = default;
};

/// What a watch's events travel into on the client's side, in revision order.
struct WatchChannel {
  explicit WatchChannel(std::string name) : events(std::move(name)) {}
  sim::Mailbox<Event> events;
  std::uint64_t next = 1;
  std::map<std::uint64_t, Event> early;  // arrived ahead of a missing one
};

struct Request {
  enum class Kind { grant, keep_alive, revoke, get, range, put, del, txn, watch } kind = Kind::get;
  std::string key{};
  std::string value{};
  std::int64_t lease = 0;
  sim::Duration ttl{};
  std::vector<Compare> compares{};
  std::vector<Operation> success{};
  std::vector<Operation> failure{};
  std::int64_t start_revision = 0;        // watch: replay events from here (0: from now on)
  std::shared_ptr<WatchChannel> channel{};  // watch: where the events go
};

struct Response {
  bool ok = true;             // txn: the compares held; keep_alive: the lease exists
  /// The server refused the request and changed nothing (ok is false): "lease not found" (a put
  /// under a lease that is gone), "duplicate key given in txn request" (a branch writing a key
  /// twice). An etcd client gets it as an error.
  std::string error{};
  std::int64_t revision = 0;  // the store's revision after the request
  std::int64_t lease = 0;     // grant: the new lease id
  std::optional<KeyValue> kv;  // get
  std::vector<KeyValue> kvs;   // range: every key with the prefix, in key order
};

// How a trial's call log tells them (net/call_log.hpp), as etcdctl would: "put k \"v\" --lease=3",
// "txn if (create_revision(k) = 0) then (put k \"v\") else ()", answered "ok, revision 7" or
// "failed, revision 7".
std::string call_text(const Request& request);
std::string reply_text(const Response& response);

struct ServerConfig {
  sim::Distribution service = sim::fixed(std::chrono::microseconds(200));  // a committed Raft write, roughly
  /// How often the leader looks for expired leases (etcd's lessor checks every 500 ms).
  sim::Duration expiry_check = std::chrono::milliseconds(500);
};

class Server {
 public:
  Server(Network& net, Node& node, ServerConfig config = {});
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  void start();
  void accept(Request request, ReplyTo<Response> reply);
  Node& node() const { return node_; }
  /// Requests that arrived and wait for the server (many while its node is paused).
  std::size_t queued() const { return inbox_.size(); }
  std::int64_t revision() const { return revision_; }
  /// The key's current state, if present and its lease not expired (for checkers).
  const KeyValue* find(const std::string& key) const;
  /// When `key` was last deleted (by a delete, or with its lease); kNever if it never was.
  sim::Time removed_at(const std::string& key) const {
    const auto it = removed_.find(key);
    return it == removed_.end() ? sim::kNever : it->second;
  }

 private:
  struct Lease {
    sim::Duration ttl{};
    sim::Time expires_at;  // on the server's clock
  };
  struct Job {
    Request request;
    ReplyTo<Response> reply;
  };
  void serve();
  Response execute(const Request& r, sim::NodeId caller);
  bool holds(const Compare& c) const;
  /// Why etcd refuses `ops` as a transaction's branch before running it, or "".
  static std::string duplicate_key(const std::vector<Operation>& ops);
  /// Writes `ops` as one revision, as etcd gives every write of a transaction (or of a lease's
  /// revocation) one main revision; writes that change nothing (deletes of absent keys) take none.
  void write(const std::vector<Operation>& ops);
  /// At the current revision: the caller advanced it.
  void put(const Operation& op);
  void remove(const std::string& key);
  /// Deletes the keys of every lease past its deadline. Run before each request and
  /// every expiry_check by a background process (expiry keeps no run alive by itself).
  void expire_leases();
  void publish(const Event& event);
  struct Watcher {
    std::string prefix;
    sim::NodeId caller = 0;
    std::shared_ptr<WatchChannel> channel;
    std::uint64_t next_seq = 1;
  };
  void send(Watcher& w, const Event& event);

  Network& net_;
  Node& node_;
  ServerConfig config_;
  sim::Mailbox<Job> inbox_;
  std::int64_t revision_ = 1;
  std::int64_t next_lease_ = 1;
  std::map<std::string, KeyValue> keys_;
  std::map<std::string, sim::Time> removed_;  // when each deleted key went, for checkers
  std::map<std::int64_t, Lease> leases_;
  std::vector<Event> history_;  // every change, in revision order (never compacted)
  std::vector<Watcher> watchers_;
};

/// The client's end of a watch on a key prefix; dropping it cancels the watch.
class Watch {
 public:
  Watch() = default;
  explicit Watch(std::shared_ptr<WatchChannel> channel) : channel_(std::move(channel)) {}
  /// The next event. While waiting, the run is kept open: a lease expiry, which only time
  /// brings, may be what delivers it.
  Event next();
  /// Waits at most `d`; throws sim::Timeout.
  Event next_for(sim::Duration d) { return channel_->events.get_for(d); }

 private:
  std::shared_ptr<WatchChannel> channel_;
};

/// A client of the store from an app node, with a timeout per request.
class Client {
 public:
  Client(Network& net, Node& from, Server& server, sim::Duration timeout = std::chrono::seconds(5));
  Node& node() const { return from_; }
  /// Sends `request`; throws sim::Timeout when no reply comes in time.
  Response run(const Request& request);

  std::int64_t grant(sim::Duration ttl) { return run({.kind = Request::Kind::grant, .ttl = ttl}).lease; }
  bool keep_alive(std::int64_t lease) { return run({.kind = Request::Kind::keep_alive, .lease = lease}).ok; }
  Response put(const std::string& key, const std::string& value, std::int64_t lease = 0) {
    return run({.kind = Request::Kind::put, .key = key, .value = value, .lease = lease});
  }
  std::optional<KeyValue> get(const std::string& key) { return run({.kind = Request::Kind::get, .key = key}).kv; }
  Response del(const std::string& key) { return run({.kind = Request::Kind::del, .key = key}); }
  std::vector<KeyValue> range(const std::string& prefix) { return run({.kind = Request::Kind::range, .key = prefix}).kvs; }
  /// Watches every key starting with `prefix`, replaying changes since `start_revision`
  /// (0: only future ones). Changes arrive in revision order.
  Watch watch(const std::string& prefix, std::int64_t start_revision = 0);
  Response txn(std::vector<Compare> compares, std::vector<Operation> success, std::vector<Operation> failure = {}) {
    return run({.kind = Request::Kind::txn, .compares = std::move(compares), .success = std::move(success), .failure = std::move(failure)});
  }

 private:
  Network& net_;
  Node& from_;
  Server& server_;
  sim::Duration timeout_;
};

/// Keeps a lease alive from the client's node every ttl / 3, as etcd's concurrency.Session
/// does, until the lease is gone or the node crashes. A pause of the node stops it.
void keep_alive_in_background(Client& client, std::int64_t lease, sim::Duration ttl);

}  // namespace models::etcd
