#include "models/workloads/rollout/rollout.hpp"

#include <fmt/format.h>

#include "models/app/load_balancer.hpp"
#include "models/checkers/duplicates.hpp"

#include <algorithm>
#include <map>

namespace models::rollout {

namespace {
double seconds(sim::Duration d) { return std::chrono::duration<double>(d).count(); }

bool same_code(const Deploy& a, const Deploy& b) { return a.strategy == b.strategy && a.params == b.params; }
}  // namespace

std::string Step::text() const {
  if (const auto* d = std::get_if<Deploy>(&action)) {
    if (d->rolling == sim::Duration{}) return "deploy " + d->strategy;
    if (d->drain == sim::Duration{}) return fmt::format("deploy {} (rolling, {:g} s apart)", d->strategy, seconds(d->rolling));
    return fmt::format("deploy {} (rolling, each server drained {:g} s, {:g} s apart)", d->strategy, seconds(d->drain),
                       seconds(d->rolling));
  }
  if (const auto* j = std::get_if<Job>(&action)) {
    if (!j->start) return "stop the cleanup job";
    if (!j->settings) return "start the cleanup job";
    return fmt::format("start the cleanup job ({} keys a run, every {:g} s)", j->settings->keys_per_run, seconds(j->settings->interval));
  }
  const Sql& s = std::get<Sql>(action);
  return s.retry == sim::Duration{} ? s.statement.text : fmt::format("{} (again every {:g} s while it fails)", s.statement.text, seconds(s.retry));
}

std::vector<Phase> phases(const Plan& plan) {
  std::vector<Phase> out{Phase{}};
  for (const Step& step : plan.steps) {
    if (step.at != out.back().from) {
      out.back().to = step.at;
      out.push_back(Phase{step.at});
    }
    out.back().steps.push_back(step.text());
  }
  out.back().to = plan.duration;
  return out;
}

std::vector<Deploy> code_of(const Plan& plan) {
  std::vector<Deploy> out{plan.running};
  for (const Step& step : plan.steps)
    if (const auto* d = std::get_if<Deploy>(&step.action))
      if (std::none_of(out.begin(), out.end(), [&](const Deploy& known) { return same_code(known, *d); })) out.push_back(*d);
  return out;
}

strategies::Needs needs(const Plan& plan) {
  strategies::Needs out;
  for (const Deploy& code : code_of(plan)) {
    const strategies::Entry* entry = strategies::find(code.strategy);
    if (entry == nullptr) throw sim::UsageError("models::rollout: no strategy " + code.strategy);
    const strategies::Needs n = strategies::needs(*entry, code.params);
    out.redis = out.redis || n.redis;
    out.redis_instances = std::max(out.redis_instances, n.redis_instances);
    out.zookeeper = out.zookeeper || n.zookeeper;
    out.etcd = out.etcd || n.etcd;
    out.consul = out.consul || n.consul;
    out.remote = out.remote || n.remote;
    for (const auto& table : n.tables)
      if (std::none_of(out.tables.begin(), out.tables.end(), [&](const db::TableSchema& t) { return t.name == table.name; }))
        out.tables.push_back(table);
  }
  out.key_index = plan.table.key_index;
  out.accounts = plan.table;
  return out;
}

Rollout::Rollout(strategies::Env& env, std::shared_ptr<const Plan> plan)
    : Strategy(env, {}), plan_(std::move(plan)), code_(code_of(*plan_)) {
  const strategies::Services& services = env.services();
  for (const Deploy& code : code_) strategies_.push_back(strategies::find(code.strategy)->make(env, code.params));
  deployed_.assign(services.servers.size(), 0);
  Node& node = services.servers.at(0)->node();
  // The job's connections time out as the app's do; the DBA's client waits for a DDL
  // statement up to the plan's length.
  const db::PoolConfig app_pool = services.pools.at(0)->config();
  job_pool_ = std::make_unique<db::Pool>(*services.network, node, *services.database, db::PoolConfig{
      .size = 1, .acquire_timeout = app_pool.acquire_timeout, .statement_timeout = app_pool.statement_timeout});
  dba_pool_ = std::make_unique<db::Pool>(*services.network, node, *services.database,
                                         db::PoolConfig{.size = 1, .statement_timeout = plan_->duration});
  log_.key_column = plan_->table.key_column;
  for (const Phase& phase : phases(*plan_)) log_.boundaries.push_back(sim::Time{phase.from});
  log_.boundaries.push_back(sim::Time{plan_->duration});
  // The plan's own process lives on the database's node, which no fault takes down.
  services.database->node().spawn("rollout", [this] { drive(); });
}

Rollout::~Rollout() = default;

Response Rollout::handle(const Request& request, Worker& worker) {
  const auto& servers = env_.services().servers;
  const auto at = std::find(servers.begin(), servers.end(), &worker.server);
  return strategies_[deployed_.at(static_cast<std::size_t>(at - servers.begin()))]->handle(request, worker);
}

std::size_t Rollout::code_index(const Deploy& deploy) const {
  for (std::size_t i = 0; i < code_.size(); ++i)
    if (same_code(code_[i], deploy)) return i;
  throw sim::UsageError("models::rollout: code not in the plan: " + deploy.strategy);
}

void Rollout::drive() {
  const db::Database& database = env_.services().database->database();
  const auto duplicates = [&] {
    return checkers::find_duplicates(database, plan_->table.name, plan_->table.key_column, 0).duplicate_rows;
  };
  constexpr auto kSamples = RolloutLog::kSamples;
  const sim::Duration plan = log_.boundaries.back().time_since_epoch();
  const auto sample_at = [&](std::size_t k) { return sim::Time{plan * static_cast<std::int64_t>(k) / static_cast<std::int64_t>(kSamples)}; };
  std::size_t next = 0, sample = 0;
  for (const sim::Time boundary : log_.boundaries) {
    for (; sample <= kSamples && sample_at(sample) < boundary; ++sample) {
      sim::sleep_until(sample_at(sample));
      log_.duplicates_sampled.push_back(duplicates());
    }
    sim::sleep_until(boundary);
    log_.duplicates_at.push_back(duplicates());
    for (; sample <= kSamples && sample_at(sample) == boundary; ++sample) log_.duplicates_sampled.push_back(log_.duplicates_at.back());
    if (boundary == log_.boundaries.back()) break;
    for (; next < plan_->steps.size() && sim::Time{plan_->steps[next].at} <= boundary; ++next) apply(plan_->steps[next]);
  }
  job_running_ = false;  // the plan is over; so is its job
  ++job_generation_;
}

void Rollout::apply(const Step& step) {
  Node& node = env_.services().servers.at(0)->node();
  if (const auto* d = std::get_if<Deploy>(&step.action)) {
    const std::size_t code = code_index(*d);
    if (d->rolling == sim::Duration{}) {
      std::fill(deployed_.begin(), deployed_.end(), code);
      return;
    }
    node.spawn("rollout.deploy", [this, code, rolling = d->rolling, drain = d->drain] {
      const auto& servers = env_.services().servers;
      LoadBalancer& balancer = *env_.services().balancer;
      for (std::size_t i = 0; i < deployed_.size(); ++i) {
        if (i > 0) sim::sleep_for(rolling);
        if (drain > sim::Duration{}) {
          balancer.set_in_service(*servers[i], false);
          sim::sleep_for(drain);
        }
        deployed_[i] = code;
        balancer.set_in_service(*servers[i], true);
      }
    });
  } else if (const auto* j = std::get_if<Job>(&step.action)) {
    if (j->start == job_running_) return;
    job_running_ = j->start;
    ++job_generation_;
    if (j->start) node.spawn("rollout.cleanup", [this, settings = j->settings.value_or(plan_->cleanup)] { run_job(settings); });
  } else {
    const Sql* sql = &std::get<Sql>(step.action);
    node.spawn("rollout.sql", [this, sql] { run_sql(*sql); });
  }
}

void Rollout::run_job(Cleanup settings) {
  const std::uint64_t generation = job_generation_;
  const std::string& table = plan_->table.name;
  const std::string& key_column = plan_->table.key_column;
  const sim::Time end{plan_->duration};
  while (job_generation_ == generation && sim::now() < end) {
    ++log_.cleanup_runs;
    try {
      db::Connection c = job_pool_->acquire();
      c.set_origin("cleanup job");
      struct Rows {
        std::int64_t lowest = 0;
        std::uint64_t n = 0;
      };
      std::map<db::Value, Rows> by_key;  // each key's lowest id and how many rows it has
      for (const db::Row& row : c.select(table, {})) {
        auto [it, first] = by_key.try_emplace(row.values.at(key_column), Rows{row.id, 0});
        if (!first) it->second.lowest = std::min(it->second.lowest, row.id);
        ++it->second.n;
      }
      std::uint64_t keys = 0;
      for (const auto& [key, rows] : by_key) {
        if (rows.n < 2) continue;
        if (keys++ == settings.keys_per_run || job_generation_ != generation) break;
        try {
          log_.cleanup_deleted +=
              static_cast<std::uint64_t>(c.remove(table, {db::eq(key_column, key), db::gt("id", rows.lowest)}));
        } catch (const db::SqlError& e) {
          if (e.code() == db::Code::connection_timeout) throw;  // the connection is gone: this run is over
        }
      }
    } catch (const db::SqlError&) {  // no connection, or it timed out: the next run tries again
    }
    sim::sleep_for(settings.interval);
  }
}

void Rollout::run_sql(const Sql& sql) {
  const db::Statement statement = db::sql::bind(sql.statement, {});
  const sim::Time end{plan_->duration};
  while (true) {
    RolloutLog::Ddl record{.start = sim::now(), .sql = sql.statement.text};
    try {
      db::Connection c = dba_pool_->acquire();
      c.set_origin("DBA");
      record.code = c.try_execute(statement).code;
    } catch (const db::SqlError& e) {
      record.code = e.code();
    }
    record.end = sim::now();
    log_.ddl.push_back(record);
    if (record.code == db::Code::ok) {
      if (statement.kind == db::Statement::Kind::add_index && statement.unique && !log_.indexed) {
        log_.indexed = true;
        log_.indexed_at = record.end;
      }
      return;
    }
    if (sql.retry == sim::Duration{} || sim::now() + sql.retry >= end) return;
    sim::sleep_for(sql.retry);
  }
}

std::uint64_t Rollout::bytes_held() const {
  std::uint64_t held = 0;
  for (const auto& s : strategies_) held += s->bytes_held();
  return held;
}

const RolloutLog& Rollout::finish(const db::Database& database) {
  log_.rows_ever = database.rows_sharing(plan_->table.name, plan_->table.key_column, true);
  return log_;
}

}  // namespace models::rollout
