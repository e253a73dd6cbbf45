// local-mutex: a mutex per OpenID inside each app server, as `synchronized` in one JVM,
// around check-then-insert. It excludes only the threads of one node.

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {

class LocalMutex : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    LockGuard lock = locks(r, w).local(mutexes_[&w.server], open_id(r));
    check_then_insert(r, w, lock);
    lock.unlock();
    return ErrorKind::none;
  }

 private:
  std::map<const AppServer*, KeyedMutex> mutexes_;  // looked up, never iterated
};
}  // namespace

Entry local_mutex() {
  return {{.name = "local-mutex",
           .description = "a mutex per OpenID in each app server around check-then-insert",
           .source = "docs/models.md, Application patterns (synchronized on N app nodes)",
           .risks = "excludes only requests on the same node: with N nodes, copies meet on one node 1/N of the time"},
          [](Env& env, const Params& p) { return std::make_unique<LocalMutex>(env, p); }};
}

}  // namespace models::strategies
