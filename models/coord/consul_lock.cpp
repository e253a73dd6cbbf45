#include "models/coord/consul_lock.hpp"

#include <algorithm>
#include <utility>

namespace models::consul {

namespace {
// What the API client returns for a refused request.
[[noreturn]] void refused(const Response& r) { throw Error("Unexpected response code: 500 (" + r.error + ")"); }
}  // namespace

Lock::Lock(Client client, std::string key, std::string value, LockOptions options)
    : client_(client), key_(std::move(key)), value_(std::move(value)), options_(std::move(options)) {}

bool Lock::lock(sim::Duration patience) {
  const Clock& clock = client_.node().clock();
  const sim::Time give_up = clock.monotonic() + patience;
  const Response created = client_.create_session(options_.session);
  if (!created.error.empty()) refused(created);
  session_ = created.session;
  if (options_.session.ttl != sim::Duration{}) renew_in_background(client_, session_, options_.session.ttl);
  std::uint64_t wait_index = 0;
  for (;;) {
    const sim::Time now = clock.monotonic();
    if (now >= give_up) {
      end_session();
      return false;
    }
    const Response seen = client_.get(key_, wait_index, std::min(options_.wait, give_up - now));
    if (wait_index != 0) ++wakeups_;
    if (seen.kv && seen.kv->session != 0 && seen.kv->session != session_) {
      wait_index = seen.index;  // held by another: block until the key changes
      continue;
    }
    const Response taken = client_.acquire(key_, value_, session_);
    if (!taken.error.empty()) refused(taken);
    if (taken.ok) {
      const Response mine = client_.get(key_);  // the monitor's first read: the sequencer
      if (mine.kv && mine.kv->session == session_) {
        token_ = mine.kv->lock_index;
        return true;
      }
      wait_index = 0;  // lost between the two (the session invalidated): look again
      continue;
    }
    const Response why = client_.get(key_);
    if (why.kv && why.kv->session != 0) {
      wait_index = why.index;
      continue;
    }
    // Free, yet refused: a lock-delay is in effect, and only a timed wait helps.
    clock.sleep_for(std::min(options_.retry, std::max(give_up - clock.monotonic(), sim::Duration{})));
    wait_index = 0;
  }
}

void Lock::unlock() {
  if (session_ == 0) return;
  client_.release(key_, session_);  // refused for an invalidated session: dropped
  end_session();
}

void Lock::end_session() {
  const std::uint64_t session = std::exchange(session_, 0);
  client_.destroy(session);
}

}  // namespace models::consul
