#pragma once
// The batch scheduler of sources/002: tasks wait in a table; a scheduler on each of two app
// nodes polls for pending tasks and publishes them to a message queue; consumers on the
// same nodes take tasks from the queue, claim each with a status CAS and run it.
//
// Statuses as in the article: 1 pending, 2 queued, 3 running (and 6 done, ours). Designs of
// the scheduler's critical section:
// - publish-then-mark: publish, then UPDATE status=2. A consumer can take the task before
//   the mark lands; its claim (2 -> 3) then fails and the task is never run.
// - mark-then-publish: UPDATE status=2 WHERE id, then publish. Two schedulers that read the
//   same pending batch both mark and both publish: every task is enqueued twice, and a late
//   mark can turn a running task back to queued, so the second copy runs it again.
// - cas-mark-then-publish: UPDATE status=2 WHERE id AND status=1; publish only if it took.
//   One enqueue per task; a crash between the mark and the publish strands the task in
//   status 2, unless a reaper puts tasks queued too long back to pending.

#include <map>
#include <memory>
#include <vector>

#include "models/db/server.hpp"
#include "models/net/network.hpp"
#include "models/node/node.hpp"

namespace models::batch {

inline const std::string kTasks = "t_task";
enum Status : std::int64_t { pending = 1, queued = 2, running = 3, done = 6 };
db::TableSchema tasks_table();

enum class Enqueue { publish_then_mark, mark_then_publish, cas_mark_then_publish };

/// A strategy of this workload.
struct Design {
  Enqueue enqueue = Enqueue::cas_mark_then_publish;
  bool consumer_cas = true;  // claim with UPDATE status=3 WHERE id AND status=2
  bool reaper = false;       // put tasks queued longer than reap_after back to pending
};

struct BatchConfig {
  int tasks = 20;
  sim::Duration poll_interval = std::chrono::seconds(1);
  sim::Distribution poll_jitter = sim::uniform(sim::Duration{}, std::chrono::milliseconds(20));
  std::size_t batch_size = 10;
  int consumers_per_node = 2;
  sim::Distribution task_work = sim::fixed(std::chrono::milliseconds(50));
  sim::Duration reap_after = std::chrono::seconds(3);
  /// Schedulers stop polling after this; consumers drain what is queued.
  sim::Duration horizon = std::chrono::seconds(10);
};

/// A message queue broker on its own node: a published task is pushed to the connected
/// consumer nodes in turn, as a queue with auto-ack does; what a node had been delivered
/// and not yet taken is lost when it crashes.
class Queue {
 public:
  Queue(Network& net, Node& node, std::vector<Node*> consumers);
  /// Sends `task` from `from` to the broker.
  void publish(sim::NodeId from, std::int64_t task);
  /// The next task delivered to consumer node `i`.
  sim::Mailbox<std::int64_t>& inbox(std::size_t i) { return *inboxes_[i]; }
  std::uint64_t published() const { return published_; }

 private:
  Network& net_;
  Node& node_;
  std::vector<Node*> consumers_;
  std::vector<std::unique_ptr<sim::Mailbox<std::int64_t>>> inboxes_;
  std::size_t next_ = 0;
  std::uint64_t published_ = 0;
};

/// What happened to the tasks.
struct TaskLog {
  std::map<std::int64_t, int> executions;  // task id -> times run
  std::map<std::int64_t, int> enqueues;    // task id -> times published
  std::uint64_t claims_refused = 0;        // consumer CAS that found another status
  std::uint64_t duplicate_executions() const;
  std::uint64_t double_enqueues() const;
  /// Of the tasks stored (`task_ids`, the committed rows), those never run.
  std::uint64_t not_executed(const std::vector<std::int64_t>& task_ids) const;
};

/// The workload on `apps` (a scheduler and consumers each), the database and the queue.
class Workload {
 public:
  Workload(Design design, BatchConfig config, std::vector<Node*> apps, std::vector<db::Pool*> pools, Queue& queue);
  /// Starts every process, and the submission of the pending tasks through app-1 (the
  /// schedulers' first poll comes one interval later).
  void start();
  const TaskLog& tasks() const { return tasks_; }

 private:
  void start_processes(std::size_t app);  // again after the node restarts
  void schedule(std::size_t app);
  void enqueue_batch(std::size_t app, db::Connection& c);
  void consume(std::size_t app);
  void reap(std::size_t app);

  Design design_;
  BatchConfig config_;
  std::vector<Node*> apps_;
  std::vector<db::Pool*> pools_;
  Queue& queue_;
  TaskLog tasks_;
};

}  // namespace models::batch
