#pragma once
// A ZooKeeper lock around check-then-insert, as services write it with Curator: one
// InterProcessMutex per OpenID under /locks, acquired with a wait limit, released in
// `finally`. Variants: the herd recipe (every waiter watches the lock node), and fencing
// with the lock node's create zxid checked by the database.

#include "models/coord/zk_lock.hpp"
#include "models/strategies/entries.hpp"

namespace models::strategies {

class ZookeeperLock : public Strategy {
 public:
  ZookeeperLock(Env& env, Params params, zk::LockRecipe recipe, bool fenced)
      : Strategy(env, std::move(params)), recipe_(recipe), fenced_(fenced) {}

  static std::vector<ParamInfo> params() { return {{"wait_ms", 10000, "acquire(time): give up waiting after this"}}; }

 protected:
  ErrorKind bind(const Request& r, Worker& w) override {
    zk::Mutex mutex(env_.zookeeper(w), "/locks/" + open_id(r), recipe_);
    const bool held = mutex.acquire(millis("wait_ms"));
    env_.count_wakeups(mutex.wakeups());
    if (!held) return ErrorKind::lock_busy;
    Env* env = &env_;
    checkers::Hold hold = env_.locks().acquired("/locks/" + open_id(r), who(r, w),
                                                [env, node = mutex.node()] { return env->zookeeper_has(node); });
    bool accepted = true;
    then_unlock(
        [&] {
          if (fenced_) {
            accepted = fenced_check_then_insert(r, w, hold, static_cast<std::int64_t>(mutex.token()));
          } else {
            db::Connection c = connect(r, w);
            check_then_insert(c, r, w, &hold);
          }
        },
        [&] {
          hold.release();
          mutex.release();
        });
    return accepted ? ErrorKind::none : ErrorKind::fenced;
  }

 private:
  zk::LockRecipe recipe_;
  bool fenced_;
};

}  // namespace models::strategies
