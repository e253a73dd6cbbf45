#include "app/sweep.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/metrics.hpp"
#include "app/runner.hpp"
#include "app/scenario.hpp"

namespace locksim {

using json = nlohmann::json;

namespace {

constexpr double kMaxPoints = 10'000;

// How many values from:to:step has, computed before any is made; 0 for a grid that is not
// finite or has more than kMaxPoints.
std::size_t point_count(double from, double to, double step) {
  if (!std::isfinite(from) || !std::isfinite(to) || !std::isfinite(step) || !(step > 0) || to < from) return 0;
  const double steps = std::floor((to - from) / step + 1e-9);
  if (!std::isfinite(steps) || steps + 1 > kMaxPoints) return 0;
  return static_cast<std::size_t>(steps) + 1;
}

}  // namespace

std::vector<double> Vary::values() const {
  if (!list.empty()) return list;
  std::vector<double> out;
  if (log_points > 0) {
    for (int i = 0; i < log_points; ++i) {
      const double x = from * std::pow(to / from, static_cast<double>(i) / (log_points - 1));
      out.push_back(i == log_points - 1 ? to : std::round(x * 1e6) / 1e6);  // 1000:30000:log6 gives 1978.0..., kept to 1e-6
    }
    return out;
  }
  const std::size_t n = point_count(from, to, step);
  for (std::size_t i = 0; i < n; ++i) out.push_back(from + static_cast<double>(i) * step);
  return out;
}

std::string sweep_folder_name(const std::vector<Vary>& varies, const std::string& metric) {
  std::string name = "sweep-";
  for (std::size_t i = 0; i < varies.size(); ++i) name += (i == 0 ? "" : "+") + varies[i].path + "_" + varies[i].spec;
  if (metric != "duplicate_rows") name += "-" + metric;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '+' && c != '.') c = '_';
  if (name.size() > 100) name = fmt::format("{}-{:016x}", name.substr(0, 80), fnv1a(name));
  return name;
}

Vary parse_vary(const std::string& text) {
  check_length("--vary", text);
  const auto fail = [&] {
    throw InputError(fmt::format("--vary {}: expected path=from:to:step (finite numbers, from <= to, step > 0), "
                                 "path=from:to:logN (0 < from <= to, N from 2 points) or path=a,b,c (finite numbers), at most "
                                 "{:g} points, for example clients.timeout_ms=100:1000:100 or redlock.ttl_ms=1000:30000:log6",
                                 quote_value(text), kMaxPoints));
  };
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) fail();
  Vary v{text.substr(0, eq)};
  v.spec = text.substr(eq + 1);
  const auto number_at = [](const std::string& t, double& out) {
    const auto [end, err] = std::from_chars(t.data(), t.data() + t.size(), out);
    return err == std::errc() && end == t.data() + t.size() && !t.empty() && std::isfinite(out);
  };
  if (v.spec.find(':') == std::string::npos) {  // a list
    std::stringstream in(v.spec);
    for (std::string one; std::getline(in, one, ',');) {
      double x = 0;
      if (!number_at(one, x) || static_cast<double>(v.list.size()) >= kMaxPoints) fail();
      v.list.push_back(x);
    }
    if (v.list.empty() || v.spec.back() == ',') fail();
    return v;
  }
  std::vector<std::string> parts;
  std::stringstream in(v.spec);
  for (std::string one; std::getline(in, one, ':');) parts.push_back(one);
  if (parts.size() != 3 || !number_at(parts[0], v.from) || !number_at(parts[1], v.to)) fail();
  if (parts[2].starts_with("log")) {
    double n = 0;
    if (!number_at(parts[2].substr(3), n) || n < 2 || n > kMaxPoints || n != std::floor(n) || !(v.from > 0) || v.to < v.from) fail();
    v.log_points = static_cast<int>(n);
    return v;
  }
  if (!number_at(parts[2], v.step) || point_count(v.from, v.to, v.step) == 0) fail();
  return v;
}

