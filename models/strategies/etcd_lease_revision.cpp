// etcd-lease-revision: etcd's concurrency.Mutex on a session lease (kept alive from the
// worker's node), and its key's create revision as a fencing token the database checks.

#include "models/coord/etcd_lock.hpp"
#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
class EtcdLeaseRevision : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    const std::string prefix = "/locks/" + open_id(r) + "/";
    etcd::Client& client = env_.etcd(w);
    std::optional<etcd::Mutex> mutex;
    mutex.emplace(client, env_.etcd_session(w), prefix);
    if (!mutex->lock(millis("wait_ms"))) {
        if (client.keep_alive(env_.etcd_session(w))) return ErrorKind::lock_busy;
      mutex.emplace(client, env_.etcd_session(w, true), prefix);  // the session expired: a new one
      if (!mutex->lock(millis("wait_ms"))) return ErrorKind::lock_busy;
    }
    Env* env = &env_;
    checkers::Hold hold = env_.locks().acquired(prefix, who(r, w), [env, key = mutex->key()] { return env->etcd_has(key); });
    bool accepted = true;
    then_unlock([&] { accepted = fenced_check_then_insert(r, w, hold, mutex->token()); },
                [&] {
                  hold.release();
                  mutex->unlock();
                });
    return accepted ? ErrorKind::none : ErrorKind::fenced;
  }
};
}  // namespace

Entry etcd_lease_revision() {
  return {{.name = "etcd-lease-revision",
           .description = "etcd Mutex on a 60 s session lease; its create revision as a fencing token the database checks",
           .source = "DOMAIN.md, Lock services (etcd Mutex, IsOwner; Jepsen etcd 3.4.3: locks need fencing)",
           .risks = "a pause past the lease lets a second holder in; the fence refuses the stale write (errors.fenced)",
           .params = {{"wait_ms", 10000, "give up waiting for the lock after this"}},
           .needs = {.etcd = true, .tables = {fence_table()}}},
          [](Env& env, const Params& p) { return std::make_unique<EtcdLeaseRevision>(env, p); }};
}

}  // namespace models::strategies
