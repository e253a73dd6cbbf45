#include "models/checkers/locks.hpp"

#include <algorithm>
#include <chrono>

#include "models/coord/consul.hpp"
#include "models/coord/etcd.hpp"
#include "models/coord/zookeeper.hpp"
#include "models/redis/redlock.hpp"
#include "models/redis/sentinel.hpp"
#include "models/redis/server.hpp"
#include "sim/engine.hpp"
#include "sim/process.hpp"

namespace models::checkers {

namespace {
// The monitor orders holds by when they were recorded and peeks at the lock services' state
// from the holder's step: such a step may depend on any other (sim/footprints.hpp).
void depends_on_everything() {
  if (sim::Engine* engine = sim::Engine::current()) engine->touch_everything();
}
}  // namespace

Hold::Hold(Hold&& other) noexcept : monitor_(other.monitor_), index_(other.index_) { other.monitor_ = nullptr; }

Hold& Hold::operator=(Hold&& other) noexcept {
  if (this != &other) {
    release();
    monitor_ = other.monitor_;
    index_ = other.index_;
    other.monitor_ = nullptr;
  }
  return *this;
}

bool Hold::granted() const {
  if (monitor_ == nullptr) return false;
  depends_on_everything();
  return monitor_->records_[index_].granted();
}
void Hold::step() {
  if (monitor_ != nullptr) monitor_->step(index_);
}
void Hold::wrote() {
  if (monitor_ != nullptr) monitor_->wrote(index_);
}
void Hold::rejected() {
  if (monitor_ != nullptr) monitor_->rejected(index_);
}
void Hold::unlocking_blindly() {
  if (monitor_ != nullptr) monitor_->unlocking_blindly(index_);
}
void Hold::release() {
  if (monitor_ != nullptr) monitor_->release(index_);
  monitor_ = nullptr;
}

Hold LockMonitor::acquired(std::string lock, std::string who, GrantedPeek granted, std::optional<sim::Duration> lease,
                           LockService service, EndedPeek ended) {
  depends_on_everything();
  const sim::Time now = sim::now();
  Record r{std::move(lock), std::move(who), now, sim::kNever, std::move(granted), lease ? now + *lease : sim::kNever};
  r.service = service;
  r.ended = std::move(ended);
  records_.push_back(std::move(r));
  return Hold(*this, records_.size() - 1);
}

void LockMonitor::renewed(std::size_t index, sim::Duration lease) {
  depends_on_everything();
  Record& r = records_[index];
  const sim::Time now = sim::now();
  r.renewals.push_back(now);
  r.lease_until = now + lease;
}

HoldEnd LockMonitor::end_of(const Record& r, sim::Time end) {
  if (r.end != HoldEnd::held) return r.end;
  if (r.deleted_by) return HoldEnd::deleted;
  if (r.lease_until != sim::kNever && r.lease_until < std::min(r.until, end)) return HoldEnd::expired;
  return HoldEnd::held;
}

void LockMonitor::step(std::size_t index) {
  depends_on_everything();
  if (!records_[index].granted()) ++expiry_violations_;
}

void LockMonitor::wrote(std::size_t index) {
  depends_on_everything();
  Record& r = records_[index];
  auto [it, first] = last_writer_.try_emplace(r.lock, index);
  if (!first) {
    if (it->second > index) ++stale_accepted_;  // a later holder already wrote
    it->second = std::max(it->second, index);
  }
  r.wrote = true;
}

void LockMonitor::unlocking_blindly(std::size_t index) {
  depends_on_everything();
  const Record& mine = records_[index];
  for (std::size_t i = 0; i < records_.size(); ++i) {
    const Record& other = records_[i];
    if (i != index && other.lock == mine.lock && other.until == sim::kNever && other.granted()) {
      removes(index, i);
      return;
    }
  }
}

void LockMonitor::unlocking_again(std::size_t index, std::size_t victim) {
  depends_on_everything();
  const Record& other = records_[victim];
  if (victim != index && other.until == sim::kNever && other.granted()) removes(index, victim);
}

void LockMonitor::removes(std::size_t index, std::size_t i) {
  ++wrong_unlocks_;
  records_[index].removed = i;
  Record& victim = records_[i];
  victim.deleted_by = index;
  victim.service_until = sim::now();
}

void LockMonitor::release(std::size_t index) {
  depends_on_everything();
  Record& r = records_[index];
  const sim::Time now = sim::now();
  r.until = now;
  if (sim::this_process_killed()) {
    // The process unwinds (its node crashed, or the run is over and the servers may be going
    // too): no peek. What the service did before is known; the crash is the end otherwise.
    if (r.deleted_by) {
      r.end = HoldEnd::deleted;
    } else if (r.lease_until != sim::kNever && r.lease_until < now) {
      r.end = HoldEnd::expired;
      r.service_until = r.lease_until;
    } else if (!sim::engine().is_up(sim::this_node())) {
      r.end = HoldEnd::crashed;
    }
    return;
  }
  if (r.granted()) {
    r.end = HoldEnd::released;
    return;
  }
  // The service ended the hold before its holder let go: by another's DEL, by expiry, or
  // with the session (ZooKeeper) or the lease (etcd) it was bound to.
  if (r.deleted_by) {
    r.end = HoldEnd::deleted;
  } else if (r.lease_until != sim::kNever && r.lease_until <= now) {
    r.end = HoldEnd::expired;
    r.service_until = r.lease_until;
  } else if (r.service == LockService::lease) {
    r.end = HoldEnd::expired;  // by its holder's clock, stepped or drifting since: when is not known
  } else if (r.service == LockService::zookeeper || r.service == LockService::etcd || r.service == LockService::pg_advisory ||
             r.service == LockService::mariadb_user_lock || r.service == LockService::consul) {
    r.end = HoldEnd::session_lost;
    if (r.ended && r.ended() <= now) r.service_until = r.ended();
  } else {
    r.end = HoldEnd::lost;  // a failover or a restart lost it: no time the holder could see
  }
}

LockFindings LockMonitor::findings(sim::Time end) const {
  LockFindings f;
  f.holds = records_.size();
  f.lease_expiry_violations = expiry_violations_;
  f.stale_writes_accepted = stale_accepted_;
  f.stale_writes_rejected = stale_rejected_;
  f.wrong_unlocks = wrong_unlocks_;
  // Per lock, sweep the holds' intervals: a hold starting while another is open overlaps.
  std::map<std::string, std::vector<std::pair<sim::Time, int>>> edges;
  for (const Record& r : records_) {
    const sim::Time until = std::min(r.until, end);
    if (until <= r.from) continue;
    edges[r.lock].push_back({r.from, +1});
    edges[r.lock].push_back({until, -1});
  }
  sim::Duration overlap{};
  for (auto& [lock, list] : edges) {
    std::sort(list.begin(), list.end());  // at one instant, ends (-1) before starts (+1)
    int open = 0;
    sim::Time since{};
    for (const auto& [t, delta] : list) {
      if (open >= 2) overlap += t - since;
      since = t;
      if (delta > 0 && open > 0) ++f.overlapping_holders;
      open += delta;
      f.most_at_once = std::max<std::uint64_t>(f.most_at_once, static_cast<std::uint64_t>(open));
    }
  }
  f.overlap_ms = std::chrono::duration<double, std::milli>(overlap).count();
  return f;
}

namespace {
bool grants(const redis::Server& server, const std::string& lock, const std::string& value) {
  if (!server.node().is_up()) return false;
  const redis::Value* v = server.keyspace().find(lock, server.node().clock().now());
  return v != nullptr && (v->is_hash ? v->hash.count(value) > 0 : v->text == value);
}
}  // namespace

std::uint64_t LockObservations::redis_commands() const {
  std::uint64_t n = redis_commands_;
  for (const redis::Redlock* r : redlocks_) n += r->commands_sent();
  return n;
}

bool LockObservations::redis_grants(const std::string& lock, const std::string& value) const {
  if (servers_.redis_nodes.empty()) return false;
  return grants(servers_.sentinel != nullptr ? servers_.sentinel->master() : *servers_.redis_nodes.front(), lock, value);
}

bool LockObservations::redlock_grants(const std::string& lock, const std::string& value) const {
  const auto& nodes = servers_.redis_nodes;
  const auto n = std::count_if(nodes.begin(), nodes.end(), [&](const redis::Server* s) { return grants(*s, lock, value); });
  return static_cast<std::size_t>(n) >= nodes.size() / 2 + 1;
}

bool LockObservations::zookeeper_has(const std::string& path) const {
  return servers_.zookeeper != nullptr && servers_.zookeeper->exists(path);
}

bool LockObservations::etcd_has(const std::string& key) const {
  return servers_.etcd != nullptr && servers_.etcd->find(key) != nullptr;
}

sim::Time LockObservations::zookeeper_removed_at(const std::string& path) const {
  return servers_.zookeeper != nullptr ? servers_.zookeeper->removed_at(path) : sim::kNever;
}

bool LockObservations::consul_holds(const std::string& key, std::uint64_t session) const {
  return servers_.consul != nullptr && servers_.consul->holds(key, session);
}

sim::Time LockObservations::consul_invalidated_at(std::uint64_t session) const {
  return servers_.consul != nullptr ? servers_.consul->invalidated_at(session) : sim::kNever;
}

void LockObservations::etcd_unlock_retried(const std::string& key, std::size_t index) {
  const auto it = etcd_holds_.find(key);
  if (it != etcd_holds_.end()) locks_.unlocking_again(index, it->second);
}

sim::Time LockObservations::etcd_removed_at(const std::string& key) const {
  return servers_.etcd != nullptr ? servers_.etcd->removed_at(key) : sim::kNever;
}

}  // namespace models::checkers