namespace {

std::string number(double v) { return fmt::format("{:.15g}", v); }

// A count read as its share of trials (the default), rather than a figure, a total or a rate.
bool is_share_metric(const std::string& metric) {
  const MetricForm f = metric_form(metric);
  if (f.form == "total" || f.form == "per_million") return false;
  return !(metric.starts_with("latency_ms.") || metric == "db_ops_per_op" || metric == "redis_ops_per_op");
}

reports::SweepPoint measure(const reports::RunResults& r, const std::vector<double>& at, const std::string& metric) {
  const MetricForm form = metric_form(metric);
  reports::SweepPoint p{at, {}};
  for (const auto& s : r.strategies) {
    reports::SweepPoint::Value v{s.name};
    const reports::Metric none{};
    auto c = s.counts.find(form.base);
    const bool counted = c != s.counts.end() || (!form.form.empty() || is_share_metric(metric));
    const reports::Metric& m = c != s.counts.end() ? c->second : none;  // a count that never fired: 0
    if (auto f = s.figures.find(metric); f != s.figures.end()) {
      v.value = v.low = v.high = f->second;
    } else if (form.form == "total") {
      v.value = v.low = v.high = m.total;
    } else if (form.form == "per_million") {
      const reports::Share rate = m.per_million ? *m.per_million : reports::per_million(0, s.operations);
      v.value = rate.value, v.low = rate.low, v.high = rate.high;
    } else if (counted) {
      const reports::Share share = c != s.counts.end() ? m.share : reports::wilson(0, s.trials);
      v.value = share.value, v.low = share.low, v.high = share.high;
    }
    // Every trial came to the same (a scenario with nothing left to chance): an interval would
    // claim an uncertainty the run does not have.
    if (s.one_outcome && s.trials > 0) v.low = v.high = v.value;
    p.values.push_back(v);
  }
  return p;
}

json point_json(const reports::SweepPoint& p) {
  json values = json::array();
  for (const auto& v : p.values) values.push_back({{"strategy", v.strategy}, {"value", v.value}, {"low", v.low}, {"high", v.high}});
  return {{"at", p.at}, {"values", values}};
}

reports::SweepPoint point_from(const json& j) {
  reports::SweepPoint p{j.at("at").get<std::vector<double>>(), {}};
  for (const auto& v : j.at("values"))
    p.values.push_back({v.at("strategy").get<std::string>(), v.at("value").get<double>(), v.at("low").get<double>(),
                        v.at("high").get<double>()});
  return p;
}

}  // namespace

