#pragma once
// An etcd-like key-value store for locks: one linearizable server (the leader of a
// healthy cluster), leases with a TTL kept alive by clients, a global revision, per-key
// create and mod revisions and versions, and transactions comparing them.
//
// Imitates etcd v3 as its Mutex uses it (DOMAIN.md, Lock services: the key is bound to a
// session lease, TTL 60 s by default; the owner is the key with the lowest create revision;
// IsOwner() is a compare on that revision guarding the holder's transactions). A lease not
// kept alive expires after its TTL, as judged by the server, deleting its keys; revisions
// never go back, so they serve as fencing tokens.

#include <cstdint>
#include <map>
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

struct Request {
  enum class Kind { grant, keep_alive, revoke, get, put, del, txn } kind = Kind::get;
  std::string key{};
  std::string value{};
  std::int64_t lease = 0;
  sim::Duration ttl{};
  std::vector<Compare> compares{};
  std::vector<Operation> success{};
  std::vector<Operation> failure{};
};

struct Response {
  bool ok = true;             // txn: the compares held; keep_alive: the lease exists
  std::int64_t revision = 0;  // the store's revision after the request
  std::int64_t lease = 0;     // grant: the new lease id
  std::optional<KeyValue> kv;  // get
};

struct ServerConfig {
  sim::Distribution service = sim::fixed(std::chrono::microseconds(200));  // a committed Raft write, roughly
};

class Server {
 public:
  Server(Network& net, Node& node, ServerConfig config = {});
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  void start();
  void accept(Request request, ReplyTo<Response> reply);
  Node& node() const { return node_; }
  std::int64_t revision() const { return revision_; }
  /// The key's current state, if present and its lease not expired (for checkers).
  const KeyValue* find(const std::string& key) const;

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
  Response execute(const Request& r);
  bool holds(const Compare& c) const;
  void apply(const Operation& op);
  void remove(const std::string& key);
  /// Deletes the keys of every lease past its deadline. Run before each request, which is
  /// when a client can tell; expiry itself keeps no run alive.
  void expire_leases();

  Network& net_;
  Node& node_;
  ServerConfig config_;
  sim::Mailbox<Job> inbox_;
  std::int64_t revision_ = 1;
  std::int64_t next_lease_ = 1;
  std::map<std::string, KeyValue> keys_;
  std::map<std::int64_t, Lease> leases_;
};

/// A client of the store from an app node, with a timeout per request.
class Client {
 public:
  Client(Network& net, Node& from, Server& server, sim::Duration timeout = std::chrono::seconds(5));
  /// Sends `request`; throws sim::Timeout when no reply comes in time.
  Response run(const Request& request);

  std::int64_t grant(sim::Duration ttl) { return run({.kind = Request::Kind::grant, .ttl = ttl}).lease; }
  bool keep_alive(std::int64_t lease) { return run({.kind = Request::Kind::keep_alive, .lease = lease}).ok; }
  Response put(const std::string& key, const std::string& value, std::int64_t lease = 0) {
    return run({.kind = Request::Kind::put, .key = key, .value = value, .lease = lease});
  }
  std::optional<KeyValue> get(const std::string& key) { return run({.kind = Request::Kind::get, .key = key}).kv; }
  Response del(const std::string& key) { return run({.kind = Request::Kind::del, .key = key}); }
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
