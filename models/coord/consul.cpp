#include "models/coord/consul.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace models::consul {

namespace {
long long ms(sim::Duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); }
}  // namespace

std::string call_text(const Request& r) {
  switch (r.kind) {
    case Request::Kind::create_session:
      return fmt::format("PUT /v1/session/create ttl={}ms lock-delay={}ms behavior={}{}", ms(r.options.ttl), ms(r.options.lock_delay),
                         r.options.behavior == Behavior::release ? "release" : "delete", r.options.node_check ? "" : " no-checks");
    case Request::Kind::renew: return fmt::format("PUT /v1/session/renew/{}", r.session);
    case Request::Kind::destroy: return fmt::format("PUT /v1/session/destroy/{}", r.session);
    case Request::Kind::get:
      return r.wait_index == 0 ? fmt::format("GET /v1/kv/{}", r.key)
                               : fmt::format("GET /v1/kv/{}?index={}&wait={}ms", r.key, r.wait_index, ms(r.wait));
    case Request::Kind::put: return fmt::format("PUT /v1/kv/{} \"{}\"", r.key, r.value);
    case Request::Kind::del: return fmt::format("DELETE /v1/kv/{}", r.key);
    case Request::Kind::acquire: return fmt::format("PUT /v1/kv/{}?acquire={}", r.key, r.session);
    case Request::Kind::release: return fmt::format("PUT /v1/kv/{}?release={}", r.key, r.session);
  }
  return "?";
}

std::string reply_text(const Response& r) {
  if (!r.error.empty()) return fmt::format("error: {}, index {}", r.error, r.index);
  if (r.missing) return fmt::format("no such key (404), index {}", r.index);
  if (r.kv)
    return fmt::format("index {}, {} {} (lock index {})", r.index, r.kv->key,
                       r.kv->session == 0 ? std::string("held by no session") : fmt::format("held by session {}", r.kv->session),
                       r.kv->lock_index);
  std::string out = fmt::format("{}, index {}", r.ok ? "true" : "false", r.index);
  if (r.session != 0) out += fmt::format(", session {}", r.session);
  return out;
}

Server::Server(Network& net, Node& node, ServerConfig config)
    : net_(net), node_(node), config_(std::move(config)), inbox_(node.name() + ".consul") {}

void Server::start() {
  node_.spawn(node_.name() + ".consul", [this] { serve(); }, sim::SpawnOptions{.daemon = true});
  node_.spawn(node_.name() + ".consul-sessions", [this] {
    for (;;) {
      node_.clock().sleep_for(config_.tick);
      tick();
    }
  }, sim::SpawnOptions{.background = true});
}

void Server::accept(Request request, ReplyTo<Response> reply) { inbox_.put(Job{std::move(request), std::move(reply)}); }

sim::Time Server::due(const Session& s) const {
  sim::Time at = s.expires_at;
  if (s.options.node_check)
    if (auto down = down_since_.find(s.node); down != down_since_.end()) at = std::min(at, down->second + config_.failure_detection);
  return at;
}

bool Server::holds(const std::string& key, std::uint64_t session) const {
  const auto kv = keys_.find(key);
  const auto s = sessions_.find(session);
  if (kv == keys_.end() || kv->second.session != session || s == sessions_.end()) return false;
  return due(s->second) > node_.clock().monotonic();  // due but not yet swept: the server's next step invalidates it
}

sim::Time Server::invalidated_at(std::uint64_t session) const {
  const auto it = invalidated_.find(session);
  return it == invalidated_.end() ? sim::kNever : it->second;
}

sim::Time Server::lock_delay_until(const std::string& key) const {
  const auto it = lock_delay_.find(key);
  return it == lock_delay_.end() ? sim::Time{} : it->second;
}

void Server::serve() {
  sim::Stream stream = node_.engine().stream(node_.name() + ".consul");
  while (auto next = inbox_.get_unless_killed()) {
    Job& job = *next;
    sim::sleep_for(config_.service.sample_duration(stream));
    tick();
    bool answered = true;
    Response out = execute(job.request, job.reply, answered);
    if (answered) job.reply.send(std::move(out));
  }
}

void Server::tick() {
  const sim::Time now = node_.clock().monotonic();
  // The health checks: a node down since some time (gossip notices it after failure_detection).
  for (const auto& [id, s] : sessions_)
    if (s.options.node_check && !node_.engine().is_up(s.node)) down_since_.try_emplace(s.node, now);
  for (auto it = down_since_.begin(); it != down_since_.end();)
    it = node_.engine().is_up(it->first) ? down_since_.erase(it) : std::next(it);
  std::vector<std::pair<std::uint64_t, sim::Time>> doomed;
  for (const auto& [id, s] : sessions_)
    if (const sim::Time at = due(s); at <= now) doomed.emplace_back(id, at);
  for (const auto& [id, at] : doomed) invalidate(id, at, false);
  for (auto it = blocked_.begin(); it != blocked_.end();) {
    if (it->until > now) {
      ++it;
      continue;
    }
    it->reply.send(answer(it->key));
    it = blocked_.erase(it);
  }
}

