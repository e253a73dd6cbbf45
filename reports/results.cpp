#include "reports/results.hpp"

#include <boost/math/distributions/chi_squared.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace locksim::reports {

Share wilson(std::uint64_t hits, std::uint64_t trials) {
  if (trials == 0) return {};
  const double z = 1.959963984540054, n = static_cast<double>(trials), p = static_cast<double>(hits) / n;
  const double denominator = 1 + z * z / n;
  const double centre = (p + z * z / (2 * n)) / denominator;
  const double half = z * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator;
  return {p, std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

namespace {

// The chi-squared distribution's quantile at `p` (with its normal quantile `z`) for `nu` degrees
// of freedom: exactly up to a million or so, and past that by Wilson and Hilferty's cube, which
// is then exact to many digits where Boost's series would give up (a count of 1e11).
double chi_squared_quantile(double nu, double p, double z) {
  if (nu <= 2e6) return boost::math::quantile(boost::math::chi_squared(nu), p);
  const double c = 2 / (9 * nu);
  return nu * std::pow(1 - c + z * std::sqrt(c), 3);
}

}  // namespace

Share per_unit(double count, double exposure) {
  if (!(exposure > 0) || !std::isfinite(count)) return {};
  const double k = std::max(0.0, std::round(count));
  const double low = k == 0 ? 0 : chi_squared_quantile(2 * k, 0.025, -1.959963984540054) / 2;
  const double high = chi_squared_quantile(2 * k + 2, 0.975, 1.959963984540054) / 2;
  return {count / exposure, low / exposure, high / exposure};
}

Share per_million(double count, std::uint64_t operations) { return per_unit(count, static_cast<double>(operations) / 1e6); }

std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string wait_words(const LockWait& w) {
  // "X on t.PRIMARY (2)" on MariaDB; "FOR UPDATE on t row (2)" and "ShareLock on transaction 7" on PostgreSQL.
  const std::string place = w.table.empty() ? "" : w.index.empty() ? w.table + " " : w.table + "." + w.index + " ";
  return fmt::format("{} on {}{}, behind {}, {:.1f} ms", w.mode, place, w.entry,
                     w.behind.empty() ? std::string("nobody") : fmt::format("{}", fmt::join(w.behind, ", ")), w.waited_ms);
}

std::string held_words(const HeldLock& l) {
  const std::string place = l.table.empty() ? "" : l.index.empty() ? l.table + " " : l.table + "." + l.index + " ";
  return fmt::format("{} on {}{}", l.mode, place, l.entry);
}

std::string to_text(const Cell& cell) {
  if (std::holds_alternative<std::nullptr_t>(cell)) return "NULL";
  if (const auto* n = std::get_if<std::int64_t>(&cell)) return std::to_string(*n);
  return "'" + std::get<std::string>(cell) + "'";
}

const MetricNote* RunResults::note(const std::string& name) const {
  for (const auto& m : metrics) {
    if (m.name == name) return &m;
    const auto family = m.name.find('<');  // "errors.<kind>" names every errors.*
    if (family != std::string::npos && name.size() > family && name.starts_with(m.name.substr(0, family))) return &m;
  }
  return nullptr;
}

bool RunResults::value(const std::string& strategy, const std::string& metric, double& out) const {
  for (const auto& s : strategies) {
    if (s.name != strategy) continue;
    if (auto c = s.counts.find(metric); c != s.counts.end()) {
      out = c->second.total;
      return true;
    }
    // A count read another way: duplicate_rows.per_million, .per_fault, .share, .total.
    for (const char* form : {".total", ".share", ".per_million", ".per_fault"}) {
      if (!metric.ends_with(form) || metric.size() <= std::strlen(form)) continue;
      const std::string base = metric.substr(0, metric.size() - std::strlen(form));
      auto c = s.counts.find(base);
      if (c == s.counts.end() && !base.starts_with("errors.")) continue;
      const Metric none{};
      const Metric& m = c == s.counts.end() ? none : c->second;  // an error kind that never happened
      const std::string f = form;
      out = f == ".total"         ? m.total
            : f == ".share"       ? m.share.value
            : f == ".per_million" ? (m.per_million ? m.per_million->value : 0)
                                  : (m.per_fault ? m.per_fault->value : 0);
      return true;
    }
    if (auto f = s.figures.find(metric); f != s.figures.end()) {
      out = f->second;
      return true;
    }
    if (auto e = s.each.find(metric); e != s.each.end()) {
      out = e->second.first;
      return true;
    }
    if (metric.starts_with("errors.")) {  // an error kind that never happened
      out = 0;
      return true;
    }
  }
  return false;
}

namespace {
std::string count_cell(const StrategyResult& s, const std::string& name) {
  auto it = s.counts.find(name);
  if (it == s.counts.end()) return "-";
  return fmt::format("{:g}", it->second.total);
}
// A share as a percentage: two significant digits below 1%, so one trial in 250 is 0.4%, not 0%.
std::string percent(double share) {
  const double p = 100 * share;
  if (p < 1e-9) return "0";  // a bound computed a hair above zero
  if (p >= 1) return fmt::format("{:.0f}", p);
  return fmt::format("{:.2g}", p);
}
std::string share_cell(const StrategyResult& s, const std::string& name) {
  auto it = s.counts.find(name);
  if (it == s.counts.end()) return "-";
  const Share& sh = it->second.share;
  if (s.one_outcome && s.trials > 1) return fmt::format("{}%, 1 outcome", percent(sh.value));  // no interval to speak of
  return fmt::format("{}% [{}-{}]", percent(sh.value), percent(sh.low), percent(sh.high));
}
// A rate per million operations: three significant digits, and its interval.
std::string rate(double v) { return v == 0 ? "0" : v >= 1000 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v); }
std::string per_million_cell(const StrategyResult& s, const std::string& name) {
  auto it = s.counts.find(name);
  if (it == s.counts.end() || !it->second.per_million) return "-";
  const Share& r = *it->second.per_million;
  if (s.one_outcome && s.trials > 1) return rate(r.value);
  return fmt::format("{} [{}-{}]", rate(r.value), rate(r.low), rate(r.high));
}
std::string errors_cell(const StrategyResult& s) {
  std::string out;
  for (const auto& [name, m] : s.counts)
    if (name.starts_with("errors.") && m.total > 0) out += fmt::format("{}{} {:g}", out.empty() ? "" : ", ", name.substr(7), m.total);
  return out.empty() ? "none" : out;
}
std::string figure(const StrategyResult& s, const std::string& name, const char* format) {
  auto it = s.figures.find(name);
  return it == s.figures.end() ? "-" : fmt::format(fmt::runtime(format), it->second);
}
}  // namespace

// The metrics the table has columns for; the others are listed under it where they fired.
bool in_columns(const std::string& name, const std::string& headline) {
  return name == headline || name == "duplicated_keys" || name == "dropped_requests" || name == "operations" ||
         name == "failed_operations" || name.starts_with("errors.");  // the errors column sums to failed_operations
}

std::string table(const RunResults& r) {
  std::string out;
  if (r.stopped == "time") {
    std::string done;
    for (const auto& s : r.strategies) done += fmt::format("{}{} {}", done.empty() ? "" : ", ", s.name, s.trials);
    out += fmt::format("stopped after {:.1f} s by --time: trials done per strategy (of {} asked): {}\n\n", r.stopped_after_s,
                       r.trials, done);
  }
  std::size_t width = 24;  // the longest name sets the first column (a script's "name.lua")
  for (const auto& s : r.strategies) width = std::max(width, s.name.size());
  // A Lua workload's table has its first finding where account-bind's has duplicate rows.
  const bool dups = r.headline == "duplicate_rows";
  const std::string headline = dups ? "dup rows" : r.headline.size() > 16 ? r.headline.substr(0, 15) + "~" : r.headline;
  const std::size_t headline_width = std::max<std::size_t>(9, headline.size());
  out += fmt::format("{:<{}} {:>8} {:>7} {:>{}} {:>20} {:>16} {:>8} {:>8} {:>9} {:>9} {:>6} {:>6}  {}\n", "strategy", width, "ops",
                     "failed", headline, headline_width, "per M ops [95%]", dups ? "trials with dups" : "trials with any", "dup keys",
                     "dropped", "p50 ms", "p99 ms", "db/op", "redis", "errors (ops)");
  for (const auto& s : r.strategies) {
    out += fmt::format("{:<{}} {:>8} {:>7} {:>{}} {:>20} {:>16} {:>8} {:>8} {:>9} {:>9} {:>6} {:>6}  {}\n", s.name, width, s.operations,
                       count_cell(s, "failed_operations"), count_cell(s, r.headline), headline_width, per_million_cell(s, r.headline), share_cell(s, r.headline),
                       count_cell(s, "duplicated_keys"), count_cell(s, "dropped_requests"),
                       figure(s, "latency_ms.p50", "{:.1f}"), figure(s, "latency_ms.p99", "{:.1f}"),
                       figure(s, "db_ops_per_op", "{:.2f}"), figure(s, "redis_ops_per_op", "{:.2f}"), errors_cell(s));
  }
  // The other checkers, where they fired: total, and the share of trials with its interval.
  std::string findings;
  for (const auto& s : r.strategies) {
    std::string line;
    for (const auto& note : r.metrics) {
      const std::string& name = note.name;
      if (!note.per_trial || note.each_trial || in_columns(name, r.headline)) continue;
      auto it = s.counts.find(name);
      if (it == s.counts.end() || it->second.fired == 0) continue;
      // A duration summed over trials means nothing: its mean a trial does.
      const bool duration = note.unit == "ms";
      line += fmt::format("{}{} {}{} in {}", line.empty() ? "" : ", ", name,
                          duration ? fmt::format("{:.6g} ms a trial", it->second.mean) : fmt::format("{:.6g}", it->second.total),
                          it->second.per_million ? " (" + rate(it->second.per_million->value) + " per M ops" +
                                                       (it->second.per_fault ? ", " + rate(it->second.per_fault->value) + " per fault" : "") + ")"
                                                 : "",
                          share_cell(s, name));
    }
    if (!line.empty()) findings += fmt::format("  {}: {}\n", s.name, line);
  }
  if (!findings.empty()) out += "\nother checkers (total, in share of trials [95% interval]):\n" + findings;
  std::string alike;
  for (const auto& s : r.strategies)
    if (s.one_outcome && s.trials > 1) alike += (alike.empty() ? "" : ", ") + s.name;
  if (!alike.empty())
    out += fmt::format("\nevery trial ran alike (1 distinct outcome in {} trials, no interval to give): {}\n", r.trials, alike);
  return out;
}

namespace {
// INSERT, REPLACE, UPDATE, DELETE: its result is the rows it affected.
bool writes(const std::string& sql) {
  const auto first = sql.find_first_not_of(" \t\n");
  if (first == std::string::npos) return false;
  std::string word;
  for (std::size_t i = first; i < sql.size() && std::isalpha(static_cast<unsigned char>(sql[i])); ++i)
    word += static_cast<char>(std::toupper(static_cast<unsigned char>(sql[i])));
  return word == "INSERT" || word == "REPLACE" || word == "UPDATE" || word == "DELETE";
}

std::string step_result(const StepResult& st) {
  if (st.issued_ms < 0) return "not issued";
  if (st.finished_ms < 0) return "still waiting at the end";
  std::string out;
  if (st.error != 0) {
    out = fmt::format("{} {}", st.code.empty() ? std::to_string(st.error) : st.code, st.message);
    if (!st.undone.empty()) out += fmt::format("; rolled back the {} ({} row change{})", st.undone, st.undone_rows, st.undone_rows == 1 ? "" : "s");
  } else if (!st.columns.empty()) {
    out = fmt::format("{} row{}", st.rows.size(), st.rows.size() == 1 ? "" : "s");
    for (const auto& row : st.rows) {
      std::string cells;
      for (const auto& c : row) cells += (cells.empty() ? "" : ", ") + to_text(c);
      out += " (" + cells + ")";
    }
  } else if (writes(st.sql)) {
    out = fmt::format("{} affected", st.affected);
    if (st.insert_id != 0 && st.affected != 0) out += fmt::format(", id {}", st.insert_id);
    if (st.warnings != 0) out += fmt::format(", {} warning{}", st.warnings, st.warnings == 1 ? "" : "s");
  } else {
    out = "ok";
  }
  if (!st.waited_for.empty()) {
    std::string who;
    for (const auto& w : st.waited_for) who += (who.empty() ? "" : ", ") + w;
    // A wait that ended in the script's own time (the lock freed by a later step, issued a settle
    // time after the one before) says so; a lock wait timeout's is the server's.
    out += st.error == 1205 || st.code == "55P03" ? fmt::format("; waited {:.1f} ms for {}", st.waited_ms, who)
                                                  : fmt::format("; waited for {} until a later step freed its lock ({:.1f} ms: the "
                                                                "script's pace, not a time the server chose)",
                                                                who, st.waited_ms);
  }
  return out;
}
}  // namespace

std::string steps_table(const RunResults& r) {
  std::string out;
  for (const auto& s : r.strategies) {
    if (s.steps.empty()) continue;
    out += fmt::format("steps of {} (seed {}):\n", s.name, r.seed);
    std::size_t width = 9;
    for (const auto& st : s.steps) width = std::max(width, std::min<std::size_t>(st.sql.size(), 60));
    out += fmt::format("  {:>3} {:>9} {:>9}  {:<8} {:<{}}  {}\n", "#", "issued ms", "ended ms", "session", "statement", width, "result");
    for (const auto& st : s.steps) {
      const std::string sql = st.sql.size() > 60 ? st.sql.substr(0, 57) + "..." : st.sql;
      out += fmt::format("  {:>3} {:>9} {:>9}  {:<8} {:<{}}  {}\n", st.step,
                         st.issued_ms < 0 ? "-" : fmt::format("{:.1f}", st.issued_ms),
                         st.finished_ms < 0 ? "-" : fmt::format("{:.1f}", st.finished_ms), st.session, sql, width, step_result(st));
      for (const auto& w : st.waits) out += fmt::format("  {:>3} {:>9} {:>9}  {:<8} {:<{}}    lock wait: {}\n", "", "", "", "", "", width, wait_words(w));
      if (!st.deadlock_cycle.empty()) {
        std::string cycle;
        for (const auto& who : st.deadlock_cycle) cycle += who + " -> ";
        out += fmt::format("  {:>3} {:>9} {:>9}  {:<8} {:<{}}    deadlock: {}{} (victim {})\n", "", "", "", "", "", width, cycle,
                           st.deadlock_cycle.front(), st.deadlock_cycle.front());
      }
    }
    std::string varied;
    for (const auto& st : s.steps) {
      if (st.outcomes.size() < 2) continue;
      std::string counts;
      for (const auto& [outcome, n] : st.outcomes) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", outcome, n);
      varied += fmt::format("    step {}: {}\n", st.step, counts);
    }
    if (!varied.empty()) out += fmt::format("  outcomes that differ over the {} trials:\n{}", s.trials, varied);
    for (const auto& t : s.tables) {
      std::string cols;
      for (const auto& c : t.columns) cols += (cols.empty() ? "" : ", ") + c;
      out += fmt::format("  table {} at the end ({}): {} row{}\n", t.name, cols, t.row_count, t.row_count == 1 ? "" : "s");
      for (std::size_t i = 0; i < t.rows.size() && i < kTableRowsShown; ++i) {
        std::string cells;
        for (const auto& c : t.rows[i]) cells += (cells.empty() ? "" : ", ") + to_text(c);
        out += "    (" + cells + ")\n";
      }
      if (t.row_count > kTableRowsShown)
        out += fmt::format("    ... and {} more rows (checksum {}; results.json has the first {})\n", t.row_count - kTableRowsShown,
                           t.checksum, std::min<std::uint64_t>(t.row_count, kTableRowsKept));
    }
  }
  return out;
}

double mean_per_trial(const StrategyResult& strategy, const std::string& metric) {
  auto it = strategy.counts.find(metric);
  return it == strategy.counts.end() ? 0.0 : it->second.mean;
}

std::string phases_table(const RunResults& r) {
  std::string out;
  for (const auto& s : r.strategies) {
    if (s.phases.empty()) continue;
    const auto mean = [&](const std::string& name) { return mean_per_trial(s, name); };
    const auto worst = [&](const std::string& name) {
      auto it = s.counts.find(name);
      return it == s.counts.end() ? std::string("-") : fmt::format("{:.0f}", it->second.total);
    };
    out += fmt::format("rollout {} (means per trial over {} trials):\n", s.name, s.trials);
    out += fmt::format("  {:>5} {:>13} {:>12} {:>12} {:>9} {:>8} {:>11}  {}\n", "phase", "from-to s", "dups created",
                       "left at end", "ops", "failed", "worst p99", "steps as it begins");
    out += fmt::format("  {:>5} {:>13} {:>12} {:>12} {:>9} {:>8} {:>11}\n", "start", "", "", fmt::format("{:.1f}", mean("left_after_phase.0")),
                       "", "", "");
    for (std::size_t k = 0; k < s.phases.size(); ++k) {
      const auto& p = s.phases[k];
      const std::string n = std::to_string(k + 1);
      std::string steps;
      for (const auto& step : p.steps) steps += (steps.empty() ? "" : "; ") + step;
      out += fmt::format("  {:>5} {:>13} {:>12.1f} {:>12.1f} {:>9.1f} {:>8.1f} {:>11}  {}\n", n,
                         fmt::format("{:g}-{:g}", p.from_s, p.to_s), mean("created_in_phase." + n), mean("left_after_phase." + n),
                         mean("operations_in_phase." + n), mean("failed_in_phase." + n), worst("p99_ms_in_phase." + n),
                         steps.empty() ? "-" : steps);
    }
    const auto built = s.counts.find("unique_index");
    const double indexed = built == s.counts.end() ? 0 : built->second.total;
    out += fmt::format("  unique index at the end in {:.0f} of {} trials; clean and indexed after {:.1f} s on average (the plan's "
                       "end counted where not)\n",
                       indexed, s.trials, mean("clean_and_indexed_ms") / 1000);
    out += fmt::format("  DDL: {:.1f} statements, {:.1f} failed; cleanup job: {:.1f} runs, {:.1f} rows deleted (means per trial)\n",
                       mean("ddl_statements"), mean("ddl_failed"), mean("cleanup_runs"), mean("cleanup_deleted_rows"));
  }
  return out;
}

std::string to_json(const RunResults& r) {
  using json = nlohmann::ordered_json;
  json doc;
  doc["scenario"] = r.scenario;
  doc["file"] = r.file;
  doc["description"] = r.description;
  doc["source"] = r.source;
  doc["lesson"] = r.lesson;
  doc["scenario_hash"] = fmt::format("{:016x}", r.scenario_hash);
  doc["seed"] = r.seed;
  doc["trials"] = r.trials;
  if (!r.stopped.empty()) {  // each strategy's "trials" says how many ran
    doc["stopped"] = r.stopped;
    doc["timing"] = {{"stopped_after_s", r.stopped_after_s}};
  }
  doc["configuration"] = json::parse(r.configuration);
  json strategies = json::array();
  for (const auto& s : r.strategies) {
    json j;
    j["name"] = s.name;
    j["description"] = s.description;
    j["family"] = s.family;
    j["params"] = s.params;
    j["trials"] = s.trials;
    j["operations"] = s.operations;
    j["one_outcome"] = s.one_outcome;
    json metrics = json::object();
    for (const auto& [name, m] : s.counts)
      metrics[name] = {{"total", m.total},
                       {"mean_per_trial", m.mean},
                       {"trials_fired", m.fired},
                       {"share_of_trials", {{"value", m.share.value}, {"low95", m.share.low}, {"high95", m.share.high}}}};
    for (const auto& [name, m] : s.counts)
      if (m.per_million)
        metrics[name]["per_million_operations"] = {
            {"value", m.per_million->value}, {"low95", m.per_million->low}, {"high95", m.per_million->high}};
    for (const auto& [name, m] : s.counts)
      if (m.per_fault)
        metrics[name]["per_injected_fault"] = {{"value", m.per_fault->value}, {"low95", m.per_fault->low}, {"high95", m.per_fault->high}};
    for (const auto& [name, v] : s.figures) metrics[name] = v;
    for (const auto& [name, v] : s.each) metrics[name] = {{"first_trial", v.first}, {"min", v.min}, {"max", v.max}};
    j["metrics"] = metrics;
    const auto cell = [](const Cell& c) { return std::visit([](const auto& v) { return json(v); }, c); };
    const auto rows = [&](const std::vector<std::vector<Cell>>& list) {
      json out = json::array();
      for (const auto& row : list) {
        json one = json::array();
        for (const auto& c : row) one.push_back(cell(c));
        out.push_back(std::move(one));
      }
      return out;
    };
    if (!s.phases.empty()) {
      json phases = json::array();
      for (const auto& p : s.phases) phases.push_back({{"from_s", p.from_s}, {"to_s", p.to_s}, {"steps", p.steps}});
      j["phases"] = phases;
    }
    if (!s.steps.empty()) {
      json steps = json::array();
      for (const auto& st : s.steps) {
        json one;
        one["step"] = st.step;
        one["session"] = st.session;
        one["sql"] = st.sql;
        one["issued_ms"] = st.issued_ms < 0 ? json(nullptr) : json(st.issued_ms);
        one["finished_ms"] = st.finished_ms < 0 ? json(nullptr) : json(st.finished_ms);
        one["applied_ms"] = st.applied_ms < 0 ? json(nullptr) : json(st.applied_ms);
        one["columns"] = st.columns;
        one["rows"] = rows(st.rows);
        one["affected"] = st.affected;
        one["insert_id"] = st.insert_id;
        one["warnings"] = st.warnings;
        one["error"] = st.error == 0 ? json(nullptr) : json(st.error);
        one["code"] = st.code.empty() ? json(nullptr) : json(st.code);
        one["message"] = st.message;
        one["waited"] = !st.waited_for.empty();
        one["waited_for"] = st.waited_for;
        one["waited_ms"] = st.waited_ms;
        std::vector<std::string> waits;
        for (const auto& w : st.waits) waits.push_back(wait_words(w));
        one["waits"] = waits;
        one["deadlock_cycle"] = st.deadlock_cycle;
        one["undone"] = st.undone.empty() ? json(nullptr) : json(st.undone);
        one["undone_rows"] = st.undone_rows;
        one["outcomes"] = st.outcomes;
        steps.push_back(std::move(one));
      }
      j["steps"] = steps;
      json tables = json::object();
      for (const auto& t : s.tables)
        tables[t.name] = {{"columns", t.columns}, {"rows", rows(t.rows)}, {"row_count", t.row_count}, {"checksum", t.checksum}};
      j["tables"] = tables;
    }
    const auto histogram = [](const Histogram& h) {
      json buckets = json::array();
      for (const auto& [lower, n] : h.buckets()) buckets.push_back({lower, n});
      return json{{"bucket_growth", Histogram::kGrowth}, {"buckets_ms_count", buckets}};
    };
    j["latency_histogram"] = histogram(s.latency);  // successful operations
    j["failed_latency_histogram"] = histogram(s.failed_latency);
    j["examples"] = s.examples;
    j["first_trace_hash"] = fmt::format("{:016x}", s.first_trace_hash);
    j["trace_hash"] = fmt::format("{:016x}", s.trace_hash);
    j["timing"] = {{"wall_s", s.wall_s}};
    strategies.push_back(j);
  }
  doc["strategies"] = strategies;
  json expectations = json::array();
  for (const auto& e : r.expectations) {
    if (e.skipped)
      expectations.push_back({{"expect", e.text}, {"skipped", "its strategy was not run"}});
    else
      expectations.push_back(
          {{"expect", e.text}, {"measured", e.measured_at_all ? json(e.measured) : json(nullptr)}, {"holds", e.holds}});
  }
  doc["expectations"] = expectations;
  // A script's messages and rows may hold any bytes: what is not UTF-8 is shown as U+FFFD.
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

void write_atomically(const std::string& path, const std::string& text) {
  const std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  // A name no other writer uses, in the target's folder (a rename does not cross file systems).
  static std::atomic<unsigned> counter{0};
  const std::string temporary = fmt::format("{}.tmp.{}.{}", path, ::getpid(), ++counter);
  try {
    {
      std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
      out << text;
      out.close();
      if (!out) throw std::runtime_error("cannot write " + temporary);
    }
    std::filesystem::rename(temporary, target);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw;
  }
}

}  // namespace locksim::reports
