// A Lua strategy's services: redis.call and redis.script, the lock services' clients (locks.redis,
// redisson, redlock, zookeeper, etcd, consul, local_mutex), the lock handle's methods, holds,
// and the handler's time and values (work, sleep, now_ms, effect, unique, math.random).

#include "models/strategies/script_api.hpp"

namespace models::strategies::lua_api {

// Redis.
redis::Reply ScriptStrategy::send(Invocation& inv, const redis::Command& command) {
  return inv.strategy->env_.redis(*inv.worker, command);
}

int ScriptStrategy::push_reply(lua_State* L, const redis::Reply& reply, bool ok_as_one) {
  switch (reply.kind) {
    case redis::Reply::Kind::ok:
      if (ok_as_one)
        lua_pushinteger(L, 1);
      else
        lua_pushliteral(L, "OK");
      return 1;
    case redis::Reply::Kind::nil:
      if (ok_as_one)
        lua_pushinteger(L, 0);
      else
        lua_pushnil(L);
      return 1;
    case redis::Reply::Kind::integer: lua_pushinteger(L, reply.integer); return 1;
    case redis::Reply::Kind::bulk: lua_pushlstring(L, reply.text.data(), reply.text.size()); return 1;
    case redis::Reply::Kind::error: push_error(L, "redis", reply.text); return -1;
  }
  return 0;
}

int ScriptStrategy::redis_call(lua_State* L, Invocation& inv) {
  std::string name = arg_text(L, 1, "the command");
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  const int n = lua_gettop(L);
  const auto want = [&](int args, const char* shape) {
    if (n - 1 != args) throw Misuse{fmt::format("redis.call: {} takes {}", name, shape)};
  };
  const auto integer = [&](int i, bool signed_ = false) -> std::int64_t {
    const std::int64_t least = signed_ ? std::numeric_limits<std::int64_t>::min() : 0;
    const db::Value v = arg_value(L, i, i - 1);
    if (const auto* x = std::get_if<std::int64_t>(&v); x != nullptr && *x >= least) return *x;
    if (const auto* s = std::get_if<std::string>(&v)) {
      char* end = nullptr;
      errno = 0;
      const long long x = std::strtoll(s->c_str(), &end, 10);
      if (!s->empty() && *end == '\0' && errno == 0 && x >= least) return x;
    }
    throw Misuse{fmt::format("redis.call: {}: argument {}: expected a whole number{}", name, i - 1, signed_ ? "" : " of at least 0")};
  };
  if (name == "GET") {
    want(1, "a key");
    return push_reply(L, send(inv, redis::Command::get(arg_text(L, 2, "the key"))));
  }
  if (name == "DEL") {
    want(1, "a key");
    return push_reply(L, send(inv, redis::Command::del(arg_text(L, 2, "the key"))));
  }
  if (name == "INCR") {
    want(1, "a key");
    return push_reply(L, send(inv, redis::Command::incr(arg_text(L, 2, "the key"))));
  }
  if (name == "PTTL") {
    want(1, "a key");
    return push_reply(L, send(inv, redis::Command::pttl(arg_text(L, 2, "the key"))));
  }
  if (name == "PEXPIRE" || name == "EXPIRE") {
    want(2, "a key and a time");
    // 0 or a negative time deletes the key at once, as on Redis.
    const std::int64_t t = std::max<std::int64_t>(integer(3, true), 0);
    const sim::Duration ttl = script_ms(name == "EXPIRE" ? static_cast<double>(t) * 1000.0 : static_cast<double>(t), "redis.call: " + name);
    return push_reply(L, send(inv, redis::Command::pexpire(arg_text(L, 2, "the key"), ttl)));
  }
  if (name == "SETNX") {
    want(2, "a key and a value");
    return push_reply(L, send(inv, redis::Command::set_nx_px(arg_text(L, 2, "the key"), arg_text(L, 3, "the value"), {})), true);
  }
  if (name == "SET") {
    if (n < 3) throw Misuse{"redis.call: SET takes a key, a value, then NX, XX, PX ms or EX s"};
    redis::Command c = redis::Command::set(arg_text(L, 2, "the key"), arg_text(L, 3, "the value"));
    for (int i = 4; i <= n; ++i) {
      std::string option = arg_text(L, i, "an option of SET");
      std::transform(option.begin(), option.end(), option.begin(), [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
      if (option == "NX") {
        c.nx = true;
      } else if (option == "XX") {
        c.xx = true;
      } else if ((option == "PX" || option == "EX") && i < n) {
        const std::int64_t t = integer(++i);
        if (t == 0) throw Misuse{"redis.call: SET: invalid expire time (0)"};
        c.ttl = script_ms(option == "EX" ? static_cast<double>(t) * 1000.0 : static_cast<double>(t), "redis.call: SET " + option);
      } else {
        throw Misuse{fmt::format("redis.call: SET: expected NX, XX, PX ms or EX s, got {}", option)};
      }
    }
    return push_reply(L, send(inv, c));
  }
  throw Misuse{fmt::format("redis.call: the model runs GET, SET, SETNX, DEL, PEXPIRE, EXPIRE, PTTL and INCR, not {} "
                           "(redis.script runs the atomic scripts)",
                           name)};
}

int ScriptStrategy::redis_script(lua_State* L, Invocation& inv) {
  const std::string name = arg_text(L, 1, "the script's name");
  const int n = lua_gettop(L);
  if (name == "compare_and_delete") {
    if (n != 3) throw Misuse{"redis.script: compare_and_delete takes a key and a value"};
    return push_reply(L, send(inv, redis::Command::cas_del(arg_text(L, 2, "the key"), arg_text(L, 3, "the value"))));
  }
  if (name == "compare_and_pexpire") {
    if (n != 4) throw Misuse{"redis.script: compare_and_pexpire takes a key, a value and milliseconds"};
    const db::Value t = arg_value(L, 4, 3);
    const auto* x = std::get_if<std::int64_t>(&t);
    if (x == nullptr || *x <= 0) throw Misuse{"redis.script: compare_and_pexpire: expected milliseconds above 0"};
    const sim::Duration ttl = script_ms(static_cast<double>(*x), "redis.script: compare_and_pexpire", true);
    return push_reply(L, send(inv, redis::Command::cas_pexpire(arg_text(L, 2, "the key"), arg_text(L, 3, "the value"), ttl)));
  }
  throw Misuse{fmt::format("redis.script: the model's scripts are compare_and_delete and compare_and_pexpire, not {}", name)};
}

int ScriptStrategy::lock_redis(lua_State* L, Invocation& inv) {
  const std::string key = arg_text(L, 1, "locks.redis: the key");
  check_options(L, 2, "locks.redis");
  RedisLockOptions o{.unlock = RedisUnlock::compare_and_delete};
  if (auto ttl = opt_number(L, 2, "ttl_ms")) o.ttl = ms(*ttl);
  o.expire_after = opt_flag(L, 2, "expire_after");
  if (o.expire_after && !o.ttl) throw Misuse{"locks.redis: expire_after needs ttl_ms"};
  if (auto tries = opt_number(L, 2, "tries")) o.tries = static_cast<int>(std::min(*tries, 1e6));
  if (auto wait = opt_number(L, 2, "wait_ms")) o.wait = ms(*wait);
  if (auto pause = opt_number(L, 2, "pause_ms")) o.pause = ms(*pause);
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_pushstring(L, "unlock");
    const int t = lua_rawget(L, 2);
    const std::string how = t == LUA_TSTRING ? lua_tostring(L, -1) : "";
    lua_pop(L, 1);
    if (how == "del")
      o.unlock = RedisUnlock::del;
    else if (t != LUA_TNIL && how != "compare_and_delete")
      throw Misuse{"locks.redis: option unlock: expected \"compare_and_delete\" (the default) or \"del\""};
  }
  return push_lock(L, inv, inv.strategy->clients(inv).redis(key, o), key);
}

int ScriptStrategy::lock_redisson(lua_State* L, Invocation& inv) {
  const std::string key = arg_text(L, 1, "locks.redisson: the key");
  check_options(L, 2, "locks.redisson");
  const RedissonOptions o{.lease = ms(opt_number(L, 2, "lease_ms").value_or(30000)),
                          .wait = ms(opt_number(L, 2, "wait_ms").value_or(0)),
                          .pause = ms(opt_number(L, 2, "pause_ms").value_or(100))};
  return push_lock(L, inv, inv.strategy->clients(inv).redisson(key, o));
}

int ScriptStrategy::lock_redlock(lua_State* L, Invocation& inv) {
  const std::string key = arg_text(L, 1, "locks.redlock: the key");
  check_options(L, 2, "locks.redlock");
  redis::RedlockConfig c;
  if (auto ttl = opt_number(L, 2, "ttl_ms")) c.ttl = ms(*ttl);
  if (auto t = opt_number(L, 2, "node_timeout_ms")) c.node_timeout = ms(*t);
  if (auto n = opt_number(L, 2, "retry_count")) c.retry_count = static_cast<int>(std::min(*n, 1e6));
  if (auto d = opt_number(L, 2, "retry_delay_max_ms")) c.retry_delay_max = ms(*d);
  return push_lock(L, inv, inv.strategy->clients(inv).redlock(key, c));
}

int ScriptStrategy::lock_zookeeper(lua_State* L, Invocation& inv) {
  const std::string path = arg_text(L, 1, "locks.zookeeper: the path");
  check_options(L, 2, "locks.zookeeper");
  const auto recipe = opt_flag(L, 2, "herd") ? zk::LockRecipe::herd : zk::LockRecipe::next_lower;
  return push_lock(L, inv, inv.strategy->clients(inv).zookeeper(path, recipe, ms(opt_number(L, 2, "wait_ms").value_or(0))));
}

int ScriptStrategy::lock_etcd(lua_State* L, Invocation& inv) {
  const std::string prefix = arg_text(L, 1, "locks.etcd: the prefix");
  check_options(L, 2, "locks.etcd");
  EtcdUnlockOptions unlock;
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_pushstring(L, "unlock");
    const int t = lua_rawget(L, 2);
    const std::string how = t == LUA_TNIL ? "by_name" : t == LUA_TSTRING ? lua_tostring(L, -1) : "";
    lua_pop(L, 1);
    if (how != "by_name" && how != "if_owner")
      throw Misuse{"locks.etcd: option unlock: expected \"by_name\" (Mutex.Unlock, the default) or \"if_owner\""};
    if (how == "if_owner") unlock.how = etcd::Mutex::Unlock::if_owner;
  }
  if (auto every = opt_number(L, 2, "unlock_retry_ms")) unlock.retry = script_ms(*every, "locks.etcd: option unlock_retry_ms", true);
  return push_lock(L, inv, inv.strategy->clients(inv).etcd(prefix, ms(opt_number(L, 2, "wait_ms").value_or(0)), unlock));
}

// locks.zookeeper_state(): the worker's ZooKeeper client's connection state as Curator names it
// ("CONNECTED", "SUSPENDED", "RECONNECTED", "LOST") and its session id, for a holder that
// follows Curator's advice before it writes.
int ScriptStrategy::zookeeper_state(lua_State* L, Invocation& inv) {
  const zk::Client& client = inv.strategy->env_.zookeeper(*inv.worker);
  lua_pushstring(L, zk::to_string(client.state()));
  lua_pushinteger(L, static_cast<lua_Integer>(client.session()));
  return 2;
}

// locks.consul(key [, opts]): api.Lock with a session of its own.
int ScriptStrategy::lock_consul(lua_State* L, Invocation& inv) {
  const std::string key = arg_text(L, 1, "locks.consul: the key");
  check_options(L, 2, "locks.consul");
  consul::LockOptions o;
  if (auto ttl = opt_number(L, 2, "ttl_ms")) o.session.ttl = ms(*ttl);
  if (auto delay = opt_number(L, 2, "lock_delay_ms")) o.session.lock_delay = ms(*delay);
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_pushstring(L, "behavior");
    const int t = lua_rawget(L, 2);
    const std::string name = t == LUA_TNIL ? "release" : t == LUA_TSTRING ? lua_tostring(L, -1) : "";
    lua_pop(L, 1);
    if (name != "release" && name != "delete") throw Misuse{"option behavior: expected \"release\" or \"delete\""};
    o.session.behavior = name == "delete" ? consul::Behavior::del : consul::Behavior::release;
  }
  return push_lock(L, inv, inv.strategy->clients(inv).consul(key, o, ms(opt_number(L, 2, "wait_ms").value_or(0))));
}

