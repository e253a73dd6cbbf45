#include "models/coord/etcd.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

namespace models::etcd {

namespace {

std::string operation_text(const Operation& o) {
  if (o.kind == Operation::Kind::del) return "del " + o.key;
  return fmt::format("put {} \"{}\"{}", o.key, o.value, o.lease == 0 ? "" : fmt::format(" --lease={}", o.lease));
}

std::string compare_text(const Compare& c) {
  static constexpr const char* kTargets[] = {"create_revision", "mod_revision", "version", "value"};
  static constexpr const char* kResults[] = {"=", "<", ">", "!="};
  return fmt::format("{}({}) {} {}", kTargets[static_cast<int>(c.target)], c.key, kResults[static_cast<int>(c.result)],
                     c.target == Compare::Target::value ? c.value : std::to_string(c.number));
}

}  // namespace

std::string call_text(const Request& r) {
  switch (r.kind) {
    case Request::Kind::grant: return fmt::format("lease grant {} ms", std::chrono::duration_cast<std::chrono::milliseconds>(r.ttl).count());
    case Request::Kind::keep_alive: return fmt::format("lease keep-alive {}", r.lease);
    case Request::Kind::revoke: return fmt::format("lease revoke {}", r.lease);
    case Request::Kind::get: return "get " + r.key;
    case Request::Kind::range: return fmt::format("get {} --prefix", r.key);
    case Request::Kind::put: return operation_text({Operation::Kind::put, r.key, r.value, r.lease});
    case Request::Kind::del: return "del " + r.key;
    case Request::Kind::txn: {
      std::vector<std::string> compares, success, failure;
      for (const auto& c : r.compares) compares.push_back(compare_text(c));
      for (const auto& o : r.success) success.push_back(operation_text(o));
      for (const auto& o : r.failure) failure.push_back(operation_text(o));
      return fmt::format("txn if ({}) then ({}) else ({})", fmt::join(compares, " && "), fmt::join(success, "; "),
                         fmt::join(failure, "; "));
    }
    case Request::Kind::watch: return fmt::format("watch {}", r.key);
  }
  return "?";
}

std::string reply_text(const Response& r) {
  if (!r.error.empty()) return fmt::format("error: {}, revision {}", r.error, r.revision);
  std::string out = fmt::format("{}, revision {}", r.ok ? "ok" : "failed", r.revision);
  if (r.lease != 0) out += fmt::format(", lease {}", r.lease);
  if (r.kv) out += fmt::format(", {} = \"{}\" (created at revision {})", r.kv->key, r.kv->value, r.kv->create_revision);
  if (!r.kvs.empty()) out += fmt::format(", {} keys, the first {} created at revision {}", r.kvs.size(), r.kvs.front().key, r.kvs.front().create_revision);
  return out;
}

Server::Server(Network& net, Node& node, ServerConfig config)
    : net_(net), node_(node), config_(std::move(config)), inbox_(node.name() + ".etcd") {}

void Server::start() {
  node_.spawn(node_.name() + ".etcd", [this] { serve(); }, sim::SpawnOptions{.daemon = true});
  node_.spawn(node_.name() + ".etcd-lessor", [this] {
    for (;;) {
      node_.clock().sleep_for(config_.expiry_check);
      expire_leases();
    }
  }, sim::SpawnOptions{.background = true});
}

void Server::accept(Request request, ReplyTo<Response> reply) { inbox_.put(Job{std::move(request), std::move(reply)}); }

const KeyValue* Server::find(const std::string& key) const {
  auto it = keys_.find(key);
  if (it == keys_.end()) return nullptr;
  if (it->second.lease != 0) {
    auto lease = leases_.find(it->second.lease);
    if (lease == leases_.end() || lease->second.expires_at <= node_.clock().now()) return nullptr;
  }
  return &it->second;
}

void Server::serve() {
  sim::Stream stream = node_.engine().stream(node_.name() + ".etcd");
  while (auto next = inbox_.get_unless_killed()) {
    Job& job = *next;
    sim::sleep_for(config_.service.sample_duration(stream));
    expire_leases();
    job.reply.send(execute(job.request, job.reply.caller()));
  }
}

std::string Server::duplicate_key(const std::vector<Operation>& ops) {
  // etcd checks both branches before it runs a transaction: a key put twice, or put and deleted,
  // in one branch is refused (deleting it twice is not).
  std::set<std::string> put, deleted;
  for (const Operation& op : ops) {
    const bool seen = put.count(op.key) > 0 || (op.kind == Operation::Kind::put && deleted.count(op.key) > 0);
    if (seen) return "duplicate key given in txn request";
    (op.kind == Operation::Kind::put ? put : deleted).insert(op.key);
  }
  return "";
}

void Server::write(const std::vector<Operation>& ops) {
  const bool changes = std::any_of(ops.begin(), ops.end(), [this](const Operation& op) {
    return op.kind == Operation::Kind::put || keys_.count(op.key) > 0;
  });
  if (!changes) return;
  ++revision_;
  for (const Operation& op : ops) {
    if (op.kind == Operation::Kind::put) put(op);
    else remove(op.key);
  }
}

void Server::remove(const std::string& key) {
  if (keys_.erase(key) == 0) return;
  removed_[key] = node_.engine().now();
  publish(Event{Event::Type::del, KeyValue{.key = key, .mod_revision = revision_}});
}

void Server::publish(const Event& event) {
  history_.push_back(event);
  // A watch whose client end is gone (only this reference is left) is cancelled.
  std::erase_if(watchers_, [](const Watcher& w) { return w.channel.use_count() == 1; });
  for (Watcher& w : watchers_)
    if (event.kv.key.starts_with(w.prefix)) send(w, event);
}

void Server::send(Watcher& w, const Event& event) {
  net_.send(node_.id(), w.caller, [channel = w.channel, seq = w.next_seq++, event] {
    channel->early.emplace(seq, event);
    for (auto it = channel->early.find(channel->next); it != channel->early.end(); it = channel->early.find(channel->next)) {
      channel->events.put(it->second);
      channel->early.erase(it);
      ++channel->next;
    }
  });
}

void Server::expire_leases() {
  const sim::Time now = node_.clock().now();
  for (auto it = leases_.begin(); it != leases_.end();) {
    if (it->second.expires_at > now) {
      ++it;
      continue;
    }
    const std::int64_t id = it->first;
    it = leases_.erase(it);
    std::vector<Operation> doomed;  // one revision for them all, as etcd revokes a lease
    for (const auto& [key, kv] : keys_)
      if (kv.lease == id) doomed.push_back({.kind = Operation::Kind::del, .key = key});
    write(doomed);
  }
}

bool Server::holds(const Compare& c) const {
  const KeyValue* kv = find(c.key);
  auto compare = [&](auto have, auto want) {
    switch (c.result) {
      case Compare::Result::equal: return have == want;
      case Compare::Result::not_equal: return have != want;
      case Compare::Result::less: return have < want;
      case Compare::Result::greater: return have > want;
    }
    return false;
  };
  switch (c.target) {
    case Compare::Target::create_revision: return compare(kv ? kv->create_revision : 0, c.number);
    case Compare::Target::mod_revision: return compare(kv ? kv->mod_revision : 0, c.number);
    case Compare::Target::version: return compare(kv ? kv->version : 0, c.number);
    case Compare::Target::value: return kv != nullptr && compare(kv->value, c.value);
  }
  return false;
}

void Server::put(const Operation& op) {
  KeyValue& kv = keys_[op.key];
  if (kv.version == 0) {
    kv.key = op.key;
    kv.create_revision = revision_;
  }
  kv.value = op.value;
  kv.mod_revision = revision_;
  ++kv.version;
  kv.lease = op.lease;  // checked by the request
  publish(Event{Event::Type::put, kv});
}

Response Server::execute(const Request& r, sim::NodeId caller) {
  Response out;
  switch (r.kind) {
    case Request::Kind::grant: {
      const std::int64_t id = next_lease_++;
      leases_[id] = Lease{r.ttl, node_.clock().now() + r.ttl};
      out.lease = id;
      break;
    }
    case Request::Kind::keep_alive: {
      auto it = leases_.find(r.lease);
      out.ok = it != leases_.end();
      if (out.ok) {
        it->second.expires_at = node_.clock().now() + it->second.ttl;
      }
      break;
    }
    case Request::Kind::revoke: {
      out.ok = leases_.count(r.lease) > 0;
      if (out.ok) {
        leases_[r.lease].expires_at = sim::Time{};
        expire_leases();
      }
      break;
    }
    case Request::Kind::get:
      if (const KeyValue* kv = find(r.key)) out.kv = *kv;
      break;
    case Request::Kind::range: {
      for (auto it = keys_.lower_bound(r.key); it != keys_.end() && it->first.starts_with(r.key); ++it)
        if (const KeyValue* kv = find(it->first)) out.kvs.push_back(*kv);
      break;
    }
    case Request::Kind::watch: {
      Watcher& w = watchers_.emplace_back(Watcher{r.key, caller, r.channel});
      if (r.start_revision > 0)
        for (const Event& e : history_)
          if (e.kv.mod_revision >= r.start_revision && e.kv.key.starts_with(r.key)) send(w, e);
      break;
    }
    case Request::Kind::put:
      if (r.lease != 0 && leases_.count(r.lease) == 0) {
        out.ok = false;
        out.error = "lease not found";  // etcdserver: requested lease not found
        break;
      }
      write({{Operation::Kind::put, r.key, r.value, r.lease}});
      break;
    case Request::Kind::del: write({{Operation::Kind::del, r.key}}); break;
    case Request::Kind::txn: {
      out.error = duplicate_key(r.success);
      if (out.error.empty()) out.error = duplicate_key(r.failure);
      bool all = out.error.empty();
      for (const Compare& c : r.compares) all = all && holds(c);
      const auto& branch = all ? r.success : r.failure;
      // The branch taken is refused whole if one of its puts names a lease that is gone.
      if (out.error.empty() && std::any_of(branch.begin(), branch.end(), [this](const Operation& op) {
            return op.kind == Operation::Kind::put && op.lease != 0 && leases_.count(op.lease) == 0;
          }))
        out.error = "lease not found";
      if (!out.error.empty()) {
        out.ok = false;
        break;
      }
      write(branch);
      out.ok = all;
      break;
    }
  }
  out.revision = revision_;
  return out;
}

Client::Client(Network& net, Node& from, Server& server, sim::Duration timeout)
    : net_(net), from_(from), server_(server), timeout_(timeout) {}

Response Client::run(const Request& request) {
  return call_server<Response>(net_, from_.id(), server_, request, timeout_);
}

Watch Client::watch(const std::string& prefix, std::int64_t start_revision) {
  auto channel = std::make_shared<WatchChannel>(from_.name() + ".etcd-watch " + prefix);
  run({.kind = Request::Kind::watch, .key = prefix, .start_revision = start_revision, .channel = channel});
  return Watch(std::move(channel));
}

Event Watch::next() {
  const sim::HoldOpen open(sim::engine("models::etcd::Watch::next"));
  return channel_->events.get();
}

void keep_alive_in_background(Client& client, std::int64_t lease, sim::Duration ttl) {
  sim::spawn("etcd.keep-alive", [&client, lease, ttl] {
    for (;;) {
      sim::sleep_for(ttl / 3);
      try {
        if (!client.keep_alive(lease)) return;  // the lease is gone: the session is over
      } catch (const sim::Timeout&) {
      }
    }
  }, sim::SpawnOptions{.background = true});
}

}  // namespace models::etcd
