// zookeeper-herd: the naive ZooKeeper lock, every waiter watching the lock node (see zookeeper_lock.hpp).

#include "models/strategies/zookeeper_lock.hpp"

namespace models::strategies {

Entry zookeeper_herd() {
  return {{.name = "zookeeper-herd",
           .description = "naive ZooKeeper lock: every waiter watches the parent, all wake on each release",
           .source = "docs/models.md, Lock services (naive recipe -> herd effect, N-1 wake-ups per release)",
           .risks = "as the recipe, plus a herd of wake-ups and reads on every release",
           .params = ZookeeperLock::params(),
           .needs = {.zookeeper = true}},
          [](Env& env, const Params& p) { return std::make_unique<ZookeeperLock>(env, p, zk::LockRecipe::herd, false); }};
}

}  // namespace models::strategies