int ScriptStrategy::lock_local(lua_State* L, Invocation& inv) {
  const std::string key = arg_text(L, 1, "locks.local_mutex: the key");
  ScriptStrategy& self = *inv.strategy;
  return push_lock(L, inv, self.clients(inv).local(self.mutexes_[&inv.worker->server], key));
}

int ScriptStrategy::hold(lua_State* L, Invocation& inv) {
  const std::string key = arg_text(L, 1, "hold: the key");
  const std::string value = arg_text(L, 2, "hold: the value");
  std::optional<sim::Duration> lease;
  if (!lua_isnoneornil(L, 3)) {
    if (lua_type(L, 3) != LUA_TNUMBER) throw Misuse{"hold: the lease, when given, is milliseconds above 0"};
    lease = script_ms(lua_tonumber(L, 3), "hold: the lease", true);
  }
  return push_lock(L, inv, inv.strategy->clients(inv).redis_hold(key, value, lease));
}

// hold_until(key, until_ms): a lease the script keeps itself (a row's lock_until), its own
// until the node's wall clock (now_ms()) reads until_ms.
int ScriptStrategy::hold_until(lua_State* L, Invocation& inv) {
  const std::string key = arg_text(L, 1, "hold_until: the key");
  if (lua_type(L, 2) != LUA_TNUMBER) throw Misuse{"hold_until: the lease's end: expected ms on the node's wall clock, as now_ms() gives"};
  const double until = lua_tonumber(L, 2);
  if (!std::isfinite(until) || until < 0 || until > 1e15)
    throw Misuse{fmt::format("hold_until: the lease's end: expected ms from 0 to 1e15, got {}", until)};
  const sim::Time at = sim::Time{} + std::chrono::duration_cast<sim::Duration>(std::chrono::duration<double, std::milli>(until));
  return push_lock(L, inv, inv.strategy->clients(inv).lease_hold(key, at));
}

