#include "models/workloads/batch/batch.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace models::batch {
namespace {
const db::sql::Prepared kSubmit = db::sql::pinned(db::sql::prepare("INSERT INTO t_task () VALUES ()"));
const db::sql::Prepared kFindByStatus = db::sql::pinned(db::sql::prepare("SELECT id FROM t_task WHERE status = ?"));
const db::sql::Prepared kMark = db::sql::pinned(db::sql::prepare("UPDATE t_task SET status = ?, marked_at = ? WHERE id = ?"));
const db::sql::Prepared kMarkIfStatus =
    db::sql::pinned(db::sql::prepare("UPDATE t_task SET status = ?, marked_at = ? WHERE id = ? AND status = ?"));
const db::sql::Prepared kSetStatus = db::sql::pinned(db::sql::prepare("UPDATE t_task SET status = ? WHERE id = ?"));
const db::sql::Prepared kSetStatusIf = db::sql::pinned(db::sql::prepare("UPDATE t_task SET status = ? WHERE id = ? AND status = ?"));
const db::sql::Prepared kReap = db::sql::pinned(db::sql::prepare("UPDATE t_task SET status = ? WHERE status = ? AND marked_at < ?"));
}  // namespace

db::TableSchema tasks_table() {
  return {.name = kTasks,
          .key_column = {},
          .key_index = db::KeyIndex::none,
          .columns = {{"status", std::int64_t{pending}}, {"marked_at", std::int64_t{0}}}};
}

Queue::Queue(Network& net, Node& node, std::vector<Node*> consumers) : net_(net), node_(node), consumers_(std::move(consumers)) {
  for (std::size_t i = 0; i < consumers_.size(); ++i) {
    inboxes_.push_back(std::make_unique<sim::Mailbox<std::int64_t>>("queue " + consumers_[i]->name()));
    consumers_[i]->on_crash([this, i] {  // delivered, auto-acknowledged, never run
      while (inboxes_[i]->try_get()) {
      }
    });
  }
}

void Queue::publish(sim::NodeId from, std::int64_t task) {
  ++published_;
  net_.send(from, node_.id(), [this, task] {
    // The next consumer node that is connected; none: the broker keeps it (here: drops
    // it only if every consumer is down, which no scenario has).
    for (std::size_t tries = 0; tries < consumers_.size(); ++tries) {
      const std::size_t i = next_++ % consumers_.size();
      if (!consumers_[i]->is_up()) continue;
      net_.send(node_.id(), consumers_[i]->id(), [this, i, task] { inboxes_[i]->put(task); });
      return;
    }
  });
}

std::uint64_t TaskLog::duplicate_executions() const {
  std::uint64_t n = 0;
  for (const auto& [task, times] : executions) n += static_cast<std::uint64_t>(times - 1);
  return n;
}

std::uint64_t TaskLog::double_enqueues() const {
  std::uint64_t n = 0;
  for (const auto& [task, times] : enqueues) n += static_cast<std::uint64_t>(times - 1);
  return n;
}

std::uint64_t TaskLog::not_executed(const std::vector<std::int64_t>& task_ids) const {
  return static_cast<std::uint64_t>(std::count_if(task_ids.begin(), task_ids.end(), [&](std::int64_t id) { return !executions.count(id); }));
}

Workload::Workload(Design design, BatchConfig config, std::vector<Node*> apps, std::vector<db::Pool*> pools, Queue& queue)
    : design_(design), config_(std::move(config)), apps_(std::move(apps)), pools_(std::move(pools)), queue_(queue) {}

