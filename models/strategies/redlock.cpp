// redlock: the Redlock algorithm over every Redis instance of the world (five by default in
// the scenarios that use it), as redlock-rb runs it; no fencing token. The holder takes the
// validity it was told as its deadline and does not check it again (as the articles' code).

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
class Redlock : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    const redis::RedlockConfig config{.ttl = millis("ttl_ms"),
                                      .node_timeout = millis("node_timeout_ms"),
                                      .retry_count = static_cast<int>(param("retry_count"))};
    std::optional<LockGuard> lock = locks(r, w).redlock("lock:" + open_id(r), config);
    if (!lock) return ErrorKind::lock_busy;
    check_then_insert(r, w, *lock);
    lock->unlock();  // on every master
    return ErrorKind::none;
  }
};
}  // namespace

Entry redlock() {
  return {{.name = "redlock",
           .description = "Redlock over N Redis masters: quorum, validity = TTL - elapsed - drift, unlock all",
           .source = "docs/models.md, Lock services (Redlock, redlock-rb parameters)",
           .risks = "a clock step or a restart without fsync on one master lets a second quorum form; pauses after the validity check",
           .params = {{"ttl_ms", 10000, "lock TTL"},
                      {"node_timeout_ms", 50, "per-master timeout"},
                      {"retry_count", 3, "attempts before giving up", ParamKind::count}},
           .needs = {.redis = true, .redis_instances = 5}},
          [](Env& env, const Params& p) { return std::make_unique<Redlock>(env, p); }};
}

}  // namespace models::strategies
