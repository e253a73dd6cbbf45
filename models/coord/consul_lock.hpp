#pragma once
// The lock of Consul's API client (api.Lock, docs/models.md, Consul) on the Consul-like store.
//
// lock(): create a session (TTL 15 s, the server's lock-delay, behavior release, bound to the
// node's health) renewed every half TTL in the background; then, until the key is ours: a
// blocking GET of the key while another session holds it; `acquire` when it is free; a refusal
// on a free key means a lock-delay, waited out with a timed retry (5 s). Once it is ours, a GET
// reads the key's LockIndex: the sequencer, a fencing token. unlock(): release the key, then
// destroy the session: a clean release leaves no lock-delay. A holder whose session was
// invalidated meanwhile (paused past twice the TTL) learns it only from its next request.

#include <cstdint>
#include <string>

#include "models/coord/consul.hpp"

namespace models::consul {

struct LockOptions {
  SessionOptions session{.ttl = std::chrono::seconds(15)};  // api.Lock's: DefaultLockSessionTTL
  sim::Duration wait = std::chrono::seconds(15);   // a blocking GET's wait (DefaultLockWaitTime)
  sim::Duration retry = std::chrono::seconds(5);   // after a refusal on a free key (DefaultLockRetryTime)
};

class Lock {
 public:
  Lock(Client client, std::string key, std::string value, LockOptions options = {});

  /// Waits for the key, at most `patience` on the node's clock. True when held; on giving up,
  /// destroys its session. Throws Error when the server refuses (a TTL out of range, the
  /// session invalidated while waiting), sim::Timeout when it stops answering.
  bool lock(sim::Duration patience);
  /// Releases the key and destroys the session. A release refused for an invalidated session
  /// is dropped, as `defer lock.Unlock()` drops its error.
  void unlock();

  std::uint64_t session() const { return session_; }
  /// The key's LockIndex when we took it: higher for every later holder.
  std::uint64_t token() const { return token_; }
  /// Blocking GETs that returned while waiting (a change of the key woke the waiter).
  std::uint64_t wakeups() const { return wakeups_; }

 private:
  void end_session();

  Client client_;
  std::string key_;
  std::string value_;
  LockOptions options_;
  std::uint64_t session_ = 0;
  std::uint64_t token_ = 0;
  std::uint64_t wakeups_ = 0;
};

}  // namespace models::consul
