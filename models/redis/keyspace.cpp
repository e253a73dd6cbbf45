#include "models/redis/keyspace.hpp"

#include <charconv>
#include <limits>
#include <optional>

namespace models::redis {

namespace {
const char* const kWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value";
std::int64_t ms_ceil(sim::Duration d) { return (d.count() + 999'999) / 1'000'000; }

// A value INCR takes as a number, as Redis reads one (util.c, string2ll): an optional minus, then
// digits without a leading zero ("0" alone aside), within a signed 64-bit integer. "007", "+5",
// " 5" and "-0" are not numbers to Redis.
std::optional<std::int64_t> redis_integer(const std::string& text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  if (text == "0") return 0;
  const std::size_t digits = text[0] == '-' ? 1 : 0;
  if (digits >= text.size() || text[digits] < '1' || text[digits] > '9') return std::nullopt;
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return n;
}
}  // namespace

Value* Keyspace::live(const std::string& key, sim::Time now) {
  auto it = data_.find(key);
  if (it == data_.end()) return nullptr;
  if (it->second.expires_at <= now) {
    data_.erase(it);
    return nullptr;
  }
  return &it->second;
}

const Value* Keyspace::find(const std::string& key, sim::Time now) const {
  auto it = data_.find(key);
  if (it == data_.end() || it->second.expires_at <= now) return nullptr;
  return &it->second;
}

std::uint64_t Keyspace::bytes_of(const std::string& key) const {
  const auto it = data_.find(key);
  if (it == data_.end()) return 0;
  std::uint64_t out = 96 + key.size() + it->second.text.size();  // the entry, the key, the string
  for (const auto& [field, n] : it->second.hash) out += 64 + field.size();
  return out;
}

void Keyspace::apply(const Change& change) {
  const std::uint64_t before = bytes_of(change.first);
  if (change.second) data_[change.first] = *change.second;
  else data_.erase(change.first);
  bytes_ = bytes_ - before + bytes_of(change.first);
}

Reply Keyspace::execute(const Command& c, sim::Time now, std::vector<Change>* changes) {
  // A command touches its one key: what the keyspace holds changes by that key's difference.
  const std::uint64_t before = bytes_of(c.key);
  Reply reply = run(c, now, changes);
  bytes_ = bytes_ - before + bytes_of(c.key);
  return reply;
}

Reply Keyspace::run(const Command& c, sim::Time now, std::vector<Change>* changes) {
  Value* v = live(c.key, now);
  auto changed = [&] {
    if (changes == nullptr) return;
    auto it = data_.find(c.key);
    changes->emplace_back(c.key, it == data_.end() ? std::nullopt : std::optional<Value>(it->second));
  };
  auto expiry = [&](sim::Duration ttl) { return ttl > sim::Duration::zero() ? now + ttl : sim::kNever; };
  auto owns = [&](const Value* x) { return x != nullptr && x->is_hash && x->hash.count(c.value) > 0; };

  switch (c.op) {
    case Op::get:
      if (v == nullptr) return Reply::nil();
      if (v->is_hash) return Reply::error(kWrongType);
      return Reply::bulk(v->text);
    case Op::set:
      if (c.nx && c.xx) return Reply::error("ERR syntax error");  // Redis refuses the pair, whatever the key holds
      if ((c.nx && v != nullptr) || (c.xx && v == nullptr)) return Reply::nil();
      data_[c.key] = Value{false, c.value, {}, expiry(c.ttl), c.nx};
      changed();
      return Reply::ok();
    case Op::del:
      if (v == nullptr) return Reply::number(0);
      data_.erase(c.key);
      changed();
      return Reply::number(1);
    case Op::pexpire:
      if (v == nullptr) return Reply::number(0);
      v->expires_at = expiry(c.ttl);
      if (c.ttl <= sim::Duration::zero()) data_.erase(c.key);  // a non-positive TTL deletes the key
      changed();
      return Reply::number(1);
    case Op::pttl:
      if (v == nullptr) return Reply::number(-2);
      if (v->expires_at == sim::kNever) return Reply::number(-1);
      return Reply::number(ms_ceil(v->expires_at - now));
    case Op::incr: {
      std::int64_t n = 0;
      if (v != nullptr) {
        if (v->is_hash) return Reply::error(kWrongType);
        const std::optional<std::int64_t> read = redis_integer(v->text);
        if (!read) return Reply::error("ERR value is not an integer or out of range");
        n = *read;
      }
      if (n == std::numeric_limits<std::int64_t>::max()) return Reply::error("ERR increment or decrement would overflow");
      ++n;
      Value& slot = data_[c.key];
      slot.text = std::to_string(n);
      if (v == nullptr) slot.expires_at = sim::kNever;
      slot.lock = false;  // a counter, even one first made with SETNX counter 0
      changed();
      return Reply::number(n);
    }
    case Op::cas_del:
      if (v == nullptr || v->is_hash || v->text != c.value) return Reply::number(0);
      data_.erase(c.key);
      changed();
      return Reply::number(1);
    case Op::cas_pexpire:
      if (v == nullptr || v->is_hash || v->text != c.value) return Reply::number(0);
      v->expires_at = expiry(c.ttl);
      if (c.ttl <= sim::Duration::zero()) data_.erase(c.key);  // the script's PEXPIRE deletes too
      changed();
      return Reply::number(1);
    case Op::hlock_acquire:
      // nil: acquired (or re-entered); otherwise the holder's remaining PTTL.
      if (v == nullptr || owns(v)) {
        Value& slot = data_[c.key];
        slot.is_hash = true;
        slot.lock = true;
        ++slot.hash[c.value];
        slot.expires_at = expiry(c.ttl);
        changed();
        return Reply::nil();
      }
      if (!v->is_hash) return Reply::error(kWrongType);
      return Reply::number(v->expires_at == sim::kNever ? -1 : ms_ceil(v->expires_at - now));
    case Op::hlock_renew:
      if (!owns(v)) return Reply::number(0);
      v->expires_at = expiry(c.ttl);
      changed();
      return Reply::number(1);
    case Op::hlock_release:
      // nil: not the owner (Redisson throws IllegalMonitorStateException); 0: still held
      // (re-entered); 1: released.
      if (!owns(v)) return Reply::nil();
      if (--v->hash[c.value] > 0) {
        v->expires_at = expiry(c.ttl);
        changed();
        return Reply::number(0);
      }
      data_.erase(c.key);
      changed();
      return Reply::number(1);
  }
  return Reply::error("ERR unknown command");
}

}  // namespace models::redis
