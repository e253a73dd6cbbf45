#include "models/coord/zookeeper.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace models::zk {

const char* to_string(Code code) {
  switch (code) {
    case Code::ok: return "ok";
    case Code::no_node: return "NoNode";
    case Code::node_exists: return "NodeExists";
    case Code::not_empty: return "NotEmpty";
    case Code::bad_version: return "BadVersion";
    case Code::session_expired: return "SessionExpired";
    case Code::no_children_for_ephemerals: return "NoChildrenForEphemerals";
  }
  return "?";
}

std::string call_text(const Request& r) {
  switch (r.kind) {
    case Request::Kind::open_session: return fmt::format("connect (session timeout {} ms)", std::chrono::duration_cast<std::chrono::milliseconds>(r.session_timeout).count());
    case Request::Kind::close_session: return "close";
    case Request::Kind::ping: return "ping";
    case Request::Kind::create: {
      const bool ephemeral = r.mode == CreateMode::ephemeral || r.mode == CreateMode::ephemeral_sequential;
      const bool sequential = r.mode == CreateMode::persistent_sequential || r.mode == CreateMode::ephemeral_sequential;
      return fmt::format("create{}{} {}{}", ephemeral ? " -e" : "", sequential ? " -s" : "", r.path, r.data.empty() ? "" : " " + r.data);
    }
    case Request::Kind::remove: return fmt::format("delete {}{}", r.path, r.version < 0 ? "" : fmt::format(" -v {}", r.version));
    case Request::Kind::exists: return fmt::format("exists {}{}", r.path, r.watch ? " watch" : "");
    case Request::Kind::get_data: return fmt::format("get {}{}", r.path, r.watch ? " watch" : "");
    case Request::Kind::set_data: return fmt::format("set {} '{}'", r.path, r.data);
    case Request::Kind::get_children: return fmt::format("ls {}{}", r.path, r.watch ? " watch" : "");
  }
  return "?";
}

std::string reply_text(const Response& r) {
  if (r.code != Code::ok) return to_string(r.code);
  // A create's zxid: the fencing token a lock recipe takes from it, which a story needs to show.
  if (!r.path.empty()) return fmt::format("ok {} (czxid {})", r.path, r.stat ? r.stat->czxid : r.zxid);
  if (!r.children.empty()) return fmt::format("[{}]", fmt::join(r.children, ", "));
  return "ok";
}

const char* to_string(WatchEvent::Type type) {
  switch (type) {
    case WatchEvent::Type::node_created: return "NodeCreated";
    case WatchEvent::Type::node_deleted: return "NodeDeleted";
    case WatchEvent::Type::node_data_changed: return "NodeDataChanged";
    case WatchEvent::Type::node_children_changed: return "NodeChildrenChanged";
    case WatchEvent::Type::session_expired: return "Expired";
  }
  return "?";
}

const char* to_string(ConnectionState state) {
  switch (state) {
    case ConnectionState::connected: return "CONNECTED";
    case ConnectionState::suspended: return "SUSPENDED";
    case ConnectionState::reconnected: return "RECONNECTED";
    case ConnectionState::lost: return "LOST";
  }
  return "?";
}

// --- Server ---------------------------------------------------------------

Server::Server(Network& net, Node& node, ServerConfig config)
    : net_(net), node_(node), config_(std::move(config)), inbox_(node.name() + ".zk") {
  if (config_.tick_time <= sim::Duration::zero()) throw sim::UsageError("models::zk::Server: tick_time must be positive");
  nodes_["/"] = ZNode{};
}

void Server::start() {
  node_.spawn(node_.name() + ".zk", [this] { serve(); }, sim::SpawnOptions{.daemon = true});
  // Expiry is work only time finishes: it keeps no run alive by itself. A client waiting
  // on a watch keeps the run open instead (Watch::wait).
  node_.spawn(node_.name() + ".zk-sessions", [this] { track_sessions(); }, sim::SpawnOptions{.background = true});
}

void Server::accept(Request request, ReplyTo<Response> reply) { inbox_.put(Job{std::move(request), std::move(reply)}); }

std::optional<Stat> Server::stat(const std::string& path) const {
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return std::nullopt;
  return it->second.stat;
}

