// consul-lock, consul-lock-index: Consul's api.Lock around check-then-insert, as a service
// takes it with the API client (a session of its own with a TTL and a lock-delay, renewed in
// the background); the second checks the key's LockIndex as a sequencer in the database.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {

class ConsulLock : public Strategy {
 public:
  ConsulLock(Env& env, Params params, bool fenced) : Strategy(env, std::move(params)), fenced_(fenced) {}

  ErrorKind bind(const Request& r, Worker& w) override {
    consul::LockOptions options;
    options.session.ttl = millis("ttl_ms");
    options.session.lock_delay = millis("lock_delay_ms");
    std::optional<LockGuard> lock = locks(r, w).consul("locks/" + open_id(r), options, millis("wait_ms"));
    if (!lock) return ErrorKind::lock_busy;
    bool accepted = true;
    if (fenced_)
      accepted = fenced_check_then_insert(r, w, *lock);
    else
      check_then_insert(r, w, *lock);
    lock->unlock();
    return accepted ? ErrorKind::none : ErrorKind::fenced;
  }

 private:
  bool fenced_;
};

std::vector<ParamInfo> consul_params() {
  return {{"ttl_ms", 15000, "the session's TTL, 10 s to 24 h: the server invalidates it after twice this without a renewal",
           ParamKind::duration_ms, 10000, 86400000},
          {"lock_delay_ms", 15000, "how long, at most 60 s, the key is refused to everyone once its session is invalidated",
           ParamKind::duration_ms, 0, 60000},
          {"wait_ms", 60000, "give up waiting for the lock after this"}};
}

const char* const kSource =
    "docs/models.md, Consul (sessions, lock-delay, api.Lock: https://developer.hashicorp.com/consul/docs/automate/session)";

}  // namespace

Entry consul_lock() {
  return {{.name = "consul-lock",
           .description = "Consul's api.Lock (a session with a 15 s TTL and a 15 s lock-delay) around check-then-insert",
           .source = kSource,
           .risks = "a pause past twice the TTL loses the session; the lock-delay keeps the next holder out for a while, not for ever",
           .params = consul_params(),
           .needs = {.consul = true}},
          [](Env& env, const Params& p) { return std::make_unique<ConsulLock>(env, p, false); }};
}

Entry consul_lock_index() {
  return {{.name = "consul-lock-index",
           .description = "consul-lock, with the key's LockIndex as a sequencer the database checks",
           .source = kSource,
           .risks = "a late holder's write is refused (errors.fenced) once a later holder has written",
           .params = consul_params(),
           .needs = {.consul = true, .tables = {fence_table()}}},
          [](Env& env, const Params& p) { return std::make_unique<ConsulLock>(env, p, true); }};
}

}  // namespace models::strategies
