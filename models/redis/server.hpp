#pragma once
// A Redis node: one single-threaded server process executing commands one at a time,
// with AOF persistence and asynchronous replication to replicas.
//
// Imitates Redis 7 (docs/models.md, Redis and Lock services; conformance/redis-scripts/):
// - commands run atomically, one after another, each taking a service time;
// - persistence: none (a crash loses everything), AOF everysec (writes reach the OS page
//   cache at once and are fsynced every second: killing the Redis process loses nothing,
//   a machine crash loses the writes since the last fsync), AOF always (fsync before the
//   reply: nothing acknowledged is lost);
// - a master streams each write to its replicas asynchronously, after a lag; a replica
//   refuses writes (READONLY); a write acknowledged by the master but not yet replicated
//   is lost if a replica is promoted (see Sentinel); a crash of the master loses what it
//   had not yet streamed (the writes still within their lag).
// A crash of the node (models::Node::crash) is a machine crash; kill_process() is a
// crash of the Redis process only.

#include <vector>

#include "models/net/rpc.hpp"
#include "models/node/node.hpp"
#include "models/redis/keyspace.hpp"

namespace models::redis {

enum class Persistence { none, aof_everysec, aof_always };
const char* to_string(Persistence persistence);

struct ServerConfig {
  Persistence persistence = Persistence::none;
  /// Time to execute one command (Redis does ~100k simple commands per second).
  sim::Distribution service = sim::fixed(std::chrono::microseconds(10));
  sim::Duration fsync_interval = std::chrono::seconds(1);
  /// From a write on the master to its arrival on a replica.
  sim::Distribution replication_lag = sim::uniform(std::chrono::microseconds(200), std::chrono::milliseconds(2));
};

enum class Role { master, replica };

class Server {
 public:
  Server(Network& net, Node& node, ServerConfig config = {});
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Starts the server process (and again after each restart of the node).
  void start();
  /// A command arriving on the node (run by the network).
  void accept(Command command, ReplyTo<redis::Reply> reply);

  /// Crashes the node as a kill of the Redis process: the OS page cache survives, so
  /// with AOF everysec no acknowledged write is lost.
  void kill_process();

  /// Makes `replica` follow this master: it drops its data and copies this keyspace.
  void add_replica(Server& replica);
  /// Becomes a master: stops following its master and accepts writes.
  void promote();
  Role role() const { return role_; }
  const std::vector<Server*>& replicas() const { return replicas_; }

  Node& node() const { return node_; }
  const std::string& name() const { return node_.name(); }
  const Keyspace& keyspace() const { return data_; }
  /// Commands that arrived and wait for the server (many while its node is paused).
  std::size_t queued() const { return inbox_.size(); }
  /// Stores `value` at `key` before the run, as data already on disk: a workload's first keys.
  /// No expiry.
  void load(const std::string& key, const std::string& value);
  /// Writes applied so far (on a replica: received from the master): how far along it is.
  std::uint64_t applied() const { return applied_; }

 private:
  struct Job {
    Command command;
    ReplyTo<redis::Reply> reply;
  };
  void serve();
  void persist(const std::vector<Change>& changes);
  void replicate(const std::vector<Change>& changes);
  void recover();

  Network& net_;
  Node& node_;
  ServerConfig config_;
  sim::Mailbox<Job> inbox_;
  Keyspace data_;
  Keyspace disk_;                 // the AOF as fsynced
  std::vector<Change> unsynced_;  // AOF writes in the page cache, not yet fsynced
  bool page_cache_survives_ = false;
  Role role_ = Role::master;
  std::vector<Server*> replicas_;
  Server* master_ = nullptr;
  std::uint64_t replication_epoch_ = 0;  // bumped when it stops following a master
  std::vector<sim::Time> replica_clear_;  // per replica: the last scheduled arrival, to keep the stream in order
  std::uint64_t applied_ = 0;
  std::uint64_t crashes_ = 0;
  sim::Stream lag_stream_;
  bool started_ = false;
};

}  // namespace models::redis