reports::SweepResults run_sweep(const SweepOptions& o, const std::function<void(std::size_t, std::size_t)>& progress) {
  if (o.varies.empty() || o.varies.size() > 2) throw InputError("sweep: expected one or two --vary path=from:to:step");
  if (o.varies.size() == 2 && o.varies[0].path == o.varies[1].path)
    throw InputError(fmt::format("--vary {}: expected two different paths, got the same twice (one --vary lists its values: {}=a,b,c)",
                                 o.varies[0].path, o.varies[0].path));
  if (!is_metric(o.metric))
    throw InputError("--metric " + quote_value(o.metric) +
                     ": expected a metric name (duplicate_rows, duplicate_rows.per_million, errors.1062, latency_ms.p99, ...)");
  double points = 1;
  for (const auto& v : o.varies) points *= static_cast<double>(v.values().size());
  if (points > kMaxPoints) throw InputError(fmt::format("sweep: expected at most {:g} points in all, got {:g}", kMaxPoints, points));
  const std::string path = scenario_path(o.scenario);
  Scenario base = load_scenario(path, o.sets, o.strategies);

  // The grid, first path slowest.
  std::vector<std::vector<double>> grid{{}};
  for (const auto& v : o.varies) {
    std::vector<std::vector<double>> next;
    for (const auto& g : grid)
      for (double x : v.values()) {
        next.push_back(g);
        next.back().push_back(x);
      }
    grid = std::move(next);
  }
  const auto sets_at = [&](const std::vector<double>& at) {
    std::vector<std::string> sets = o.sets;
    for (std::size_t i = 0; i < at.size(); ++i) sets.push_back(o.varies[i].path + "=" + number(at[i]));
    return sets;
  };

  // What the saved points were made by: a resumed sweep must be the same sweep.
  json definition = {{"scenario_hash", fmt::format("{:016x}", base.hash)}, {"metric", o.metric},
                     {"trials", o.trials ? *o.trials : base.trials}, {"seed", o.seed ? *o.seed : base.seed}};
  for (const auto& v : o.varies) definition["vary"].push_back({v.path, v.values()});
  for (const auto& c : base.strategies) definition["strategies"].push_back(c.shown());

  // Resume from the saved points of this same sweep: those in progress, else those of the
  // last finished one; the points of another sweep are refused.
  std::map<std::vector<double>, reports::SweepPoint> done;
  if (const auto saved = reports::saved_sweep_points(o.folder); o.resume && !saved.empty()) {
    json doc;
    for (const auto& file : saved) {
      std::ifstream in(file);
      doc = json::parse(in, nullptr, false);
      if (!doc.is_discarded() && doc.contains("definition") && doc.at("definition") == definition) break;
      doc = nullptr;
    }
    if (doc.is_null())
      throw InputError(fmt::format("{}: made by a different sweep (scenario, --vary, --metric, --trials, --seed or "
                                   "strategies differ); run it without --resume to start over",
                                   fmt::join(saved, ", ")));
    for (const auto& p : doc.at("points")) {
      reports::SweepPoint point = point_from(p);
      done.emplace(point.at, point);
    }
  }
  const auto saved_text = [&] {
    json doc = {{"definition", definition}, {"points", json::array()}};
    for (const auto& [key, p] : done) doc["points"].push_back(point_json(p));
    return doc.dump(1) + "\n";
  };

  reports::SweepResults results{base.name, {}, o.metric, is_share_metric(o.metric), {}, {}};
  for (const auto& v : o.varies) results.varied.push_back(v.path);
  const auto started = std::chrono::steady_clock::now();
  // The points not saved yet, run from one queue: no point waits for the last trials of the
  // one before. Each is saved as soon as its last trial is folded, so an interrupted sweep
  // resumes from there. Every point's scenario is read before any runs, so a value a key
  // refuses at one point (a fraction for a count) is one line and nothing is written.
  std::vector<std::vector<double>> to_run;
  std::vector<Scenario> scenarios;
  for (const auto& at : grid)
    if (!done.contains(at)) {
      to_run.push_back(at);
      scenarios.push_back(load_scenario(path, sets_at(at), o.strategies));
      if (o.trials) scenarios.back().trials = *o.trials;
      if (o.seed) scenarios.back().seed = *o.seed;
    }
  std::vector<const Scenario*> queue;
  for (const Scenario& s : scenarios) queue.push_back(&s);
  std::size_t finished = grid.size() - to_run.size();
  const std::vector<reports::RunResults> runs =
      run_scenarios(queue, {.jobs = o.jobs, .stop = o.stop, .interrupt_at = o.interrupt_at}, [&](std::size_t k, const reports::RunResults& run) {
        done.emplace(to_run[k], measure(run, to_run[k], o.metric));
        reports::save_sweep_progress(o.folder, saved_text());
        if (progress) progress(++finished, grid.size());
      });
  for (const auto& run : runs)
    if (!run.stopped.empty()) {  // fewer trials than the other points: not kept, so --resume runs it whole
      results.stopped = run.stopped;
      results.stopped_after_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      break;
    }
  for (const auto& at : grid) {
    const auto it = done.find(at);
    if (it == done.end()) results.not_run.push_back(at);
    else results.points.push_back(it->second);
  }
  results.points_json = saved_text();
  return results;
}

}  // namespace locksim
