#pragma once
// A ZooKeeper lock around check-then-insert, as services write it with Curator: one
// InterProcessMutex per OpenID under /locks, acquired with a wait limit, released in
// `finally`. Variants: the herd recipe (every waiter watches the lock node), and fencing
// with the lock node's create zxid checked by the database.

#include "models/strategies/entries.hpp"

namespace models::strategies {

class ZookeeperLock : public Strategy {
 public:
  ZookeeperLock(Env& env, Params params, zk::LockRecipe recipe, bool fenced)
      : Strategy(env, std::move(params)), recipe_(recipe), fenced_(fenced) {}

  static std::vector<ParamInfo> params() { return {{"wait_ms", 10000, "acquire(time): give up waiting after this"}}; }

 protected:
  ErrorKind bind(const Request& r, Worker& w) override {
    std::optional<LockGuard> lock = locks(r, w).zookeeper("/locks/" + open_id(r), recipe_, millis("wait_ms"));
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
  zk::LockRecipe recipe_;
  bool fenced_;
};

}  // namespace models::strategies
