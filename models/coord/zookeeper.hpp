#pragma once
// A ZooKeeper-like coordination service and a Curator-like client.
//
// Imitates ZooKeeper 3.x as lock recipes use it (docs/models.md, Lock services and
// Figures the models take):
// - one linearizable server standing for a healthy ensemble (every request goes to the
//   leader, so no read is stale; a follower's read can be, in ZooKeeper);
// - every write (create, delete, setData, a session opening or expiring) gets the next zxid;
// - znodes persistent or ephemeral, optionally sequential (the parent's child counter,
//   ten digits, appended to the name);
// - sessions with a timeout negotiated within [2, 20] x tickTime, kept alive by the client's
//   pings every third of the timeout; the server expires a session whose pings stopped (a
//   paused or partitioned client) on its own monotonic clock, at tick granularity, deleting
//   its ephemeral nodes and firing the watches that deletion triggers;
// - one-shot watches: exists/getData watch a node (created, deleted, data changed),
//   getChildren watches a node's children; a watch fires once and is gone.
// The client tells its application what Curator's ConnectionStateListener tells it:
// SUSPENDED when a ping goes unanswered, RECONNECTED when one is answered again, LOST when
// the server says the session expired, which the client only learns when it next reaches
// the server: a client paused past its session timeout runs on, for a while, unaware.
// After LOST the client opens a new session, as Curator does.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/net/rpc.hpp"
#include "models/node/node.hpp"

namespace models::zk {

using Zxid = std::int64_t;
using SessionId = std::int64_t;

enum class CreateMode { persistent, ephemeral, persistent_sequential, ephemeral_sequential };

/// The result codes a lock recipe tells apart (KeeperException.Code).
enum class Code { ok, no_node, node_exists, not_empty, bad_version, session_expired, no_children_for_ephemerals };
const char* to_string(Code code);

struct Stat {
  Zxid czxid = 0;                 // the zxid of the create: a fencing token
  Zxid mzxid = 0;                 // the zxid of the last change
  std::int32_t version = 0;       // data changes since creation
  SessionId ephemeral_owner = 0;  // 0 for persistent nodes
  Zxid pzxid = 0;                 // the zxid of the last child created or deleted (the create's, at first)
  std::int32_t cversion = 0;      // children created and deleted
  std::int32_t num_children = 0;
  bool operator==(const Stat&) const = default;
};

struct WatchEvent {
  // session_expired: the client's own event (KeeperState.Expired), ending every watch it had.
  enum class Type { node_created, node_deleted, node_data_changed, node_children_changed, session_expired } type{};
  std::string path{};
  Zxid zxid = 0;  // the write that fired it
};
const char* to_string(WatchEvent::Type type);

/// A watch event on its way to one session, numbered so that the client takes them in
/// order and once, as over the session's TCP connection.
struct Notification {
  std::uint64_t seq = 0;
  WatchEvent event;
};

class Client;

struct Request {
  enum class Kind { open_session, close_session, ping, create, remove, exists, get_data, set_data, get_children } kind{};
  SessionId session = 0;
  std::string path{};
  std::string data{};
  CreateMode mode = CreateMode::persistent;
  std::int32_t version = -1;  // remove / set_data: -1 for any version
  bool watch = false;
  sim::Duration session_timeout{};  // open_session: what the client asks for
  std::uint64_t acknowledged = 0;   // ping: the last notification taken, in order
  Client* client = nullptr;         // open_session: the connection watch events come back on
};

struct Response {
  Code code = Code::ok;
  Zxid zxid = 0;  // the server's zxid after the request
  SessionId session = 0;
  sim::Duration session_timeout{};  // open_session: the negotiated timeout
  std::string path{};               // create: the name given (with its sequence number)
  std::string data{};
  std::optional<Stat> stat;
  std::vector<std::string> children;  // names, sorted
  std::vector<Notification> unacknowledged;  // ping: sent but not yet acknowledged
};

// How a trial's call log tells them (net/call_log.hpp), as zkCli would: "create -e -s
// /locks/k/lock- app-1-3", answered "ok /locks/k/lock-0000000002 (czxid 7)" or "NodeExists".
std::string call_text(const Request& request);
std::string reply_text(const Response& response);

struct ServerConfig {
  sim::Duration tick_time = std::chrono::seconds(2);  // zoo.cfg default
  /// The leader's time per request: writes are pipelined, so a write occupies it far
  /// less than its quorum round trip (a few thousand to tens of thousands of writes/s).
  sim::Distribution write_service = sim::fixed(std::chrono::microseconds(100));
  sim::Distribution read_service = sim::fixed(std::chrono::microseconds(50));
  /// From a write's turn to its reply: the Zab proposal, the quorum's acks, the commit.
  /// It delays the writer's reply only, not the requests behind it.
  sim::Distribution write_commit = sim::fixed(std::chrono::milliseconds(2));
};

class Server {
 public:
  Server(Network& net, Node& node, ServerConfig config = {});
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Starts the request loop and the session tracker.
  void start();
  void accept(Request request, ReplyTo<Response> reply);
  Node& node() const { return node_; }
  /// Requests that arrived and wait for the server (many while its node is paused).
  std::size_t queued() const { return inbox_.size(); }
  const ServerConfig& config() const { return config_; }