void Server::serve() {
  sim::Stream stream = node_.engine().stream(node_.name() + ".zk");
  while (auto next = inbox_.get_unless_killed()) {
    Job& job = *next;
    const Request::Kind k = job.request.kind;
    const bool write = k == Request::Kind::open_session || k == Request::Kind::close_session || k == Request::Kind::create ||
                       k == Request::Kind::remove || k == Request::Kind::set_data;
    sim::sleep_for((write ? config_.write_service : config_.read_service).sample_duration(stream));
    Response response = execute(job.request, job.reply.caller());
    // A write the server refuses (NodeExists, NoNode, BadVersion, ...) is still a transaction
    // (an error transaction) and takes a zxid; one on a dead session never becomes one.
    if (write && response.code != Code::ok && response.code != Code::session_expired) response.zxid = ++zxid_;
    if (!write) {
      job.reply.send(std::move(response));
      continue;
    }
    node_.engine().after(config_.write_commit.sample_duration(stream), node_.id(),
                         [reply = std::move(job.reply), response = std::move(response)]() mutable { reply.send(std::move(response)); });
  }
}

void Server::track_sessions() {
  for (;;) {
    node_.clock().sleep_for(config_.tick_time);
    const sim::Time now = node_.clock().monotonic();
    std::vector<SessionId> expired;
    for (const auto& [id, session] : sessions_)
      if (session.deadline <= now) expired.push_back(id);
    for (SessionId id : expired) expire(id);
  }
}

void Server::expire(SessionId session, const char* trace_kind) {
  sessions_.erase(session);  // first: its own watches die with it
  for (auto* watches : {&data_watches_, &child_watches_})
    for (auto& [path, sessions] : *watches) sessions.erase(session);
  ++zxid_;  // closeSession is one transaction deleting every ephemeral node
  std::vector<std::string> ephemerals;
  for (const auto& [path, znode] : nodes_)
    if (znode.stat.ephemeral_owner == session) ephemerals.push_back(path);
  node_.engine().record(node_.engine().trace().kind(trace_kind), static_cast<std::uint64_t>(session),
                        static_cast<std::int64_t>(ephemerals.size()));
  for (const auto& path : ephemerals) {
    nodes_.erase(path);
    removed_[path] = node_.engine().now();
    children_changed(parent_of(path), -1);
    trigger(data_watches_, {WatchEvent::Type::node_deleted, path, zxid_});
    trigger(child_watches_, {WatchEvent::Type::node_deleted, path, zxid_});
    trigger(child_watches_, {WatchEvent::Type::node_children_changed, parent_of(path), zxid_});
  }
}

void Server::children_changed(const std::string& parent, int delta) {
  Stat& stat = nodes_[parent].stat;
  ++stat.cversion;
  stat.pzxid = zxid_;
  stat.num_children += delta;
}

void Server::notify(SessionId session, const WatchEvent& event) {
  auto it = sessions_.find(session);
  if (it == sessions_.end()) return;
  Session& s = it->second;
  const Notification n{s.next_seq++, event};
  s.unacknowledged.push_back(n);
  ++notifications_;
  net_.send(node_.id(), s.client_node, [client = s.client, session, n] { client->receive(session, n); });
}

void Server::trigger(std::map<std::string, std::set<SessionId>>& watches, const WatchEvent& event) {
  auto it = watches.find(event.path);
  if (it == watches.end()) return;
  const std::set<SessionId> sessions = std::move(it->second);
  watches.erase(it);  // one-shot
  for (SessionId s : sessions) notify(s, event);
}

std::string Server::parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::vector<std::string> Server::children_of(const std::string& path) const {
  const std::string prefix = path == "/" ? "/" : path + "/";
  std::vector<std::string> out;
  for (auto it = nodes_.lower_bound(prefix); it != nodes_.end() && it->first.starts_with(prefix); ++it) {
    std::string name = it->first.substr(prefix.size());
    if (!name.empty() && name.find('/') == std::string::npos) out.push_back(std::move(name));
  }
  return out;
}

