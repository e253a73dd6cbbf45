// zookeeper-recipe-checked: the ZooKeeper recipe with Curator's advice for InterProcessMutex
// followed: after a SUSPENDED the holder cannot be sure it still holds the lock until a
// RECONNECTED of the same session, and after a LOST it does not. It looks at its client's
// connection state, and that the session is the one it took the lock with, just before its write,
// and gives up the write otherwise (answered session_expired).
//
// What that catches: a connection lost long enough for the client to say SUSPENDED before the
// write (a partition between the holder and ZooKeeper). What it cannot: a pause of the holder's
// process, after which the write and the client's first ping start together and the state still
// says CONNECTED (zk-session-expiry-during-pause).

#include "models/strategies/zookeeper_lock.hpp"

namespace models::strategies {
namespace {

const db::sql::Prepared kFind = db::sql::pinned(db::sql::prepare("SELECT id FROM t_account WHERE open_id = ?"));
const db::sql::Prepared kInsert = db::sql::pinned(db::sql::prepare("INSERT INTO t_account (open_id, device) VALUES (?, ?)"));

class ZookeeperChecked : public Strategy {
 public:
  using Strategy::Strategy;

  ErrorKind bind(const Request& r, Worker& w) override {
    std::optional<LockGuard> lock = locks(r, w).zookeeper("/locks/" + open_id(r), zk::LockRecipe::next_lower, millis("wait_ms"));
    if (!lock) return ErrorKind::lock_busy;
    const zk::Client& client = env_.zookeeper(w);
    const zk::SessionId session = client.session();
    bool trusted = true;
    {
      db::Connection c = connect(r, w);
      if (c.execute(kFind, {open_id(r)}).rows.empty()) {
        sim::sleep_for(env_.work(w));
        const zk::ConnectionState state = client.state();
        trusted = client.session() == session &&
                  (state == zk::ConnectionState::connected || state == zk::ConnectionState::reconnected);
        if (trusted) {
          lock->hold().step();
          c.execute(kInsert, {open_id(r), device(r)});
          lock->hold().wrote();
        }
      }
    }  // the connection goes back to the pool before the unlock
    lock->unlock();
    return trusted ? ErrorKind::none : ErrorKind::session_expired;
  }
};

}  // namespace

Entry zookeeper_recipe_checked() {
  return {{.name = "zookeeper-recipe-checked",
           .description = "zookeeper-recipe, with the client's connection state (Curator's SUSPENDED / LOST) checked before the write",
           .source = "Curator's InterProcessMutex documentation (watch for SUSPENDED and LOST: after SUSPENDED the lock is uncertain "
                     "until RECONNECTED, after LOST it is gone); docs/models.md, Lock services",
           .risks = "a pause of the holder: when it wakes, its write starts before its client has noticed anything",
           .params = ZookeeperLock::params(),
           .needs = {.zookeeper = true}},
          [](Env& env, const Params& p) { return std::make_unique<ZookeeperChecked>(env, p); }};
}

}  // namespace models::strategies