LockGuard& ScriptStrategy::held_lock(lua_State* L, Invocation& inv, const char* method) {
  Resource& res = resource_of(L, inv, 1, kLockMeta, "lock");
  if (!res.lock->held()) throw Misuse{fmt::format("lock:{}: this lock was released already", method)};
  return *res.lock;
}

int ScriptStrategy::lock_index(lua_State* L, Invocation& inv) {
  Resource& res = resource_of(L, inv, 1, kLockMeta, "lock");
  const std::string field = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "";
  if (field == "token") {
    lua_pushinteger(L, res.lock->token());
    return 1;
  }
  if (field == "held") {
    lua_pushboolean(L, res.lock->held());
    return 1;
  }
  lua_getfield(L, LUA_REGISTRYINDEX, kLockMethods);
  lua_pushvalue(L, 2);
  lua_rawget(L, -2);
  return 1;
}

int ScriptStrategy::lock_release(lua_State* L, Invocation& inv) {
  held_lock(L, inv, "release").unlock();
  return 0;
}

int ScriptStrategy::lock_release_with_del(lua_State* L, Invocation& inv) {
  LockGuard& lock = held_lock(L, inv, "release_with_del");
  Resource& res = resource_of(L, inv, 1, kLockMeta, "lock");
  if (res.redis_key.empty()) throw Misuse{"lock:release_with_del: only a lock of locks.redis has a plain DEL"};
  lock.unlock(inv.strategy->clients(inv).redis_unlock(res.redis_key, RedisUnlock::del));
  return 0;
}