Code Server::create(const Request& r, Response& out) {
  if (r.path.empty() || r.path[0] != '/') return Code::no_node;
  const std::string parent = parent_of(r.path);
  auto p = nodes_.find(parent);
  if (p == nodes_.end()) return Code::no_node;
  std::string path = r.path;
  if (r.mode == CreateMode::persistent_sequential || r.mode == CreateMode::ephemeral_sequential) {
    // The parent's count of child creates: ZooKeeper keeps that count, and tells it as cversion
    // converted to creates and deletes (2 x creates - children), which is what Stat holds here.
    const Stat& ps = p->second.stat;
    std::string seq = std::to_string((ps.cversion + ps.num_children) / 2);
    path += std::string(10 - std::min<std::size_t>(10, seq.size()), '0') + seq;  // %010d
  }
  // In ZooKeeper's order of checks: a taken name before an ephemeral parent.
  if (nodes_.count(path) > 0) return Code::node_exists;
  if (p->second.stat.ephemeral_owner != 0) return Code::no_children_for_ephemerals;
  ++zxid_;
  children_changed(parent, +1);
  const bool ephemeral = r.mode == CreateMode::ephemeral || r.mode == CreateMode::ephemeral_sequential;
  ZNode& z = nodes_[path];
  z.data = r.data;
  z.stat = Stat{.czxid = zxid_, .mzxid = zxid_, .ephemeral_owner = ephemeral ? r.session : 0, .pzxid = zxid_};
  out.path = path;
  out.stat = z.stat;
  trigger(data_watches_, {WatchEvent::Type::node_created, path, zxid_});
  trigger(child_watches_, {WatchEvent::Type::node_children_changed, parent, zxid_});
  return Code::ok;
}

Code Server::remove(const std::string& path, std::int32_t version) {
  auto it = nodes_.find(path);
  if (it == nodes_.end() || path == "/") return Code::no_node;
  if (version != -1 && version != it->second.stat.version) return Code::bad_version;
  if (!children_of(path).empty()) return Code::not_empty;
  ++zxid_;
  nodes_.erase(it);
  removed_[path] = node_.engine().now();
  children_changed(parent_of(path), -1);
  trigger(data_watches_, {WatchEvent::Type::node_deleted, path, zxid_});
  trigger(child_watches_, {WatchEvent::Type::node_deleted, path, zxid_});
  trigger(child_watches_, {WatchEvent::Type::node_children_changed, parent_of(path), zxid_});
  return Code::ok;
}

Response Server::execute(const Request& r, sim::NodeId caller) {
  Response out;
  if (r.kind == Request::Kind::open_session) {
    const auto timeout = std::clamp(r.session_timeout, 2 * config_.tick_time, 20 * config_.tick_time);
    const SessionId id = next_session_++;
    ++zxid_;  // createSession
    sessions_[id] = Session{timeout, node_.clock().monotonic() + timeout, caller, r.client, 1, {}};
    out.session = id;
    out.session_timeout = timeout;
    out.zxid = zxid_;
    return out;
  }
  auto session = sessions_.find(r.session);
  if (session == sessions_.end()) {
    out.code = Code::session_expired;
    out.zxid = zxid_;
    return out;
  }
  // Any request from the client touches its session, not only pings.
  session->second.deadline = node_.clock().monotonic() + session->second.timeout;
  switch (r.kind) {
    case Request::Kind::open_session: break;
    case Request::Kind::close_session: expire(r.session, "zk.session_closed"); break;
    case Request::Kind::ping: {
      auto& pending = session->second.unacknowledged;
      std::erase_if(pending, [&](const Notification& n) { return n.seq <= r.acknowledged; });
      out.unacknowledged = pending;
      break;
    }
    case Request::Kind::create: out.code = create(r, out); break;
    case Request::Kind::remove: out.code = remove(r.path, r.version); break;
    case Request::Kind::exists:
      out.stat = stat(r.path);
      if (r.watch) data_watches_[r.path].insert(r.session);  // set on an absent node too
      break;
    case Request::Kind::get_data: {
      auto it = nodes_.find(r.path);
      if (it == nodes_.end()) {
        out.code = Code::no_node;  // and no watch is left
        break;
      }
      out.data = it->second.data;
      out.stat = it->second.stat;
      if (r.watch) data_watches_[r.path].insert(r.session);
      break;
    }
    case Request::Kind::set_data: {
      auto it = nodes_.find(r.path);
      if (it == nodes_.end()) {
        out.code = Code::no_node;
      } else if (r.version != -1 && r.version != it->second.stat.version) {
        out.code = Code::bad_version;
      } else {
        ++zxid_;
        it->second.data = r.data;
        it->second.stat.mzxid = zxid_;
        ++it->second.stat.version;
        out.stat = it->second.stat;
        trigger(data_watches_, {WatchEvent::Type::node_data_changed, r.path, zxid_});
      }
      break;
    }
    case Request::Kind::get_children:
      if (nodes_.count(r.path) == 0) {
        out.code = Code::no_node;
        break;
      }
      out.children = children_of(r.path);
      if (r.watch) child_watches_[r.path].insert(r.session);
      break;
  }
  out.zxid = zxid_;
  return out;
}

