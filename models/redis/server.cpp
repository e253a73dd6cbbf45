#include "models/redis/server.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace models::redis {

const char* to_string(Persistence persistence) {
  switch (persistence) {
    case Persistence::none: return "none";
    case Persistence::aof_everysec: return "aof-everysec";
    case Persistence::aof_always: return "aof-always";
  }
  return "?";
}

Server::Server(Network& net, Node& node, ServerConfig config)
    : net_(net), node_(node), config_(std::move(config)), inbox_(node.name() + ".redis") {}

void Server::load(const std::string& key, const std::string& value) {
  const Change change{key, Value{.is_hash = false, .text = value, .hash = {}, .expires_at = sim::kNever}};
  data_.apply(change);
  disk_.apply(change);
}

void Server::start() {
  if (started_) throw sim::UsageError(fmt::format("models::redis::Server::start: '{}' is already started", name()));
  started_ = true;
  lag_stream_ = node_.engine().stream(name() + ".replication");
  node_.on_crash([this] {
    ++crashes_;  // the replication stream not yet sent dies with the process
    while (inbox_.try_get()) {
    }
    if (page_cache_survives_ || config_.persistence == Persistence::aof_always)
      for (const Change& c : unsynced_) disk_.apply(c);
    unsynced_.clear();
    page_cache_survives_ = false;
    data_.clear();
  });
  node_.on_restart([this] {
    recover();
    node_.spawn(name() + ".redis", [this] { serve(); }, sim::SpawnOptions{.daemon = true});
  });
  node_.spawn(name() + ".redis", [this] { serve(); }, sim::SpawnOptions{.daemon = true});
  if (config_.persistence == Persistence::aof_everysec) {
    // appendfsync everysec: a background thread of Redis, here a background process of the world.
    node_.engine().spawn(sim::kWorld, name() + ".fsync", [this] {
      for (;;) {
        node_.clock().sleep_for(config_.fsync_interval);
        if (!node_.is_up()) continue;
        for (const Change& c : unsynced_) disk_.apply(c);
        unsynced_.clear();
      }
    }, sim::SpawnOptions{.background = true});
  }
}

void Server::recover() {
  // Loading the AOF replays the writes; keys whose absolute expiry has passed are gone.
  data_ = disk_;
}

void Server::kill_process() {
  page_cache_survives_ = true;
  node_.crash();
}

void Server::accept(Command command, ReplyTo<redis::Reply> reply) { inbox_.put(Job{std::move(command), std::move(reply)}); }

void Server::serve() {
  sim::Stream stream = node_.engine().stream(name() + ".redis");
  std::vector<Change> changes;
  while (auto next = inbox_.get_unless_killed()) {
    Job& job = *next;
    sim::sleep_for(config_.service.sample_duration(stream));
    redis::Reply r;
    if (role_ == Role::replica && is_write(job.command.op)) {
      r = redis::Reply::error("READONLY You can't write against a read only replica.");
    } else {
      changes.clear();
      r = data_.execute(job.command, node_.clock().now(), &changes);
      if (!changes.empty()) {
        ++applied_;
        persist(changes);
        replicate(changes);
      }
    }
    job.reply.send(std::move(r));
  }
}

void Server::persist(const std::vector<Change>& changes) {
  switch (config_.persistence) {
    case Persistence::none: return;
    case Persistence::aof_always:
      for (const Change& c : changes) disk_.apply(c);
      return;
    case Persistence::aof_everysec: unsynced_.insert(unsynced_.end(), changes.begin(), changes.end()); return;
  }
}

void Server::replicate(const std::vector<Change>& changes) {
  sim::Engine& engine = node_.engine();
  for (std::size_t i = 0; i < replicas_.size(); ++i) {
    Server* r = replicas_[i];
    // A partition cuts the stream; the replica stays behind (it would resync later).
    if (net_.is_partitioned(node_.id(), r->node_.id())) continue;
    const sim::Time at = std::max(engine.now() + config_.replication_lag.sample_duration(lag_stream_), replica_clear_[i]);
    replica_clear_[i] = at;
    engine.at(at, r->node_.id(), [this, r, changes, epoch = r->replication_epoch_, crashes = crashes_] {
      if (crashes_ != crashes || r->role_ != Role::replica || r->replication_epoch_ != epoch) return;
      for (const Change& c : changes) r->data_.apply(c);
      ++r->applied_;
      r->persist(changes);
    });
  }
}

void Server::add_replica(Server& replica) {
  if (&replica == this) throw sim::UsageError("models::redis::Server::add_replica: a server cannot replicate itself");
  if (replica.master_ != nullptr) {
    auto& siblings = replica.master_->replicas_;
    const auto it = std::find(siblings.begin(), siblings.end(), &replica);
    replica.master_->replica_clear_.erase(replica.master_->replica_clear_.begin() + (it - siblings.begin()));
    siblings.erase(it);
  }
  ++replica.replication_epoch_;
  replica.role_ = Role::replica;
  replica.master_ = this;
  replica.data_ = data_;  // full resynchronisation
  replica.applied_ = applied_;
  replica.replicas_.clear();
  replica.replica_clear_.clear();
  replicas_.push_back(&replica);
  replica_clear_.push_back(node_.engine().now());
}

void Server::promote() {
  if (master_ != nullptr) {
    auto& siblings = master_->replicas_;
    const auto it = std::find(siblings.begin(), siblings.end(), this);
    if (it != siblings.end()) {
      master_->replica_clear_.erase(master_->replica_clear_.begin() + (it - siblings.begin()));
      siblings.erase(it);
    }
  }
  ++replication_epoch_;
  master_ = nullptr;
  role_ = Role::master;
}

}  // namespace models::redis
