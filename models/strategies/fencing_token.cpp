// fencing-token: the ZooKeeper lock, and its node's create zxid as a fencing token the
// database checks before the insert (see zookeeper_lock.hpp and Strategy::fenced_check_then_insert).

#include "models/strategies/zookeeper_lock.hpp"

namespace models::strategies {

Entry fencing_token() {
  return {{.name = "fencing-token",
           .description = "ZooKeeper lock; its create zxid as a fencing token; the database refuses a token lower than one seen",
           .source = "docs/models.md, Lock services (Kleppmann 2016: fencing tokens; ZK zxid as the token)",
           .risks = "none for the data: a holder whose lock expired is refused (errors.fenced) once a later holder has written",
           .params = ZookeeperLock::params(),
           .needs = {.zookeeper = true, .tables = {fence_table()}}},
          [](Env& env, const Params& p) { return std::make_unique<ZookeeperLock>(env, p, zk::LockRecipe::next_lower, true); }};
}

}  // namespace models::strategies