// --- Client ---------------------------------------------------------------

KeeperError::KeeperError(Code code, const std::string& path)
    : std::runtime_error(std::string("KeeperErrorCode = ") + to_string(code) + " for " + path), code_(code) {}

WatchEvent Watch::wait() {
  const sim::HoldOpen open(sim::engine("models::zk::Watch::wait"));
  return event_.get();
}

WatchEvent Watch::wait_for(sim::Duration d) { return event_.get_for(d); }

Client::Client(Network& net, Node& from, Server& server, ClientConfig config)
    : net_(net), from_(from), server_(server), config_(config) {
  from_.on_crash([this] {
    // The process and its connection are gone; the server expires the session in time.
    session_ = 0;
    state_ = ConnectionState::lost;
    heartbeat_running_ = false;
    watchers_.clear();
    early_.clear();
  });
}

Response Client::run(Request request, sim::Duration timeout) {
  Response r = call_server<Response>(net_, from_.id(), server_, request, timeout);
  if (r.code != Code::session_expired || request.session != session_) last_heard_ = from_.clock().monotonic();
  if (r.code == Code::session_expired && request.session == session_ && session_ != 0) lose_session();
  return r;
}

Response Client::checked(Request request, Watch* watch, bool children) {
  request.session = session_;
  request.watch = watch != nullptr;
  const std::uint64_t id = arm(watch, request.path, children);
  Response r = run(request, config_.request_timeout);
  const bool kept = r.code == Code::ok || (r.code == Code::no_node && request.kind == Request::Kind::exists);
  if (id != 0 && !kept) disarm(id);
  if (r.code != Code::ok && !(r.code == Code::no_node && request.kind == Request::Kind::exists))
    throw KeeperError(r.code, request.path);
  return r;
}

void Client::open_session() {
  Request request{.kind = Request::Kind::open_session, .session_timeout = config_.session_timeout, .client = this};
  const Response r = run(request, config_.request_timeout);
  session_ = r.session;
  negotiated_ = r.session_timeout;
  acknowledged_ = 0;
  early_.clear();
  last_heard_ = from_.clock().monotonic();
  set_state(ever_connected_ ? ConnectionState::reconnected : ConnectionState::connected);
  ever_connected_ = true;
}

void Client::connect() {
  closed_ = false;
  open_session();
  if (!heartbeat_running_) {
    heartbeat_running_ = true;
    from_.spawn(from_.name() + ".zk-ping", [this] { heartbeat(); }, sim::SpawnOptions{.background = true});
  }
}

void Client::close() {
  if (session_ == 0) return;
  Request request{.kind = Request::Kind::close_session, .session = session_};
  closed_ = true;
  session_ = 0;
  run(request, config_.request_timeout);
  set_state(ConnectionState::lost);
  auto watchers = std::move(watchers_);
  watchers_.clear();
  for (auto& [path, w] : watchers) w.promise.set_value(WatchEvent{WatchEvent::Type::session_expired, path, 0});
}

void Client::lose_session() {
  session_ = 0;
  early_.clear();
  set_state(ConnectionState::lost);
  // Every watcher hears Expired, as ZooKeeper's client tells them all.
  auto watchers = std::move(watchers_);
  watchers_.clear();
  for (auto& [path, w] : watchers) w.promise.set_value(WatchEvent{WatchEvent::Type::session_expired, path, 0});
}

