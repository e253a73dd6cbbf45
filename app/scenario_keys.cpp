// The scenario's sections of plain keys, each key declared once (app/keys.hpp): its top-level
// values, "topology", "database", "clients", "redis", "zookeeper" and "etcd". Each table is what
// its object allows, how it is read and what the effective configuration writes; the checks
// that join keys (a cap no smaller than its base, count or traffic) stand beside the table.

#include <fmt/format.h>

#include <chrono>
#include <limits>

#include "app/database_input.hpp"
#include "app/keys.hpp"
#include "app/metrics.hpp"
#include "app/scenario_parts.hpp"
#include "app/trial.hpp"
#include "app/workload_kind.hpp"

namespace locksim {

namespace {

// How scenario files name the models' enumerations.
namespace names {
const Names<models::Balance> balance = {
    {"random", models::Balance::random}, {"round_robin", models::Balance::round_robin}, {"sticky", models::Balance::sticky}};
const Names<models::db::Isolation> isolation = {{"repeatable_read", models::db::Isolation::repeatable_read},
                                                {"read_committed", models::db::Isolation::read_committed},
                                                {"read_uncommitted", models::db::Isolation::read_uncommitted},
                                                {"serializable", models::db::Isolation::serializable}};
const Names<models::ArrivalKind> arrival = {{"at_start", models::ArrivalKind::at_start},
                                            {"fixed", models::ArrivalKind::fixed},
                                            {"poisson", models::ArrivalKind::poisson},
                                            {"listed", models::ArrivalKind::listed}};
const Names<models::Jitter> jitter = {{"none", models::Jitter::none},
                                      {"full", models::Jitter::full},
                                      {"equal", models::Jitter::equal},
                                      {"decorrelated", models::Jitter::decorrelated}};
const Names<models::redis::Persistence> persistence = {{"none", models::redis::Persistence::none},
                                                       {"aof_everysec", models::redis::Persistence::aof_everysec},
                                                       {"aof_always", models::redis::Persistence::aof_always}};
}  // namespace names

using namespace keys;
using S = Scenario;
const json kLeftOut(json::value_t::discarded);


// A string at the top; left out of the effective configuration when empty.
Key<S> text(std::string name, std::string S::*field) {
  return {name, [=](const Reader& r, S& s) { s.*field = r.string(name, s.*field); },
          [=](const S& s) { return (s.*field).empty() ? kLeftOut : json(s.*field); }};
}

const Keys<S>& top_keys() {
  static const Keys<S> keys = {
      {"name",
       [](const Reader& r, S& s) {
         r.require("name", "a \"name\"");
         s.name = r.string("name", "");
         if (!is_file_name(s.name)) r.fail(std::string(kFileName) + " (it names the report folder), got " + quote_value(s.name), "name");
       },
       [](const S& s) { return json(s.name); }},
      text("description", &S::description),
      text("source", &S::source),
      text("lesson", &S::lesson),
      integer<S>("trials", [](auto& s) -> auto& { return s.trials; }, 1, 10'000'000),
      integer<S>("seed", [](auto& s) -> auto& { return s.seed; }, 0, std::numeric_limits<std::int64_t>::max()),
      {"time_budget_s",
       [](const Reader& r, S& s) {
         s.time_budget = std::chrono::duration_cast<sim::Duration>(
             std::chrono::duration<double>(r.number("time_budget_s", seconds(s.time_budget), 1, 1e7)));
       },
       [](const S& s) { return json(seconds(s.time_budget)); }},
      integer<S>("event_budget", [](auto& s) -> auto& { return s.event_budget; }, 1000, 1'000'000'000),
      integer<S>("memory_budget_mb", [](auto& s) -> auto& { return s.memory_budget_mb; }, 1, 1'000'000),
  };
  return keys;
}

const Keys<S>& topology_keys() {
  static const Keys<S> keys = {
      integer<S>("app_servers", [](auto& s) -> auto& { return s.deployment.app_servers; }, 1, 1000),
      integer<S>("workers", [](auto& s) -> auto& { return s.deployment.server.workers; }, 1, 100'000),
      integer<S>("accept_queue", [](auto& s) -> auto& { return s.deployment.server.accept_queue; }, 1, 10'000'000),
      pick<S>("balance", [](auto& s) -> auto& { return s.deployment.balance; }, names::balance),
      distribution<S>("client_latency", [](auto& s) -> auto& { return s.deployment.client_link.latency; }),
      distribution<S>("internal_latency", [](auto& s) -> auto& { return s.deployment.internal_link.latency; }),
      distribution<S>("app_work", [](auto& s) -> auto& { return s.app_work; }),
      distribution<S>("remote_service", [](auto& s) -> auto& { return s.deployment.remote.service; }),
  };
  return keys;
}

// "engine" first: the others' defaults are the engine's.
const Keys<S>& database_keys() {
  static const Keys<S> keys = {
      {"engine",
       [](const Reader& r, S& s) {
         auto& db = s.deployment.database;
         db.server.database.engine = r.pick("engine", db.server.database.engine, engine_names());
         if (db.server.database.engine == models::db::Engine::postgresql) {
           // PostgreSQL's defaults: READ COMMITTED, and no lock_timeout.
           db.server.isolation = models::db::Isolation::read_committed;
           db.server.database.lock_wait_timeout = sim::Duration::zero();
         }
       },
       [](const S& s) { return json(name_of(engine_names(), s.deployment.database.server.database.engine)); }},
      pick<S>("isolation", [](auto& s) -> auto& { return s.deployment.database.server.isolation; }, names::isolation),
      integer<S>("pool_size", [](auto& s) -> auto& { return s.deployment.database.pool.size; }, 1, 100'000),
      distribution<S>("read", [](auto& s) -> auto& { return s.deployment.database.server.read_service; }),
      distribution<S>("write", [](auto& s) -> auto& { return s.deployment.database.server.write_service; }),
      distribution<S>("commit", [](auto& s) -> auto& { return s.deployment.database.server.commit_service; }),
      distribution<S>("row", [](auto& s) -> auto& { return s.deployment.database.server.row_service; }),
      {"lock_wait_timeout_ms",  // 0 is PostgreSQL's "no lock_timeout"
       [](const Reader& r, S& s) {
         auto& db = s.deployment.database.server.database;
         db.lock_wait_timeout = r.millis("lock_wait_timeout_ms", db.lock_wait_timeout, db.engine == models::db::Engine::postgresql ? 0 : 1);
       },
       [](const S& s) { return json(to_ms(s.deployment.database.server.database.lock_wait_timeout)); }},
      millis<S>("statement_timeout_ms", [](auto& s) -> auto& { return s.deployment.database.pool.statement_timeout; }, 1),
      // An online ADD INDEX's build, per row of the table (docs/sql.md, "Online ALTER").
      {"index_build_us_per_row",
       [](const Reader& r, S& s) {
         auto& per_row = s.deployment.database.server.database.index_build_per_row;
         per_row = std::chrono::duration_cast<sim::Duration>(std::chrono::duration<double, std::micro>(
             r.number("index_build_us_per_row", std::chrono::duration<double, std::micro>(per_row).count(), 0, 1e6)));
       },
       [](const S& s) {
         return json(std::chrono::duration<double, std::micro>(s.deployment.database.server.database.index_build_per_row).count());
       }},
  };
  return keys;
}

const Keys<models::ClientsConfig>& arrival_keys() {
  using C = models::ClientsConfig;
  static const Keys<C> keys = {
      pick<C>("kind", [](auto& c) -> auto& { return c.arrival.kind; }, names::arrival),
      millis<C>("start_ms", [](auto& c) -> auto& { return c.arrival.start; }),
      millis<C>("spread_ms", [](auto& c) -> auto& { return c.arrival.spread; }),
      millis<C>("interval_ms", [](auto& c) -> auto& { return c.arrival.interval; }, 0.001),
      {"times_ms",  // "times_ms": [0, 5600, 9000]: each client's operations at these times, in order
       [](const Reader& a, C& c) {
         if (c.arrival.kind == models::ArrivalKind::listed)
           c.arrival.times = a.times("times_ms", "each client's operations, for a listed arrival", static_cast<std::size_t>(limits::max_operations));
         else if (a.has("times_ms"))
           a.fail("times_ms only with \"kind\": \"listed\"", "times_ms");
       },
       [](const C& c) {
         if (c.arrival.kind != models::ArrivalKind::listed) return kLeftOut;
         json times = json::array();
         for (const auto t : c.arrival.times) times.push_back(to_ms(t));
         return times;
       }},
  };
  return keys;
}

const Keys<models::RetryPolicy>& backoff_keys() {
  using R = models::RetryPolicy;
  static const Keys<R> keys = {
      millis<R>("base_ms", [](auto& r) -> auto& { return r.backoff.base; }),
      {"cap_ms",
       [](const Reader& b, R& r) {
         r.backoff.cap = b.millis("cap_ms", r.backoff.cap);
         if (r.backoff.cap < r.backoff.base) b.fail(fmt::format("a cap no smaller than the base ({} ms)", to_ms(r.backoff.base)), "cap_ms");
       },
       [](const R& r) { return json(to_ms(r.backoff.cap)); }},
      pick<R>("jitter", [](auto& r) -> auto& { return r.backoff.jitter; }, names::jitter),
  };
  return keys;
}

// A client's own arrivals (count, operations, keys, arrival) or the population's (traffic).
bool per_client(const models::ClientsConfig& c) { return !c.traffic; }

const Keys<models::ClientsConfig>& clients_keys() {
  using C = models::ClientsConfig;
  static const Keys<C> keys = {
      {"count", [](const Reader& r, C& c) { c.clients = static_cast<int>(r.integer("count", c.clients, 1, limits::max_clients)); },
       [](const C& c) { return per_client(c) ? json(c.clients) : kLeftOut; }},
      {"operations",
       [](const Reader& r, C& c) {
         c.operations_per_client = static_cast<int>(r.integer("operations", c.operations_per_client, 1, limits::max_operations));
       },
       [](const C& c) { return per_client(c) ? json(c.operations_per_client) : kLeftOut; }},
      {"keys",
       [](const Reader& r, C& c) {
         c.keys = static_cast<std::uint64_t>(r.integer("keys", static_cast<std::int64_t>(c.keys), 0, std::numeric_limits<std::int64_t>::max()));
       },
       [](const C& c) { return per_client(c) ? json(c.keys) : kLeftOut; }},
      {"arrival",
       [](const Reader& r, C& c) {
         if (!r.has("arrival")) return;
         const Reader a = r.child("arrival");
         a.declare("", {{"if", {{"properties", {{"kind", {{"const", "listed"}}}}}, {"required", {"kind"}}}},
                        {"then", {{"required", {"times_ms"}}}}});
         read_section(a, arrival_keys(), c);
         if (c.arrival.kind != models::ArrivalKind::listed) return;
         if (r.has("operations") && c.operations_per_client != static_cast<int>(c.arrival.times.size()))
           r.fail("as many operations as listed arrival times", "operations");
         c.operations_per_client = static_cast<int>(c.arrival.times.size());
       },
       [](const C& c) { return per_client(c) ? write_keys(arrival_keys(), c) : kLeftOut; }},
      {"traffic",
       [](const Reader& r, C& c) {
         if (!r.has("traffic")) return;
         for (const char* own : {"count", "operations", "keys", "arrival"})
           if (r.has(own))
             r.fail(fmt::format("either traffic (the whole population's arrivals) or count, operations, keys and arrival (each "
                                "client's), not both: {} is a client's",
                                own),
                    own);
         c.traffic = load_traffic(r.child("traffic"));
       },
       [](const C& c) { return per_client(c) ? kLeftOut : traffic_json(*c.traffic); }},
      millis<C>("timeout_ms", [](auto& c) -> auto& { return c.retry.attempt_timeout; }, 0.001),
      integer<C>("max_attempts", [](auto& c) -> auto& { return c.retry.max_attempts; }, 1, 1000),
      {"backoff",
       [](const Reader& r, C& c) {
         if (r.has("backoff")) read_section(r.child("backoff"), backoff_keys(), c.retry);
       },
       [](const C& c) { return write_keys(backoff_keys(), c.retry); }},
      {"retry_on",  // error kinds, or an error code a design answers with (1062, 23505)
       [](const Reader& r, C& c) {
         if (!r.has("retry_on")) return;
         json defaults = json::array();
         for (models::ErrorKind kind : c.retry.retry_on) defaults.push_back(models::to_string(kind));
         r.declare("retry_on", {{"type", "array"}, {"items", {{"type", "string"}}}, {"default", defaults}});
         const json& list = r.raw().at("retry_on");
         if (!list.is_array()) r.fail("a list of error kinds", "retry_on");
         c.retry.retry_on.clear();
         for (std::size_t i = 0; i < list.size(); ++i) {
           if (!list[i].is_string()) r.fail("an error kind", "retry_on/" + std::to_string(i));
           const std::string name = list[i].get<std::string>();
           if (!error_kind(name) && answer_code(name))
             c.retry.retry_on_codes.push_back(name);
           else
             c.retry.retry_on.push_back(read_error_kind(r, name, "retry_on/" + std::to_string(i)));
         }
       },
       [](const C& c) {
         json out = json::array();
         for (const auto kind : c.retry.retry_on) out.push_back(error_name(kind));
         for (const auto& code : c.retry.retry_on_codes) out.push_back(code);
         return out;
       }},
  };
  return keys;
}

const Keys<models::RedisSetup>& redis_keys() {
  using R = models::RedisSetup;
  static const Keys<R> keys = {
      {"instances",  // redis-1 .. redis-N; absent: as many as the strategy needs
       [](const Reader& r, R& redis) {
         if (r.has("instances")) redis.instances = static_cast<int>(r.integer("instances", 1, 99));
       },
       [](const R& redis) { return redis.instances ? json(*redis.instances) : kLeftOut; }},
      pick<R>("persistence", [](auto& r) -> auto& { return r.server.persistence; }, names::persistence),
      boolean<R>("failover", [](auto& r) -> auto& { return r.failover; }),
      millis<R>("down_after_ms", [](auto& r) -> auto& { return r.sentinel.down_after; }, 1),
      distribution<R>("replication_lag", [](auto& r) -> auto& { return r.server.replication_lag; }),
      millis<R>("client_timeout_ms", [](auto& r) -> auto& { return r.client_timeout; }, 0.001),
  };
  return keys;
}

const Keys<models::CoordinationSetup>& zookeeper_keys() {
  using Z = models::CoordinationSetup;
  static const Keys<Z> keys = {
      millis<Z>("tick_ms", [](auto& c) -> auto& { return c.zookeeper.tick_time; }, 1),
      millis<Z>("session_timeout_ms", [](auto& c) -> auto& { return c.zookeeper_client.session_timeout; }, 1),
  };
  return keys;
}

const Keys<models::CoordinationSetup>& etcd_keys() {
  using E = models::CoordinationSetup;
  static const Keys<E> keys = {millis<E>("session_ttl_ms", [](auto& c) -> auto& { return c.etcd_session_ttl; }, 1)};
  return keys;
}

// database.tables, database.rows and database.legacy: read by load_tables.
const std::vector<std::string> kTableKeys = {"tables", "rows", "legacy"};

// The population's size: what a trial may start.
void check_population(const Reader& top, const Scenario& s) {
  const models::DeploymentConfig& d = s.deployment;
  if (static_cast<std::int64_t>(d.app_servers) * d.server.workers > limits::max_clients)
    top.fail(fmt::format("at most {} workers in all (topology.app_servers x topology.workers), got {} x {}", limits::max_clients,
                         d.app_servers, d.server.workers),
             "topology");
  s.kind->check_population(top, s);
  if (!d.clients.traffic && static_cast<std::int64_t>(d.clients.clients) * d.clients.operations_per_client > limits::max_operations)
    top.fail(fmt::format("at most {} operations a trial (clients.count x clients.operations), got {} x {}", limits::max_operations,
                         d.clients.clients, d.clients.operations_per_client),
             "clients");
}

}  // namespace

void read_top_keys(const Reader& top, Scenario& s) { read_keys(top, top_keys(), s); }

std::vector<std::string> top_key_names() { return key_names(top_keys()); }

void load_sections(const Reader& top, Scenario& s) {
  models::DeploymentConfig& d = s.deployment;
  if (top.has("topology")) read_section(top.child("topology"), topology_keys(), s);
  if (top.has("database")) {
    const Reader r = top.child("database");
    read_section(r, database_keys(), s, kTableKeys);
    load_tables(r, d.database, s.tables_sql);
  }
  if (top.has("clients")) read_section(top.child("clients"), clients_keys(), d.clients);
  check_population(top, s);
  if (top.has("redis")) read_section(top.child("redis"), redis_keys(), d.redis);
  if (top.has("zookeeper")) read_section(top.child("zookeeper"), zookeeper_keys(), d.coordination);
  if (top.has("etcd")) read_section(top.child("etcd"), etcd_keys(), d.coordination);
}

json effective_config(const Scenario& s) {
  const models::DeploymentConfig& d = s.deployment;
  json doc = write_keys(top_keys(), s);
  doc["workload"] = write_keys(s.kind->keys(), s);
  doc["workload"]["kind"] = s.kind->name();
  s.kind->effective(s, doc);
  doc["topology"] = write_keys(topology_keys(), s);
  doc["database"] = write_keys(database_keys(), s);
  doc["database"].update(tables_json(d.database, s.tables_sql));
  doc["redis"] = write_keys(redis_keys(), d.redis);
  doc["zookeeper"] = write_keys(zookeeper_keys(), d.coordination);
  doc["etcd"] = write_keys(etcd_keys(), d.coordination);
  doc["clients"] = write_keys(clients_keys(), d.clients);
  json faults = json::object();
  for (const auto& f : s.faults) faults[f.kind->key()] = f.faults->effective();
  doc["faults"] = faults;
  json strategies = json::array();
  for (const auto& choice : s.strategies) {
    if (choice.rollout) {
      strategies.push_back({{"as", choice.label}, {"rollout", plan_steps_json(*choice.rollout)}});
      continue;
    }
    json one = choice.script ? json{{"script", choice.script_file}} : json{{"name", choice.name}};
    if (!choice.label.empty()) one["as"] = choice.label;
    one["params"] = choice.params;
    strategies.push_back(std::move(one));
  }
  doc["strategies"] = strategies;
  if (s.rollout) doc["rollout"] = rollout_json(*s.rollout);
  json expect = json::object();
  for (const auto& e : s.expect)
    expect[e.strategy][e.metric] = fmt::format("{} {:g}{}", e.op, e.value, e.every_trial ? " in every trial" : "");
  if (!expect.empty()) doc["expect"] = expect;
  return doc;
}

}  // namespace locksim