void Workload::start() {
  for (std::size_t a = 0; a < apps_.size(); ++a) apps_[a]->on_restart([this, a] { start_processes(a); });
  apps_.front()->spawn("batch.submit", [this] {  // users submit through the admin console
    db::Connection c = pools_.front()->acquire();  // the pool is idle at start-up
    for (int i = 0; i < config_.tasks; ++i) {
      try {
        c.execute(kSubmit);
      } catch (const db::SqlError&) {
        // The console shows the error and the user goes on to the next task; whether this one
        // was stored depends on when the timeout struck (tasks_not_executed counts rows stored).
      }
    }
  });
  for (std::size_t a = 0; a < apps_.size(); ++a) start_processes(a);
}

void Workload::start_processes(std::size_t a) {
  apps_[a]->spawn(fmt::format("batch.scheduler.{}", apps_[a]->name()), [this, a] { schedule(a); });
  for (int k = 0; k < config_.consumers_per_node; ++k)
    apps_[a]->spawn(fmt::format("batch.consumer.{}.{}", apps_[a]->name(), k), [this, a] { consume(a); },
                    sim::SpawnOptions{.daemon = true});
}

void Workload::schedule(std::size_t app) {
  sim::Stream stream = apps_[app]->engine().stream("batch.scheduler." + apps_[app]->name());
  while (sim::now() < sim::Time{} + config_.horizon) {
    // The timer fires on every node at about the same instant: that is the trouble.
    sim::sleep_for(config_.poll_interval + config_.poll_jitter.sample_duration(stream));
    try {
      if (design_.reaper) reap(app);
      db::Connection c = pools_[app]->acquire();
      enqueue_batch(app, c);
    } catch (const db::SqlError&) {
      // a deadlock or a timeout: try again at the next tick
    }
  }
}

void Workload::enqueue_batch(std::size_t app, db::Connection& c) {
  std::vector<db::Row> batch = c.execute(kFindByStatus, {std::int64_t{pending}}).rows;
  if (batch.size() > config_.batch_size) batch.resize(config_.batch_size);
  const sim::NodeId from = apps_[app]->id();
  const std::int64_t now = apps_[app]->clock().now().time_since_epoch().count();
  for (const db::Row& row : batch) {
    const std::int64_t id = row.id;
    switch (design_.enqueue) {
      case Enqueue::publish_then_mark:
        queue_.publish(from, id);
        ++tasks_.enqueues[id];
        c.execute(kMark, {std::int64_t{queued}, now, id});
        break;
      case Enqueue::mark_then_publish:
        c.execute(kMark, {std::int64_t{queued}, now, id});
        queue_.publish(from, id);
        ++tasks_.enqueues[id];
        break;
      case Enqueue::cas_mark_then_publish:
        if (c.execute(kMarkIfStatus, {std::int64_t{queued}, now, id, std::int64_t{pending}}).affected == 1) {
          queue_.publish(from, id);
          ++tasks_.enqueues[id];
        }
        break;
    }
  }
}

void Workload::reap(std::size_t app) {
  db::Connection c = pools_[app]->acquire();
  const std::int64_t cutoff = (apps_[app]->clock().now() - config_.reap_after).time_since_epoch().count();
  c.execute(kReap, {std::int64_t{pending}, std::int64_t{queued}, cutoff});
}

void Workload::consume(std::size_t app) {
  sim::Stream stream = apps_[app]->engine().stream("batch.consumer." + apps_[app]->name());
  while (const auto next = queue_.inbox(app).get_unless_killed()) {
    const std::int64_t id = *next;
    try {
      db::Connection c = pools_[app]->acquire();
      if (design_.consumer_cas) {
        if (c.execute(kSetStatusIf, {std::int64_t{running}, id, std::int64_t{queued}}).affected != 1) {
          ++tasks_.claims_refused;
          continue;
        }
      } else {
        c.execute(kSetStatus, {std::int64_t{running}, id});
      }
      ++tasks_.executions[id];
      sim::sleep_for(config_.task_work.sample_duration(stream));
      c.execute(kSetStatus, {std::int64_t{done}, id});
    } catch (const db::SqlError&) {
      // the task stays where it is; a reaper may bring it back
    }
  }
}

}  // namespace models::batch
