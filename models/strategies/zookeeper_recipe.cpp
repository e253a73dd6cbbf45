// zookeeper-recipe: Curator's InterProcessMutex around check-then-insert (see zookeeper_lock.hpp).

#include "models/strategies/zookeeper_lock.hpp"

namespace models::strategies {

Entry zookeeper_recipe() {
  return {{.name = "zookeeper-recipe",
           .description = "ZooKeeper lock recipe (ephemeral sequential node, watch the next lower) around check-then-insert",
           .source = "docs/models.md, Lock services (ZooKeeper/Curator recipe; ZOOKEEPER-1262 protected nodes)",
           .risks = "a pause longer than the session timeout deletes the lock node: a second holder gets in while the first, paused, has not yet heard",
           .params = ZookeeperLock::params(),
           .needs = {.zookeeper = true}},
          [](Env& env, const Params& p) { return std::make_unique<ZookeeperLock>(env, p, zk::LockRecipe::next_lower, false); }};
}

}  // namespace models::strategies
