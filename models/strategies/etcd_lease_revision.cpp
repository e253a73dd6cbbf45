// etcd-lease-revision: etcd's concurrency.Mutex on a session lease (kept alive from the
// worker's node), and its key's create revision as a fencing token the database checks.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
class EtcdLeaseRevision : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    std::optional<LockGuard> lock = locks(r, w).etcd("/locks/" + open_id(r) + "/", millis("wait_ms"));
    if (!lock) return ErrorKind::lock_busy;
    const bool accepted = fenced_check_then_insert(r, w, *lock);
    lock->unlock();
    return accepted ? ErrorKind::none : ErrorKind::fenced;
  }
};
}  // namespace

Entry etcd_lease_revision() {
  return {{.name = "etcd-lease-revision",
           .description = "etcd Mutex on a 60 s session lease; its create revision as a fencing token the database checks",
           .source = "docs/models.md, Lock services (etcd Mutex, IsOwner; Jepsen etcd 3.4.3: locks need fencing)",
           .risks = "a pause past the lease lets a second holder in; the fence refuses the stale write (errors.fenced)",
           .params = {{"wait_ms", 10000, "give up waiting for the lock after this"}},
           .needs = {.etcd = true, .tables = {fence_table()}}},
          [](Env& env, const Params& p) { return std::make_unique<EtcdLeaseRevision>(env, p); }};
}

}  // namespace models::strategies