  // For checkers and tests.
  Zxid zxid() const { return zxid_; }
  bool exists(const std::string& path) const { return nodes_.count(path) > 0; }
  std::optional<Stat> stat(const std::string& path) const;
  bool session_alive(SessionId session) const { return sessions_.count(session) > 0; }
  /// When znode `path` was last removed (deleted, or with its session); kNever if it never was.
  sim::Time removed_at(const std::string& path) const {
    const auto it = removed_.find(path);
    return it == removed_.end() ? sim::kNever : it->second;
  }
  /// Watch notifications sent so far (the herd effect shows here).
  std::uint64_t notifications() const { return notifications_; }

 private:
  friend class Client;
  struct ZNode {
    std::string data;
    Stat stat;
  };
  struct Session {
    sim::Duration timeout{};
    sim::Time deadline;  // on the server's monotonic clock
    sim::NodeId client_node = 0;
    Client* client = nullptr;
    std::uint64_t next_seq = 1;
    std::vector<Notification> unacknowledged;  // sent, maybe lost: resent with each ping
  };
  struct Job {
    Request request;
    ReplyTo<Response> reply;
  };
  void serve();
  void track_sessions();
  Response execute(const Request& r, sim::NodeId caller);
  void notify(SessionId session, const WatchEvent& event);
  Code create(const Request& r, Response& out);
  Code remove(const std::string& path, std::int32_t version);
  /// Ends a session, as an expiry or a close does: one transaction deleting its ephemeral nodes.
  void expire(SessionId session, const char* trace_kind = "zk.session_expired");
  /// A child of `parent` was created or deleted by the write `zxid_`.
  void children_changed(const std::string& parent, int delta);
  /// Fires and forgets the watches `event` triggers in `watches`.
  void trigger(std::map<std::string, std::set<SessionId>>& watches, const WatchEvent& event);
  static std::string parent_of(const std::string& path);
  std::vector<std::string> children_of(const std::string& path) const;

  Network& net_;
  Node& node_;
  ServerConfig config_;
  sim::Mailbox<Job> inbox_;
  Zxid zxid_ = 0;
  SessionId next_session_ = 0x100;
  std::uint64_t notifications_ = 0;
  std::map<std::string, ZNode> nodes_;
  std::map<SessionId, Session> sessions_;
  std::map<std::string, sim::Time> removed_;  // when each removed znode went, for checkers
  std::map<std::string, std::set<SessionId>> data_watches_;   // exists / getData
  std::map<std::string, std::set<SessionId>> child_watches_;  // getChildren
};

/// A KeeperException: the code the server answered.
class KeeperError : public std::runtime_error {
 public:
  KeeperError(Code code, const std::string& path);
  Code code() const { return code_; }