int ScriptStrategy::lock_rejected(lua_State* L, Invocation& inv) {
  held_lock(L, inv, "rejected").hold().rejected();
  return 0;
}

// The handler's time and values.
int ScriptStrategy::do_work(lua_State*, Invocation& inv) {
  sim::sleep_for(inv.strategy->env_.work(*inv.worker));
  return 0;
}

int ScriptStrategy::do_sleep(lua_State* L, Invocation&) {
  if (lua_type(L, 1) != LUA_TNUMBER) throw Misuse{"sleep: expected milliseconds from 0 to 1e12"};
  sim::sleep_for(script_ms(lua_tonumber(L, 1), "sleep"));
  return 0;
}

int ScriptStrategy::now_ms(lua_State* L, Invocation& inv) {
  const sim::Time t = inv.worker->server.node().clock().now();
  lua_pushnumber(L, std::chrono::duration<double, std::milli>(t.time_since_epoch()).count());
  return 1;
}

// effect(name, value): an external side effect of this attempt, which no rollback undoes.
int ScriptStrategy::effect(lua_State* L, Invocation& inv) {
  const std::string name = arg_text(L, 1, "the effect's name");
  if (name.empty() || name.size() > 64) throw Misuse{"effect: expected a name of 1 to 64 bytes"};
  const db::Value value = lua_isnoneornil(L, 2) ? db::Value{std::int64_t{0}} : arg_value(L, 2, 2);
  constexpr std::size_t kMostEffects = 1'000'000;
  if (inv.strategy->env_.effects().size() >= kMostEffects) throw Misuse{fmt::format("effect: at most {} effects in a trial", kMostEffects)};
  // The effects are held to the end of the trial: they count in its memory budget (Env's
  // effects_bytes), and a call that would take them past a quarter of the script's cap is
  // refused before they grow inside one request, where no budget check runs; the workload's
  // check, whose own cap is the same, reads them all.
  const std::size_t most = inv.strategy->rt_.limits.memory_bytes / 4;
  const std::size_t bytes = name.size() + (std::holds_alternative<std::string>(value) ? std::get<std::string>(value).size() : 0);
  if (inv.strategy->env_.effects_bytes() + bytes > most)
    throw Misuse{fmt::format("effect: the effects of a trial may hold at most {} MiB (a quarter of its memory budget)", most >> 20)};
  inv.strategy->env_.note_effect(
      {.name = name, .value = value, .operation = inv.request->operation, .attempt = inv.request->attempt, .at = sim::now()});
  return 0;
}

