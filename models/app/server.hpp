#pragma once
// An application server node: a bounded pool of worker threads fed by a bounded accept
// queue, running a handler (the strategy under test) for each request.
//
// Imitates a thread-per-request server (Tomcat, a Go service with a worker pool): when
// every worker is busy, requests wait in the accept queue, and when the queue is full the
// server rejects them (a visible error). This queue is the other root of the production
// case (sources/003 section 2, docs/sources.md): while clients time out and retry, the copies
// of one request pile up and are later handled at once by different workers. A GC pause
// freezes every worker; requests still arrive in the queue (the kernel accepts them) and
// wait. A crash loses the queue; a restart starts a fresh pool.

#include <cstdint>
#include <string>

#include "models/app/request.hpp"
#include "models/net/rpc.hpp"
#include "models/node/node.hpp"

namespace models {

class AppServer;

/// The worker thread handling one request: where a strategy's code runs.
struct Worker {
  AppServer& server;
  int index;           // 0-based within its server
  sim::Stream& stream;  // the worker's own random stream
  /// The current attempt's waits: the AppServer sets its queue wait and sends it back with the
  /// response; the strategy's pool, row-lock and lock-service waits add to it.
  TimeSpent time{};
  /// The code of the attempt's answer, which a strategy sets with a server_error or business
  /// outcome (Response::code).
  std::string answer_code{};
};

/// What an app server does with a request. May block (calls to Redis, the database).
class Handler {
 public:
  virtual ~Handler() = default;
  /// Handles one request in a worker process; a sim::Timeout that escapes is answered as
  /// an internal error, as a web framework answers an uncaught exception with a 500.
  virtual Response handle(const Request& request, Worker& worker) = 0;
};

struct AppServerConfig {
  int workers = 8;
  std::size_t accept_queue = 128;
};

class AppServer {
 public:
  AppServer(Network& net, Node& node, AppServerConfig config, Handler& handler);
  AppServer(const AppServer&) = delete;
  AppServer& operator=(const AppServer&) = delete;

  /// Starts the worker pool (and again after each restart of the node).
  void start();

  /// A request arriving on the node (run by the network): queued, or rejected when full.
  void accept(Request request, ReplyTo<Response> reply);

  Node& node() const { return node_; }
  Network& network() const { return net_; }
  const std::string& name() const { return node_.name(); }
  const AppServerConfig& config() const { return config_; }

  std::size_t queued() const { return queue_.size(); }
  int busy_workers() const { return busy_; }
  std::uint64_t accepted() const { return accepted_; }
  std::uint64_t rejected() const { return rejected_; }
  std::uint64_t handled() const { return handled_; }
  std::size_t max_queued() const { return max_queued_; }

 private:
  struct Job {
    Request request;
    ReplyTo<Response> reply;
    sim::Time accepted;  // when it entered the queue (true time)
  };
  void spawn_workers();

  Network& net_;
  Node& node_;
  AppServerConfig config_;
  Handler& handler_;
  sim::Mailbox<Job> queue_;
  int busy_ = 0;
  std::uint64_t accepted_ = 0;
  std::uint64_t rejected_ = 0;
  std::uint64_t handled_ = 0;
  std::size_t max_queued_ = 0;
  bool started_ = false;
};

}  // namespace models