 private:
  Code code_;
};

/// Curator's connection states.
enum class ConnectionState { connected, suspended, reconnected, lost };
const char* to_string(ConnectionState state);

struct ClientConfig {
  sim::Duration session_timeout = std::chrono::seconds(60);  // Curator's default (capped by the server)
  sim::Duration request_timeout = std::chrono::seconds(15);  // Curator's connection timeout
};

/// A watch the application can wait on: it fires once.
class Watch {
 public:
  Watch() = default;
  bool armed() const { return event_.valid(); }
  /// Waits for the event. While waiting, the run is kept open: only a session expiry on
  /// the server may be left to fire it.
  WatchEvent wait();
  /// Waits at most `d`; throws sim::Timeout.
  WatchEvent wait_for(sim::Duration d);

 private:
  friend class Client;
  sim::Future<WatchEvent> event_;
};

/// A session from one app node, with its pings in a background process.
class Client {
 public:
  Client(Network& net, Node& from, Server& server, ClientConfig config = {});
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// Opens a session and starts pinging. Throws sim::Timeout when the server is unreachable.
  void connect();
  /// Closes the session: the server deletes its ephemeral nodes at once (one transaction) and
  /// the client stops pinging until connect() opens another.
  void close();
  SessionId session() const { return session_; }
  Node& node() const { return from_; }
  sim::Duration session_timeout() const { return negotiated_; }
  ConnectionState state() const { return state_; }
  /// Called on every state change, as a ConnectionStateListener.
  void on_state_change(std::function<void(ConnectionState)> listener) { listeners_.push_back(std::move(listener)); }

  /// Throw KeeperError for a code other than ok, sim::Timeout when no reply came.
  std::string create(const std::string& path, const std::string& data, CreateMode mode, Stat* stat = nullptr);
  void remove(const std::string& path, std::int32_t version = -1);
  std::optional<Stat> exists(const std::string& path, Watch* watch = nullptr);
  std::string get_data(const std::string& path, Watch* watch = nullptr, Stat* stat = nullptr);
  Stat set_data(const std::string& path, const std::string& data, std::int32_t version = -1);
  std::vector<std::string> get_children(const std::string& path, Watch* watch = nullptr);

  /// Watch events this client received (each counted once).
  std::uint64_t events_received() const { return events_received_; }
  /// A name no other call on any client returns, for Curator's protected nodes (a GUID).
  std::string unique_name() { return from_.name() + "-" + std::to_string(++names_); }

 private:
  friend class Server;
  Response run(Request request, sim::Duration timeout);
  Response checked(Request request, Watch* watch = nullptr, bool children = false);
  void open_session();
  void lose_session();
  void heartbeat();
  /// Takes notifications of `session` in sequence order, each once.
  void receive(SessionId session, const Notification& n);
  void deliver(const WatchEvent& event);
  void set_state(ConnectionState state);
  /// Registers `watch` before its request leaves (its event may overtake the reply);
  /// returns an id to withdraw it by if the server did not set it.
  std::uint64_t arm(Watch* watch, const std::string& path, bool children);
  void disarm(std::uint64_t id);
  struct Watcher {
    std::uint64_t id = 0;
    bool children = false;
    sim::Promise<WatchEvent> promise;
  };

  Network& net_;
  Node& from_;
  Server& server_;
  ClientConfig config_;
  SessionId session_ = 0;
  sim::Duration negotiated_{};
  ConnectionState state_ = ConnectionState::lost;
  std::uint64_t acknowledged_ = 0;
  std::map<std::uint64_t, WatchEvent> early_;  // arrived ahead of a missing one
  std::uint64_t events_received_ = 0;
  bool heartbeat_running_ = false;
  bool ever_connected_ = false;
  bool closed_ = false;  // close() was called: no new session until connect()
  sim::Time last_heard_;  // the client's monotonic clock
  std::uint64_t names_ = 0;
  std::uint64_t next_watcher_ = 0;
  std::vector<std::function<void(ConnectionState)>> listeners_;
  std::multimap<std::string, Watcher> watchers_;  // by path
};

}  // namespace models::zk
