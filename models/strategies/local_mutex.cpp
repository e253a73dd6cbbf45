// local-mutex: a mutex per OpenID inside each app server, as `synchronized` in one JVM,
// around check-then-insert. It excludes only the threads of one node.

#include <deque>
#include <set>

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {

// A keyed mutex of one process (one app node): FIFO hand-over to waiters.
class KeyedMutex {
 public:
  void lock(const std::string& key) {
    if (held_.insert(key).second) return;
    sim::Promise<bool> turn("local mutex " + key);
    sim::Future<bool> mine = turn.get_future();
    waiters_[key].push_back(std::move(turn));
    mine.get();
  }
  void unlock(const std::string& key) {
    auto it = waiters_.find(key);
    if (it == waiters_.end() || it->second.empty()) {
      held_.erase(key);
      return;
    }
    sim::Promise<bool> next = std::move(it->second.front());
    it->second.pop_front();
    next.set_value(true);  // ownership passes on
  }

 private:
  std::set<std::string> held_;
  std::map<std::string, std::deque<sim::Promise<bool>>> waiters_;
};

class LocalMutex : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    KeyedMutex& mutex = mutexes_[&w.server];
    const std::string key = open_id(r);
    mutex.lock(key);
    struct Unlock {
      KeyedMutex& m;
      const std::string& k;
      ~Unlock() { m.unlock(k); }
    } unlock{mutex, key};
    db::Connection c = connect(r, w);
    check_then_insert(c, r, w);
    return ErrorKind::none;
  }

 private:
  std::map<const AppServer*, KeyedMutex> mutexes_;  // looked up, never iterated
};
}  // namespace

Entry local_mutex() {
  return {{.name = "local-mutex",
           .description = "a mutex per OpenID in each app server around check-then-insert",
           .source = "DOMAIN.md, Application patterns (synchronized on N app nodes)",
           .risks = "excludes only requests on the same node: with N nodes, copies meet on one node 1/N of the time"},
          [](Env& env, const Params& p) { return std::make_unique<LocalMutex>(env, p); }};
}

}  // namespace models::strategies