void Server::invalidate(std::uint64_t id, sim::Time at, bool by_request) {
  const auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  const Session s = it->second;
  sessions_.erase(it);
  if (!by_request) invalidated_[id] = node_.engine().now() - (node_.clock().monotonic() - at);
  ++index_;
  // Consul applies the lock-delay from the moment of the invalidation, whichever the behavior.
  const sim::Duration delay = std::min(s.options.lock_delay, kMaxLockDelay);
  std::vector<std::string> held;
  for (const auto& [key, kv] : keys_)
    if (kv.session == id) held.push_back(key);
  for (const std::string& key : held) {
    if (s.options.behavior == Behavior::del) {
      keys_.erase(key);
    } else {
      keys_[key].session = 0;
      keys_[key].modify_index = index_;
    }
    if (delay > sim::Duration{}) lock_delay_[key] = at + delay;
    changed(key);
  }
}

void Server::changed(const std::string& key) {
  for (auto it = blocked_.begin(); it != blocked_.end();) {
    if (it->key != key) {
      ++it;
      continue;
    }
    it->reply.send(answer(key));
    it = blocked_.erase(it);
  }
}

Response Server::answer(const std::string& key) const {
  Response out;
  out.index = index_;
  if (const auto it = keys_.find(key); it != keys_.end()) {
    out.kv = it->second;
    out.index = it->second.modify_index;
  } else {
    out.missing = true;
  }
  return out;
}

Response Server::execute(const Request& r, ReplyTo<Response>& reply, bool& answered) {
  Response out;
  const sim::Time now = node_.clock().monotonic();
  auto session_of = [&]() -> Session* {
    const auto it = sessions_.find(r.session);
    if (it != sessions_.end()) return &it->second;
    out.ok = false;
    out.error = fmt::format("invalid session \"{}\"", r.session);
    return nullptr;
  };
  switch (r.kind) {
    case Request::Kind::create_session: {
      const sim::Duration ttl = r.options.ttl;
      if (ttl != sim::Duration{} && (ttl < kMinTtl || ttl > kMaxTtl)) {
        out.ok = false;
        out.error = fmt::format("Invalid Session TTL '{}ms', must be between [10s=24h0m0s]", ms(ttl));
        break;
      }
      const std::uint64_t id = next_session_++;
      ++index_;
      // The server allows twice the TTL before it invalidates (a grace for the network).
      sessions_[id] = Session{r.options, reply.caller(), ttl == sim::Duration{} ? sim::kNever : now + 2 * ttl};
      out.session = id;
      break;
    }
    case Request::Kind::renew:
      if (Session* s = session_of()) {
        if (s->options.ttl != sim::Duration{}) s->expires_at = now + 2 * s->options.ttl;
      }
      break;
    case Request::Kind::destroy: invalidate(r.session, now, true); break;
    case Request::Kind::get:
      if (r.wait_index != 0) {
        const auto it = keys_.find(r.key);
        const std::uint64_t current = it == keys_.end() ? index_ : it->second.modify_index;
        if (current <= r.wait_index) {
          blocked_.push_back({r.key, r.wait_index, now + r.wait, std::move(reply)});
          answered = false;
          break;
        }
      }
      out = answer(r.key);
      break;
    case Request::Kind::put: {
      ++index_;
      KeyValue& kv = keys_[r.key];
      if (kv.create_index == 0) {
        kv.key = r.key;
        kv.create_index = index_;
      }
      kv.value = r.value;
      kv.modify_index = index_;
      changed(r.key);
      break;
    }
    case Request::Kind::del:
      if (keys_.erase(r.key) > 0) {
        ++index_;
        changed(r.key);
      }
      break;
    case Request::Kind::acquire: {
      if (session_of() == nullptr) break;
      const auto delay = lock_delay_.find(r.key);
      if (delay != lock_delay_.end() && delay->second > now) {
        out.ok = false;  // "Rejecting lock of key due to lock-delay"
        break;
      }
      const auto it = keys_.find(r.key);
      if (it != keys_.end() && it->second.session != 0 && it->second.session != r.session) {
        out.ok = false;
        break;
      }
      ++index_;
      KeyValue& kv = keys_[r.key];
      if (kv.create_index == 0) {
        kv.key = r.key;
        kv.create_index = index_;
      }
      if (kv.session != r.session) ++kv.lock_index;
      kv.session = r.session;
      kv.value = r.value;
      kv.modify_index = index_;
      changed(r.key);
      break;
    }
    case Request::Kind::release: {
      if (session_of() == nullptr) break;
      const auto it = keys_.find(r.key);
      if (it == keys_.end() || it->second.session != r.session) {
        out.ok = false;
        break;
      }
      ++index_;
      it->second.session = 0;
      it->second.modify_index = index_;
      changed(r.key);
      break;
    }
  }
  if (out.index == 0) out.index = index_;
  return out;
}

Response Client::run(const Request& request) const {
  const sim::Duration timeout = request.kind == Request::Kind::get && request.wait_index != 0 ? timeout_ + request.wait : timeout_;
  return call_server<Response>(*net_, from_->id(), *server_, request, timeout);
}

Response Client::get(const std::string& key, std::uint64_t wait_index, sim::Duration wait) const {
  return run({.kind = Request::Kind::get, .key = key, .wait_index = wait_index, .wait = wait});
}

void renew_in_background(Client client, std::uint64_t session, sim::Duration ttl) {
  sim::spawn("consul.renew", [client, session, ttl] {
    for (;;) {
      client.node().clock().sleep_for(ttl / 2);
      for (;;) {
        try {
          if (!client.renew(session)) return;  // the session is gone: RenewPeriodic ends
          break;
        } catch (const sim::Timeout&) {
          client.node().clock().sleep_for(std::chrono::seconds(1));  // retried a second later
        }
      }
    }
  }, sim::SpawnOptions{.background = true});
}

}  // namespace models::consul