void Client::heartbeat() {
  // The ZooKeeper client pings when idle for a third of the session timeout and counts
  // the connection lost when it heard nothing for two thirds (its read timeout); it then
  // tries again about every second.
  constexpr sim::Duration retry = std::chrono::seconds(1);
  for (;;) {
    const bool up = state_ == ConnectionState::connected || state_ == ConnectionState::reconnected;
    from_.clock().sleep_for(up ? negotiated_ / 3 : retry);
    if (closed_) {
      heartbeat_running_ = false;
      return;
    }
    if (session_ == 0) {
      try {
        open_session();  // after LOST, Curator opens a new session
      } catch (const sim::Timeout&) {
      }
      continue;
    }
    const sim::Duration read_timeout = negotiated_ * 2 / 3;
    const sim::Duration left = last_heard_ + read_timeout - from_.clock().monotonic();
    const SessionId session = session_;
    try {
      const Response r = run({.kind = Request::Kind::ping, .session = session, .acknowledged = acknowledged_},
                             up ? std::max(left, sim::Duration{std::chrono::milliseconds(1)}) : retry);
      if (r.code != Code::ok || session != session_) continue;  // LOST: handled in run()
      if (state_ == ConnectionState::suspended) set_state(ConnectionState::reconnected);
      for (const Notification& n : r.unacknowledged) receive(session, n);
    } catch (const sim::Timeout&) {
      if (state_ == ConnectionState::connected || state_ == ConnectionState::reconnected)
        set_state(ConnectionState::suspended);
    }
  }
}

void Client::receive(SessionId session, const Notification& n) {
  if (session != session_ || n.seq <= acknowledged_) return;  // an old session's, or a repeat
  early_.emplace(n.seq, n.event);
  for (auto it = early_.find(acknowledged_ + 1); it != early_.end(); it = early_.find(acknowledged_ + 1)) {
    const WatchEvent event = it->second;
    early_.erase(it);
    ++acknowledged_;
    deliver(event);
  }
}

void Client::deliver(const WatchEvent& event) {
  ++events_received_;
  const bool data = event.type != WatchEvent::Type::node_children_changed;
  const bool children = event.type == WatchEvent::Type::node_children_changed || event.type == WatchEvent::Type::node_deleted;
  auto [first, last] = watchers_.equal_range(event.path);
  std::vector<sim::Promise<WatchEvent>> fired;
  for (auto it = first; it != last;) {
    if (it->second.children ? children : data) {
      fired.push_back(std::move(it->second.promise));
      it = watchers_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& promise : fired) promise.set_value(event);
}

void Client::set_state(ConnectionState state) {
  if (state == state_) return;
  state_ = state;
  from_.engine().record(from_.engine().trace().kind("zk.state"), static_cast<std::uint64_t>(session_),
                        static_cast<std::int64_t>(state));
  for (const auto& listener : listeners_) listener(state);
}

std::uint64_t Client::arm(Watch* watch, const std::string& path, bool children) {
  if (watch == nullptr) return 0;
  sim::Promise<WatchEvent> promise("zk watch " + path);
  watch->event_ = promise.get_future();
  const std::uint64_t id = ++next_watcher_;
  watchers_.emplace(path, Watcher{id, children, std::move(promise)});
  return id;
}

void Client::disarm(std::uint64_t id) {
  std::erase_if(watchers_, [id](const auto& entry) { return entry.second.id == id; });
}

std::string Client::create(const std::string& path, const std::string& data, CreateMode mode, Stat* stat) {
  const Response r = checked({.kind = Request::Kind::create, .path = path, .data = data, .mode = mode});
  if (stat != nullptr) *stat = *r.stat;
  return r.path;
}

void Client::remove(const std::string& path, std::int32_t version) {
  checked({.kind = Request::Kind::remove, .path = path, .version = version});
}

std::optional<Stat> Client::exists(const std::string& path, Watch* watch) {
  return checked({.kind = Request::Kind::exists, .path = path}, watch).stat;
}

std::string Client::get_data(const std::string& path, Watch* watch, Stat* stat) {
  Response r = checked({.kind = Request::Kind::get_data, .path = path}, watch);
  if (stat != nullptr) *stat = *r.stat;
  return std::move(r.data);
}

Stat Client::set_data(const std::string& path, const std::string& data, std::int32_t version) {
  return *checked({.kind = Request::Kind::set_data, .path = path, .data = data, .version = version}).stat;
}

std::vector<std::string> Client::get_children(const std::string& path, Watch* watch) {
  return checked({.kind = Request::Kind::get_children, .path = path}, watch, true).children;
}

}  // namespace models::zk
