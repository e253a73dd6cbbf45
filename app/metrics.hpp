#pragma once
// The metric registry: every metric the tool measures, with its kind, unit and meaning. The
// checkers declare theirs (models/checkers/); the runner adds the figures it computes over a
// run's operations (latency percentiles, statements per operation). Results, the report's
// notes, `expect`, `--property`, `--metric` and docs/metrics.md all read this one list.

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "models/app/request.hpp"
#include "models/checkers/checker.hpp"
#include "models/workloads/lua/workload.hpp"

namespace locksim {

using models::checkers::MetricInfo;

/// A part of a logical operation's time (models::TimeSpent), as its metric `time_ms.<name>` names it.
struct TimePart {
  const char* name;
  sim::Duration models::TimeSpent::*member;
  const char* meaning;
};
/// Every part, in the order the report's table and picture show them; they sum to the latency.
inline constexpr std::array<TimePart, 7> kTimeParts = {{
    {"queue", &models::TimeSpent::queue, "time waiting in an app server's accept queue for a worker"},
    {"pool", &models::TimeSpent::pool, "time waiting for a pooled database connection"},
    {"db_lock", &models::TimeSpent::db_lock, "time its statements waited for row and gap locks in the database"},
    {"lock_service", &models::TimeSpent::lock_service,
     "time acquiring locks (Redis, Redisson, Redlock, ZooKeeper, etcd, Consul, the lock table, a local mutex), retry loops included"},
    {"timed_out", &models::TimeSpent::timed_out, "time in attempts the client timed out on, whatever they were doing"},
    {"backoff", &models::TimeSpent::backoff, "time the client slept between attempts"},
    {"service_network", &models::TimeSpent::service_network,
     "the rest of its latency: handler work, statements and commands served, network, pauses (the parts sum to the latency)"},
}};

/// Every metric, in the order tables list them.
const std::vector<MetricInfo>& metrics();
/// A count metric read another way than its total: `duplicate_rows.per_million` (per million
/// operations, with a 95% interval), `.total`, `.share` (of trials in which it fired).
struct MetricForm {
  std::string base;  // duplicate_rows
  std::string form;  // "", "total", "share" or "per_million"
};
MetricForm metric_form(const std::string& name);
/// The metric called `name` (a family's member, errors.1062 say, gives the family's entry; a
/// form, duplicate_rows.per_million, gives its base's), or null.
const MetricInfo* metric_info(const std::string& name);
/// Whether `name` is a metric this tool knows (measured or not in a given scenario).
inline bool is_metric(const std::string& name) { return metric_info(name) != nullptr; }
/// The findings (what should not happen): the properties a search looks for. A Lua workload's
/// own come first, then the built-in ones in registry order.
const std::vector<const MetricInfo*>& findings();
/// Where `name` is in findings() (its size for a metric that is no finding): the order in which
/// a trial's findings are told.
std::size_t finding_rank(const std::string& name);
/// Whether `name` is a finding a Lua workload declared (its check's, not a built-in checker's).
bool workload_finding(const std::string& name);
/// Whether a trial's value of metric `name` is a finding that fired.
bool fires(const std::string& name, double value);
/// Adds the counts a Lua workload's check returns (file: the workload's, for messages); a name an
/// earlier workload of this process declared takes the new declaration. Throws InputError for a
/// name a built-in metric has. Called while a scenario loads, never while trials run.
void declare_workload_metrics(const std::string& file, const std::vector<models::workloads::MetricDecl>& declared);
/// From now on a declaration that would change the metrics (a new name, another meaning) is
/// refused with InputError, and the same one again writes nothing: what `locksim serve` sets
/// once it has loaded its scenarios, since its trials read the metrics while others load.
void freeze_workload_metrics();
/// docs/metrics.md: the built-in metrics as a Markdown page.
std::string metrics_markdown();

using models::checkers::error_name;
/// The error kind a name stands for, if any.
std::optional<models::ErrorKind> error_kind(const std::string& name);

}  // namespace locksim
