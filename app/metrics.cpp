#include "app/metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>

#include "app/input.hpp"
#include "app/workload_kind.hpp"

namespace locksim {

using models::checkers::Aggregate;
using models::checkers::MetricKind;

namespace {
// What the runner computes itself, over the operations of a whole run.
std::vector<MetricInfo> runner_metrics() {
  std::vector<MetricInfo> out = {{.name = "operations", .unit = "operations",
                                  .meaning = "logical operations the clients ran (the batch scheduler: tasks; the sessions workload: steps "
                                             "issued)",
                                  .per_operation = false}};
  out.push_back({.name = "injected_faults", .unit = "faults",
                 .meaning = "faults injected: each listed fault whose time came, each GC pause (faults.gc_pauses.count_over_ms "
                            "long at least); NAME.per_fault divides a count by it",
                 .per_operation = false});
  out.push_back({.name = "failed_operations", .unit = "operations",
                 .meaning = "logical operations of the clients that ended in an error or gave up (the errors counts say which "
                            "error); the latency percentiles and time parts leave them out"});
  for (const char* p : {"p50", "p90", "p99", "p99.9"})
    out.push_back({.name = fmt::format("latency_ms.{}", p), .kind = MetricKind::duration, .unit = "ms",
                   .meaning = fmt::format("latency of a successful logical operation, first attempt to the answer: the {}th "
                                          "percentile",
                                          std::string(p).substr(1)),
                   .aggregate = Aggregate::over_run});
  out.push_back({.name = "latency_ms.max", .kind = MetricKind::duration, .unit = "ms",
                 .meaning = "latency of the slowest successful logical operation", .aggregate = Aggregate::over_run});
  for (const char* p : {"p50", "p99"})
    out.push_back({.name = fmt::format("failed_latency_ms.{}", p), .kind = MetricKind::duration, .unit = "ms",
                   .meaning = fmt::format("latency of a failed logical operation (failed_operations), first attempt to the "
                                          "last answer or timeout: the {}th percentile",
                                          std::string(p).substr(1)),
                   .aggregate = Aggregate::over_run});
  for (const TimePart& part : kTimeParts)
    out.push_back({.name = fmt::format("time_ms.{}", part.name), .kind = MetricKind::duration, .unit = "ms",
                   .meaning = fmt::format("mean per successful logical operation: {}", part.meaning),
                   .aggregate = Aggregate::over_run});
  out.push_back({.name = "db_ops_per_op", .kind = MetricKind::ratio, .unit = "statements",
                 .meaning = "database statements per logical operation", .aggregate = Aggregate::over_run});
  out.push_back({.name = "redis_ops_per_op", .kind = MetricKind::ratio, .unit = "commands",
                 .meaning = "Redis commands per logical operation", .aggregate = Aggregate::over_run});
  return out;
}

bool is_family(const MetricInfo& m) { return m.name.find('<') != std::string::npos; }
std::string family_prefix(const MetricInfo& m) { return m.name.substr(0, m.name.find('<')); }  // "errors."
}  // namespace

namespace {
// The built-in metrics (those of every workload's checkers, then each workload kind's own, then
// the runner's), then the scenario's Lua workload's (declare_workload_metrics).
struct Registry {
  std::vector<MetricInfo> all;
  std::size_t builtin = 0;
  std::vector<std::string> workload;  // of each built-in metric: the workload kind that counts it; empty: every workload
  std::vector<const MetricInfo*> findings;
  // A Lua workload's own findings first: its check is what its scenario asks about, and the
  // story, the first finding and a shrink follow the first finding that fired.
  void refresh() {
    findings.clear();
    for (std::size_t i = builtin; i < all.size(); ++i)
      if (all[i].finding) findings.push_back(&all[i]);
    for (std::size_t i = 0; i < builtin; ++i)
      if (all[i].finding) findings.push_back(&all[i]);
  }
};

Registry& registry() {
  static Registry r = [] {
    Registry out;
    for (const auto* checker : models::checkers::registry())
      for (auto& m : checker->metrics()) out.all.push_back(std::move(m));
    out.workload.resize(out.all.size());
    for (const WorkloadKind* kind : workload_kinds())
      for (auto& m : kind->metrics()) {
        out.all.push_back(std::move(m));
        out.workload.emplace_back(kind->name());
      }
    for (auto& m : runner_metrics()) out.all.push_back(std::move(m));
    out.workload.resize(out.all.size());
    out.builtin = out.all.size();
    out.refresh();
    return out;
  }();
  return r;
}
}  // namespace

const std::vector<MetricInfo>& metrics() { return registry().all; }

namespace {
const MetricInfo* base_info(const std::string& name) {
  for (const auto& m : metrics()) {
    if (m.name == name) return &m;
    if (is_family(m) && name.size() > family_prefix(m).size() && name.starts_with(family_prefix(m))) return &m;
  }
  return nullptr;
}
}  // namespace

MetricForm metric_form(const std::string& name) {
  for (const char* form : {"total", "share", "per_million", "per_fault"}) {
    const std::string suffix = std::string(".") + form;
    if (name.size() <= suffix.size() || !name.ends_with(suffix)) continue;
    const std::string base = name.substr(0, name.size() - suffix.size());
    const MetricInfo* m = base_info(base);
    // Counts summed or maxed over trials have a total and a share; a rate needs a sum.
    if (m == nullptr || m->aggregate == Aggregate::over_run || m->aggregate == Aggregate::each || base == "operations") continue;
    const bool rate = std::string(form).starts_with("per_");
    if (rate && (m->aggregate != Aggregate::sum || m->kind != MetricKind::count || !m->per_operation)) continue;
    return {base, form};
  }
  return {name, ""};
}

const MetricInfo* metric_info(const std::string& name) { return base_info(metric_form(name).base); }

const std::vector<const MetricInfo*>& findings() { return registry().findings; }

bool workload_finding(const std::string& name) {
  const Registry& r = registry();
  const std::string base = metric_form(name).base;
  return std::any_of(r.all.begin() + static_cast<std::ptrdiff_t>(r.builtin), r.all.end(),
                     [&](const MetricInfo& m) { return m.finding && m.name == base; });
}

std::size_t finding_rank(const std::string& name) {
  const auto& f = registry().findings;
  const std::string base = metric_form(name).base;
  return static_cast<std::size_t>(std::find_if(f.begin(), f.end(), [&](const MetricInfo* m) { return m->name == base; }) - f.begin());
}

namespace {
// Set once a server's trials may run while scenarios load (freeze_workload_metrics).
std::atomic<bool> frozen{false};
}  // namespace

void freeze_workload_metrics() { frozen = true; }

void declare_workload_metrics(const std::string& file, const std::vector<models::workloads::MetricDecl>& declared) {
  Registry& r = registry();
  for (const auto& d : declared) {
    MetricInfo info{.name = d.name, .kind = MetricKind::count, .unit = d.unit, .meaning = d.meaning, .finding = d.finding};
    // A workload loaded before (another scenario of this process) may have declared it: its entry
    // takes the newest declaration, and stays where it is. The same declaration again writes nothing.
    const auto earlier = std::find_if(r.all.begin() + static_cast<std::ptrdiff_t>(r.builtin), r.all.end(),
                                      [&](const MetricInfo& m) { return m.name == d.name; });
    const bool same = earlier != r.all.end() && earlier->unit == info.unit && earlier->meaning == info.meaning &&
                      earlier->finding == info.finding;
    if (same) continue;
    if (frozen)
      throw InputError(fmt::format("{}: metrics: '{}' is declared anew since the server started (other trials read the metrics "
                                   "as they run); restart `locksim serve` to load it",
                                   file, d.name));
    if (earlier != r.all.end()) {
      *earlier = std::move(info);
      continue;
    }
    if (const MetricInfo* m = metric_info(d.name); m != nullptr)
      throw InputError(fmt::format("{}: metrics: '{}' is {}; give the workload's count a name of its own", file, d.name,
                                   m->name == d.name ? "a built-in metric" : "a form of the built-in metric " + m->name));
    r.all.push_back(std::move(info));
  }
  r.refresh();
}

bool fires(const std::string& name, double value) {
  const MetricInfo* m = metric_info(name);
  return m != nullptr && m->finding && value > m->fires_above;
}

std::string metrics_markdown() {
  std::string md =
      "# Metrics\n\n"
      "Every metric locksim measures, as results.json, `expect`, `--property` and `--metric` name it. This page is\n"
      "generated from the checkers' declarations (`locksim list --metrics`); a test fails when it disagrees with the\n"
      "code.\n\n"
      "- **count** metrics are summed over a run's trials; a report also gives the share of trials in which one fired.\n"
      "- A **finding** is something that should not happen: `explore --property NAME` searches for a trial where it\n"
      "  fires, and the report's violations plot shows it.\n"
      "- **max** metrics give the largest value of any trial; **over the run** ones are computed once over every\n"
      "  operation of the run.\n"
      "- A count summed over trials that counts what the operations did or met (the **per million** column) is also\n"
      "  a rate: `NAME.per_million` is its total per million operations (the clients' logical operations), with an\n"
      "  exact 95% Poisson interval; `NAME.per_fault` its total per injected fault (`injected_faults`: for a rare\n"
      "  fault, the harm each one does). A count of the run's own jobs, trials or setup has no rate, and a count of\n"
      "  the table's rows has none where the scenario seeds rows (`database.rows`, `database.legacy`): those rows\n"
      "  were not inserted by the operations. `NAME.total` is the total and `NAME.share` the share of trials in\n"
      "  which it fired. `expect` and `sweep --metric` take these forms (`\"duplicate_rows.per_million\": \"< 5\"`).\n"
      "- Strategies run on one seed run the same operations: each client its `operations`, and traffic's arrivals\n"
      "  (double submissions included) come from a stream of their own, apart from what the operations draw. What\n"
      "  differs is their attempts (a retry after a timeout or an error is an attempt, not an operation) and, for a\n"
      "  client that runs its operations one after another, when the later ones begin; a trial a budget stopped runs\n"
      "  fewer. The report's table gives the operations and how many of them failed.\n"
      "- A metric counted by a workload's own checkers names that **workload**; the others are counted for every\n"
      "  workload, where its trials have what they read (lock holds, clients, Redis). A workload written in Lua\n"
      "  declares its own (docs/writing-workloads.md).\n\n"
      "| metric | workload | kind | unit | finding | over trials | per million | meaning |\n"
      "|---|---|---|---|---|---|---|---|\n";
  const Registry& r = registry();
  for (std::size_t i = 0; i < r.builtin; ++i) {
    const MetricInfo& m = r.all[i];
    const char* aggregate = m.aggregate == Aggregate::sum   ? "sum"
                            : m.aggregate == Aggregate::max ? "max"
                            : m.aggregate == Aggregate::each ? "each trial"
                                                             : "over the run";
    const std::string finding = !m.finding ? "" : m.fires_above == 0 ? "above 0" : fmt::format("above {:g}", m.fires_above);
    const bool rate = m.aggregate == Aggregate::sum && m.kind == MetricKind::count && m.per_operation;
    md += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} |\n", m.name, r.workload[i].empty() ? "every" : r.workload[i],
                      models::checkers::to_string(m.kind), m.unit, finding, aggregate,
                      !rate ? "" : m.counts_seeded_rows ? "without seeded rows" : "yes", m.meaning);
  }
  return md;
}

std::optional<models::ErrorKind> error_kind(const std::string& name) {
  for (auto kind : {models::ErrorKind::timeout, models::ErrorKind::rejected, models::ErrorKind::duplicate_key,
                    models::ErrorKind::deadlock, models::ErrorKind::lock_wait_timeout, models::ErrorKind::autoinc_failed,
                    models::ErrorKind::lock_busy,
                    models::ErrorKind::dropped, models::ErrorKind::fenced, models::ErrorKind::internal,
                    models::ErrorKind::session_expired})
    if (error_name(kind) == name || error_name(kind, models::db::Engine::postgresql) == name) return kind;
  return std::nullopt;
}

}  // namespace locksim
