#include "models/coord/etcd_lock.hpp"

#include <fmt/format.h>

namespace models::etcd {

Mutex::Mutex(Client& client, std::int64_t lease, std::string prefix)
    : client_(client), lease_(lease), prefix_(std::move(prefix)), key_(prefix_ + fmt::format("{:x}", lease)) {}

bool Mutex::lock(std::optional<sim::Duration> wait) {
  const Clock& clock = client_.node().clock();  // a context deadline, timed locally
  const sim::Time deadline = wait ? clock.monotonic() + *wait : sim::kNever;
  const Compare absent{Compare::Target::create_revision, Compare::Result::equal, key_, 0};
  client_.txn({absent}, {{Operation::Kind::put, key_, "", lease_}});
  const auto mine = client_.get(key_);
  if (!mine) return false;  // the lease is gone: the put was refused or its key expired
  revision_ = mine->create_revision;
  for (;;) {
    // waitDeletes: the newest key created before ours must go first.
    std::optional<KeyValue> before;
    for (const KeyValue& kv : client_.range(prefix_))
      if (kv.create_revision < revision_ && (!before || kv.create_revision > before->create_revision)) before = kv;
    if (!before) return client_.get(key_).has_value();  // ours may have expired meanwhile
    Watch watch = client_.watch(before->key, before->mod_revision + 1);
    try {
      for (;;) {
        const Event e = deadline == sim::kNever ? watch.next() : watch.next_for(clock.true_duration(std::max(deadline - clock.monotonic(), sim::Duration{})));
        if (e.type == Event::Type::del && e.kv.key == before->key) break;
      }
    } catch (const sim::Timeout&) {
      unlock();
      return false;
    }
  }
}

void Mutex::unlock(Unlock how) {
  if (revision_ == 0) return;
  if (how == Unlock::by_name)
    client_.del(key_);
  else
    client_.txn({still_owner()}, {{Operation::Kind::del, key_}});
  revision_ = 0;
}

void retry_unlock_in_background(std::shared_ptr<Mutex> mutex, Mutex::Unlock how, sim::Duration every, int tries,
                                std::function<void()> before_each) {
  sim::spawn("etcd.unlock-retry", [mutex = std::move(mutex), how, every, tries, before_each = std::move(before_each)] {
    for (int i = 0; i < tries; ++i) {
      mutex->client().node().clock().sleep_for(every);
      if (before_each) before_each();
      try {
        mutex->unlock(how);
        return;
      } catch (const sim::Timeout&) {
      }
    }
  });
}

}  // namespace models::etcd