int ScriptStrategy::unique(lua_State* L, Invocation& inv) {
  const std::string token = attempt_token(*inv.request, *inv.worker);
  lua_pushlstring(L, token.data(), token.size());
  return 1;
}

int ScriptStrategy::remote_create(lua_State* L, Invocation& inv) {
  const db::Value id = arg_value(L, 1, 1);
  const auto* n = std::get_if<std::int64_t>(&id);
  if (n == nullptr) throw Misuse{"remote.create: expected the account's id (an integer)"};
  if (lua_type(L, 2) != LUA_TNUMBER || !(lua_tonumber(L, 2) > 0) || lua_tonumber(L, 2) > 1e12)
    throw Misuse{"remote.create: expected the timeout in milliseconds as the second argument"};
  inv.strategy->env_.remote_create(*inv.worker, *n, ms(lua_tonumber(L, 2)));
  return 0;
}

int ScriptStrategy::random(lua_State* L, Invocation& inv) {
  sim::Stream& stream = inv.worker->stream;
  const int n = lua_gettop(L);
  if (n == 0) {
    lua_pushnumber(L, stream.uniform01());
    return 1;
  }
  if (n > 2 || !lua_isinteger(L, 1) || (n == 2 && !lua_isinteger(L, 2)))
    throw Misuse{"math.random: expected no argument, m, or m and n (integers)"};
  const lua_Integer low = n == 2 ? lua_tointeger(L, 1) : 1, high = n == 2 ? lua_tointeger(L, 2) : lua_tointeger(L, 1);
  if (low > high) throw Misuse{"math.random: interval is empty"};
  const auto span = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  const std::uint64_t draw = span == UINT64_MAX ? stream.bits() : stream.choose(span + 1);
  lua_pushinteger(L, static_cast<lua_Integer>(static_cast<std::uint64_t>(low) + draw));
  return 1;
}

}  // namespace models::strategies::lua_api
