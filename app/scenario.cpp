#include "app/scenario.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "app/metrics.hpp"

namespace locksim {

using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

// Reads one JSON object, knowing where it is, so every complaint names the file and path.
class Reader {
 public:
  Reader(const json& j, const std::string& file, std::string path) : j_(j), file_(file), path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& expected, const std::string& key = "") const {
    throw InputError(fmt::format("{}: {}: expected {}", shown(file_), shown(where(key)), expected));
  }
  std::string where(const std::string& key = "") const {
    const std::string p = key.empty() ? path_ : path_ + "/" + key;
    return p.empty() ? "/" : p;
  }

  /// Fails on any key not in `known`.
  void only(std::initializer_list<const char*> known) const {
    if (!j_.is_object()) fail("an object");
    for (const auto& [key, value] : j_.items()) {
      if (std::none_of(known.begin(), known.end(), [&](const char* k) { return key == k; })) {
        std::string list;
        for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        fail("one of the keys " + list + " (unknown key)", key);
      }
    }
  }
  bool has(const std::string& key) const { return j_.contains(key); }
  Reader child(const std::string& key) const { return Reader(j_.at(key), file_, where(key)); }
  const json& raw() const { return j_; }
  const std::string& file() const { return file_; }

  std::string string(const std::string& key, std::string fallback) const {
    if (!has(key)) return fallback;
    if (!j_.at(key).is_string()) fail("a string", key);
    return j_.at(key).get<std::string>();
  }
  std::string choice(const std::string& key, std::string fallback, std::initializer_list<const char*> allowed) const {
    std::string v = string(key, fallback);
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return v == a; })) {
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      fail("one of " + list + ", got " + quote_value(v), key);
    }
    return v;
  }
  double number(const std::string& key, double fallback, double min, double max) const {
    if (!has(key)) return fallback;
    if (!j_.at(key).is_number()) fail("a number", key);
    const double v = j_.at(key).get<double>();
    if (!(v >= min && v <= max)) fail(fmt::format("a number from {} to {}, got {}", min, max, v), key);
    return v;
  }
  std::int64_t integer(const std::string& key, std::int64_t fallback, std::int64_t min, std::int64_t max) const {
    if (!has(key)) return fallback;
    if (!j_.at(key).is_number_integer()) fail("an integer", key);
    const auto v = j_.at(key).get<std::int64_t>();
    if (v < min || v > max) fail(fmt::format("an integer from {} to {}, got {}", min, max, v), key);
    return v;
  }
  sim::Duration millis(const std::string& key, sim::Duration fallback, double min_ms = 0, double max_ms = limits::max_ms) const {
    if (!has(key)) return fallback;
    return from_ms(number(key, 0, min_ms, max_ms));
  }
  /// Callers check the range first: every duration is within +-limits::max_ms.
  static sim::Duration from_ms(double ms) {
    return sim::Duration{static_cast<std::int64_t>(std::llround(ms * 1e6))};
  }
  /// A duration in ms from a JSON value, within [0, limits::max_ms].
  static bool is_ms(const json& v) { return v.is_number() && v.get<double>() >= 0 && v.get<double>() <= limits::max_ms; }

  /// {"fixed_ms": 5} | {"uniform_ms": [1, 5]} | {"exponential_ms": 10} | {"normal_ms": [mean, stddev]}
  /// | {"lognormal_ms": {"median": 40, "sigma": 0.6}} | {"pareto_ms": {"scale": 10, "shape": 1.5}}
  /// | {"one_of_ms": [0.1, 5]}: each draw one of the values, equally likely; `explore --mode
  /// dfs` tries each (the first is the default it deviates from).
  sim::Distribution distribution(const std::string& key, sim::Distribution fallback) const {
    if (!has(key)) return fallback;
    const Reader d = child(key);
    d.only({"fixed_ms", "uniform_ms", "exponential_ms", "normal_ms", "lognormal_ms", "pareto_ms", "one_of_ms"});
    if (d.raw().size() != 1)
      d.fail("exactly one of fixed_ms, uniform_ms, exponential_ms, normal_ms, lognormal_ms, pareto_ms, one_of_ms");
    // Two durations in ms; `ordered`: the first no larger than the second.
    auto pair = [&](const char* k, bool ordered, const char* expected) {
      const json& v = d.raw().at(k);
      if (!v.is_array() || v.size() != 2 || !is_ms(v[0]) || !is_ms(v[1]) || (ordered && v[1].get<double>() < v[0].get<double>()))
        d.fail(fmt::format("{}, each from 0 to {} ms", expected, limits::max_ms), k);
      return std::pair{v[0].get<double>(), v[1].get<double>()};
    };
    if (d.has("fixed_ms")) return sim::fixed(from_ms(d.number("fixed_ms", 0, 0, limits::max_ms)));
    if (d.has("uniform_ms")) {
      auto [lo, hi] = pair("uniform_ms", true, "[low, high] with low <= high");
      return sim::uniform(from_ms(lo), from_ms(hi));
    }
    if (d.has("one_of_ms")) {
      const json& v = d.raw().at("one_of_ms");
      if (!v.is_array() || v.empty() || v.size() > 16 || !std::all_of(v.begin(), v.end(), is_ms))
        d.fail(fmt::format("a list of 1 to 16 durations in ms, each from 0 to {}", limits::max_ms), "one_of_ms");
      std::vector<sim::Duration> values;
      for (const json& x : v) values.push_back(from_ms(x.get<double>()));
      return sim::empirical(values);
    }
    if (d.has("exponential_ms")) return sim::exponential(from_ms(d.number("exponential_ms", 0, 1e-6, limits::max_ms)));
    if (d.has("normal_ms")) {
      auto [mean, sd] = pair("normal_ms", false, "[mean, standard deviation]");
      return sim::normal(from_ms(mean), from_ms(sd));
    }
    if (d.has("lognormal_ms")) {
      const Reader l = d.child("lognormal_ms");
      l.only({"median", "sigma"});
      if (!l.has("median") || !l.has("sigma")) l.fail("both median and sigma");
      return sim::lognormal_median(from_ms(l.number("median", 0, 1e-6, limits::max_ms)), l.number("sigma", 0, 0, 10));
    }
    const Reader p = d.child("pareto_ms");
    p.only({"scale", "shape"});
    if (!p.has("scale") || !p.has("shape")) p.fail("both scale and shape");
    return sim::pareto(from_ms(p.number("scale", 0, 1e-6, limits::max_ms)), p.number("shape", 0, 0.01, 100));
  }

 private:
  const json& j_;
  const std::string& file_;
  std::string path_;
};

models::ErrorKind error_kind(const Reader& r, const std::string& name, const std::string& key) {
  if (auto kind = locksim::error_kind(name)) return *kind;
  r.fail("an error kind (timeout, rejected, 1062, 1213, 1205, lock_busy, dropped, internal), got " + quote_value(name), key);
}

Expectation parse_expectation(const Reader& r, const std::string& strategy, const std::string& metric) {
  const json& v = r.raw().at(metric);
  if (!is_metric(metric)) r.fail("a metric name (duplicate_rows, errors.1062, latency_ms.p99, ...), got " + quote_value(metric), metric);
  if (!v.is_string()) r.fail("a comparison such as \"> 0\" or \"= 0\"", metric);
  std::istringstream in(v.get<std::string>());
  Expectation e{strategy, metric, "", 0};
  in >> e.op >> e.value;
  if (in.fail() || !(e.op == ">" || e.op == ">=" || e.op == "=" || e.op == "<=" || e.op == "<"))
    r.fail("a comparison such as \"> 0\" or \"= 0\", got " + quote_value(v.get<std::string>()), metric);
  return e;
}

// Scenario names and strategy labels name files and folders of the report.
constexpr const char* kFileName = "a name of 1 to 100 letters, digits, '-', '_', '+' or '.', not starting with '.'";
bool is_file_name(const std::string& name) {
  return !name.empty() && name.size() <= 100 && name.front() != '.' && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '+' ||
           c == '.';
  });
}

// Parses JSON text, nested at most limits::max_json_depth deep. Throws InputError for text
// that is not JSON, nests deeper, or holds a number too large for a double.
json parse_bounded(const std::string& text, const std::string& where) {
  const auto depth_check = [&](int depth, json::parse_event_t, json&) {
    if (depth > limits::max_json_depth)
      throw InputError(fmt::format("{}: expected JSON nested at most {} deep", where, limits::max_json_depth));
    return true;
  };
  try {
    return json::parse(text, depth_check);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e400
    std::string why = e.what();
    if (why.size() > 160) why = why.substr(0, 160) + "...";
    throw InputError(fmt::format("{}: expected JSON ({})", where, shown(why, 200)));
  }
}

// The first string or key in `j` that is not UTF-8, as a JSON path; "" if none.
std::string invalid_text(const json& j, const std::string& path, int depth = 0) {
  if (depth > limits::max_json_depth) return "";
  if (j.is_string()) return valid_utf8(j.get_ref<const std::string&>()) ? "" : (path.empty() ? "/" : path);
  if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i)
      if (auto bad = invalid_text(j[i], path + "/" + std::to_string(i), depth + 1); !bad.empty()) return bad;
  }
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (!valid_utf8(key)) return path + "/" + key;
      if (auto bad = invalid_text(value, path + "/" + key, depth + 1); !bad.empty()) return bad;
    }
  }
  return "";
}

// `a.b.c=value` applied to the JSON document; the value is JSON if it parses, else a string.
// Objects on the way are made as needed; a list is only written within its length (or one
// past it, to append), so no path makes a long list out of nothing.
void override_json(json& doc, const std::string& file, const std::string& assignment) {
  check_length("--set", assignment);
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(fmt::format("--set {}: expected path=value, for example clients.count=50", quote_value(assignment)));
  const std::string path = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  json value;
  try {
    value = parse_bounded(text, "--set " + path);
  } catch (const InputError&) {
    value = text;  // not JSON: the text itself
  }
  const auto refuse = [&](const std::string& why) {
    throw InputError(fmt::format("{}: {}: --set cannot write here ({})", shown(file), shown(path), why));
  };
  json* at = &doc;
  std::size_t from = 0;
  for (;;) {
    const std::size_t dot = path.find('.', from);
    const std::string part = path.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
    if (part.empty()) refuse("an empty name between dots");
    if (at->is_null()) *at = json::object();
    if (at->is_object()) {
      at = &(*at)[part];
    } else if (at->is_array()) {
      const auto index = parse_u64(part);
      if (!index || *index > at->size()) refuse(fmt::format("a list of {} here: an index from 0 to {}", at->size(), at->size()));
      if (*index == at->size()) at->push_back(nullptr);
      at = &(*at)[*index];
    } else {
      refuse("a " + std::string(at->type_name()) + " here, not an object or a list");
    }
    if (dot == std::string::npos) break;
    from = dot + 1;
  }
  *at = std::move(value);
}

}  // namespace

bool Expectation::holds(double m) const {
  if (op == ">") return m > value;
  if (op == ">=") return m >= value;
  if (op == "=") return m == value;
  if (op == "<=") return m <= value;
  return m < value;
}

std::string Expectation::text() const { return fmt::format("{} {} {} {}", strategy, metric, op, value); }

void narrow_strategies(Scenario& s, const std::vector<std::string>& names) {
  if (names.empty()) return;
  std::vector<StrategyChoice> chosen;
  for (const auto& name : names) {
    auto it = std::find_if(s.strategies.begin(), s.strategies.end(), [&](const auto& c) { return c.shown() == name; });
    const auto* entry = models::strategies::find(name);
    if (it != s.strategies.end()) {
      chosen.push_back(*it);
    } else if (entry != nullptr && entry->workload() == s.workload) {
      StrategyChoice c{name, {}};
      for (const auto& p : entry->info.params) c.params[p.name] = p.value;
      chosen.push_back(c);
    } else {
      throw InputError(fmt::format("--strategy {}: expected a strategy of the {} workload (see `locksim list`) or a label of "
                                   "the scenario",
                                   quote_value(name), s.workload));
    }
  }
  s.strategies = chosen;
}

std::string scenario_path(const std::string& name_or_path) {
  check_length("the scenario", name_or_path);
  std::error_code ec;
  if (std::filesystem::exists(name_or_path, ec)) return name_or_path;
  const std::string in_catalogue = std::string(LOCKSIM_SCENARIO_DIR) + "/" + name_or_path + ".json";
  if (is_file_name(name_or_path) && std::filesystem::exists(in_catalogue, ec)) return std::filesystem::proximate(in_catalogue).string();
  throw InputError(fmt::format("{}: no such scenario file, and no {}.json in {}", shown(name_or_path), shown(name_or_path),
                               LOCKSIM_SCENARIO_DIR));
}

std::vector<std::string> catalogue() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(LOCKSIM_SCENARIO_DIR))
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError(fmt::format("{}: expected a scenario file (a JSON file)", shown(path)));
  if (std::filesystem::file_size(path, ec) > limits::max_file_bytes)
    throw InputError(fmt::format("{}: expected a scenario file of at most {} bytes", shown(path), limits::max_file_bytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read the file", shown(path)));
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  json doc = parse_bounded(bytes, shown(path) + ": /");
  for (const auto& o : overrides) override_json(doc, path, o);
  if (const std::string bad = invalid_text(doc, ""); !bad.empty())
    throw InputError(fmt::format("{}: {}: expected text in UTF-8", shown(path), shown(bad)));

  Scenario s;
  s.file = path;
  s.resolved = doc.dump();
  s.hash = fnv1a(s.resolved);
  const Reader top(doc, path, "");
  top.only({"name", "description", "source", "lesson", "workload", "topology", "database", "redis", "zookeeper", "etcd",
            "clients", "faults", "strategies", "trials", "seed", "time_budget_s", "event_budget", "expect"});
  if (!top.has("name")) top.fail("a \"name\"");
  s.name = top.string("name", "");
  if (!is_file_name(s.name)) top.fail(std::string(kFileName) + " (it names the report folder), got " + quote_value(s.name), "name");
  s.description = top.string("description", "");
  s.source = top.string("source", "");
  s.lesson = top.string("lesson", "");
  s.trials = static_cast<int>(top.integer("trials", s.trials, 1, 10'000'000));
  s.seed = static_cast<std::uint64_t>(top.integer("seed", 1, 0, std::numeric_limits<std::int64_t>::max()));
  s.time_budget = std::chrono::duration_cast<sim::Duration>(std::chrono::duration<double>(top.number("time_budget_s", 3600, 1, 1e7)));
  s.event_budget = static_cast<std::uint64_t>(top.integer("event_budget", static_cast<std::int64_t>(s.event_budget), 1000, 1'000'000'000));

  if (top.has("workload")) {
    const Reader w = top.child("workload");
    w.only({"kind", "tasks", "poll_interval_ms", "poll_jitter", "batch_size", "consumers_per_node", "task_work",
            "reap_after_ms", "horizon_ms"});
    s.workload = w.choice("kind", "account-bind", {"account-bind", "batch-scheduler"});
    if (s.workload != "batch-scheduler" && w.raw().size() > 1) w.fail("only \"kind\" for the account-bind workload");
    auto& b = s.batch;
    b.tasks = static_cast<int>(w.integer("tasks", b.tasks, 1, 1'000'000));
    b.poll_interval = w.millis("poll_interval_ms", b.poll_interval, 0.001);
    b.poll_jitter = w.distribution("poll_jitter", b.poll_jitter);
    b.batch_size = static_cast<std::size_t>(w.integer("batch_size", static_cast<std::int64_t>(b.batch_size), 1, 1'000'000));
    b.consumers_per_node = static_cast<int>(w.integer("consumers_per_node", b.consumers_per_node, 1, 10'000));
    b.task_work = w.distribution("task_work", b.task_work);
    b.reap_after = w.millis("reap_after_ms", b.reap_after, 0.001);
    b.horizon = w.millis("horizon_ms", b.horizon, 0.001);
  }
  if (top.has("topology")) {
    const Reader t = top.child("topology");
    t.only({"app_servers", "workers", "accept_queue", "balance", "client_latency", "internal_latency", "app_work",
            "remote_service"});
    s.app_work = t.distribution("app_work", s.app_work);
    s.remote_service = t.distribution("remote_service", s.remote_service);
    s.app_servers = static_cast<int>(t.integer("app_servers", s.app_servers, 1, 1000));
    s.server.workers = static_cast<int>(t.integer("workers", 8, 1, 100'000));
    s.server.accept_queue = static_cast<std::size_t>(t.integer("accept_queue", 128, 1, 10'000'000));
    const std::string balance = t.choice("balance", "round_robin", {"random", "round_robin", "sticky"});
    s.balance = balance == "random" ? models::Balance::random
                : balance == "sticky" ? models::Balance::sticky
                                      : models::Balance::round_robin;
    s.client_link.latency = t.distribution("client_latency", s.client_link.latency);
    s.internal_link.latency = t.distribution("internal_latency", s.internal_link.latency);
  }
  if (top.has("database")) {
    const Reader d = top.child("database");
    d.only({"isolation", "pool_size", "read", "write", "commit", "lock_wait_timeout_ms", "statement_timeout_ms"});
    s.database.isolation = d.choice("isolation", "repeatable_read", {"repeatable_read", "read_committed"}) == "read_committed"
                               ? models::db::Isolation::read_committed
                               : models::db::Isolation::repeatable_read;
    s.database.pool_size = static_cast<std::size_t>(d.integer("pool_size", 10, 1, 100'000));
    s.database.read = d.distribution("read", s.database.read);
    s.database.write = d.distribution("write", s.database.write);
    s.database.commit = d.distribution("commit", s.database.commit);
    s.database.lock_wait_timeout = d.millis("lock_wait_timeout_ms", s.database.lock_wait_timeout, 1);
    s.database.statement_timeout = d.millis("statement_timeout_ms", s.database.statement_timeout, 1);
  }
  if (top.has("clients")) {
    const Reader c = top.child("clients");
    c.only({"count", "operations", "keys", "arrival", "timeout_ms", "max_attempts", "backoff", "retry_on"});
    s.clients.clients = static_cast<int>(c.integer("count", 10, 1, limits::max_clients));
    s.clients.operations_per_client = static_cast<int>(c.integer("operations", 1, 1, limits::max_operations));
    s.clients.keys = static_cast<std::uint64_t>(c.integer("keys", 0, 0, std::numeric_limits<std::int64_t>::max()));
    s.clients.retry.attempt_timeout = c.millis("timeout_ms", s.clients.retry.attempt_timeout, 0.001);
    s.clients.retry.max_attempts = static_cast<int>(c.integer("max_attempts", 3, 1, 1000));
    if (c.has("arrival")) {
      const Reader a = c.child("arrival");
      a.only({"kind", "start_ms", "spread_ms", "interval_ms", "times_ms"});
      const std::string kind = a.choice("kind", "at_start", {"at_start", "fixed", "poisson", "listed"});
      s.clients.arrival.kind = kind == "fixed"     ? models::ArrivalKind::fixed
                               : kind == "poisson" ? models::ArrivalKind::poisson
                               : kind == "listed"  ? models::ArrivalKind::listed
                                                   : models::ArrivalKind::at_start;
      if (kind == "listed") {
        // "times_ms": [0, 5600, 9000]: each client's operations at these times, in order.
        const json& times = a.has("times_ms") ? a.raw().at("times_ms") : json();
        if (!times.is_array() || times.empty()) a.fail("a non-empty list of times in ms for a listed arrival", "times_ms");
        double last = 0;
        for (std::size_t i = 0; i < times.size(); ++i) {
          if (!Reader::is_ms(times[i]) || times[i].get<double>() < last)
            a.fail(fmt::format("times in ms, from 0 to {} and in order", limits::max_ms), "times_ms/" + std::to_string(i));
          last = times[i].get<double>();
          s.clients.arrival.times.push_back(Reader::from_ms(last));
        }
        if (c.has("operations") && s.clients.operations_per_client != static_cast<int>(times.size()))
          c.fail("as many operations as listed arrival times", "operations");
        s.clients.operations_per_client = static_cast<int>(times.size());
      } else if (a.has("times_ms")) {
        a.fail("times_ms only with \"kind\": \"listed\"", "times_ms");
      }
      s.clients.arrival.start = a.millis("start_ms", {});
      s.clients.arrival.spread = a.millis("spread_ms", {});
      s.clients.arrival.interval = a.millis("interval_ms", s.clients.arrival.interval, 0.001);
    }
    if (c.has("backoff")) {
      const Reader b = c.child("backoff");
      b.only({"base_ms", "cap_ms", "jitter"});
      s.clients.retry.backoff.base = b.millis("base_ms", s.clients.retry.backoff.base);
      s.clients.retry.backoff.cap = b.millis("cap_ms", s.clients.retry.backoff.cap);
      if (s.clients.retry.backoff.cap < s.clients.retry.backoff.base)
        b.fail(fmt::format("a cap no smaller than the base ({} ms)",
                           std::chrono::duration<double, std::milli>(s.clients.retry.backoff.base).count()),
               "cap_ms");
      const std::string jitter = b.choice("jitter", "full", {"none", "full", "equal", "decorrelated"});
      s.clients.retry.backoff.jitter = jitter == "none"    ? models::Jitter::none
                                       : jitter == "equal" ? models::Jitter::equal
                                       : jitter == "decorrelated" ? models::Jitter::decorrelated
                                                                  : models::Jitter::full;
    }
    if (c.has("retry_on")) {
      const json& list = c.raw().at("retry_on");
      if (!list.is_array()) c.fail("a list of error kinds", "retry_on");
      s.clients.retry.retry_on.clear();
      for (std::size_t i = 0; i < list.size(); ++i) {
        if (!list[i].is_string()) c.fail("an error kind", "retry_on/" + std::to_string(i));
        s.clients.retry.retry_on.push_back(error_kind(c, list[i].get<std::string>(), "retry_on/" + std::to_string(i)));
      }
    }
  }
  if (static_cast<std::int64_t>(s.app_servers) * s.server.workers > limits::max_clients)
    top.fail(fmt::format("at most {} workers in all (topology.app_servers x topology.workers), got {} x {}", limits::max_clients,
                         s.app_servers, s.server.workers),
             "topology");
  if (static_cast<std::int64_t>(s.app_servers) * s.batch.consumers_per_node > limits::max_clients)
    top.fail(fmt::format("at most {} consumers in all (topology.app_servers x workload.consumers_per_node), got {} x {}",
                         limits::max_clients, s.app_servers, s.batch.consumers_per_node),
             "workload");
  if (static_cast<std::int64_t>(s.clients.clients) * s.clients.operations_per_client > limits::max_operations)
    top.fail(fmt::format("at most {} operations a trial (clients.count x clients.operations), got {} x {}", limits::max_operations,
                         s.clients.clients, s.clients.operations_per_client),
             "clients");
  if (top.has("redis")) {
    const Reader r = top.child("redis");
    r.only({"instances", "persistence", "failover", "down_after_ms", "replication_lag", "client_timeout_ms"});
    if (r.has("instances")) s.redis.instances = static_cast<int>(r.integer("instances", 1, 1, 99));
    const std::string persistence = r.choice("persistence", "none", {"none", "aof_everysec", "aof_always"});
    s.redis.persistence = persistence == "aof_everysec" ? models::redis::Persistence::aof_everysec
                          : persistence == "aof_always" ? models::redis::Persistence::aof_always
                                                        : models::redis::Persistence::none;
    if (r.has("failover")) {
      if (!r.raw().at("failover").is_boolean()) r.fail("true or false", "failover");
      s.redis.failover = r.raw().at("failover").get<bool>();
    }
    s.redis.down_after = r.millis("down_after_ms", s.redis.down_after, 1);
    s.redis.replication_lag = r.distribution("replication_lag", s.redis.replication_lag);
    s.redis.client_timeout = r.millis("client_timeout_ms", s.redis.client_timeout, 0.001);
  }
  if (top.has("zookeeper")) {
    const Reader z = top.child("zookeeper");
    z.only({"tick_ms", "session_timeout_ms"});
    s.coordination.zk_tick = z.millis("tick_ms", s.coordination.zk_tick, 1);
    s.coordination.zk_session_timeout = z.millis("session_timeout_ms", s.coordination.zk_session_timeout, 1);
  }
  if (top.has("etcd")) {
    const Reader e = top.child("etcd");
    e.only({"session_ttl_ms"});
    s.coordination.etcd_session_ttl = e.millis("session_ttl_ms", s.coordination.etcd_session_ttl, 1);
  }
  if (top.has("faults")) {
    const Reader f = top.child("faults");
    f.only({"gc_pauses", "pauses", "crashes", "partitions", "clock_steps"});
    const int app_servers = s.app_servers;
    // "app-2", "db-1", "redis-3", "redis-1-replica", "sentinel", "client"
    auto node_name = [app_servers](const Reader& r, const std::string& key) {
      const std::string name = r.string(key, "");
      auto numbered = [&](const std::string& prefix, int max) {
        if (!name.starts_with(prefix)) return false;
        const std::string digits = name.substr(prefix.size());
        if (digits.empty() || digits.size() > 3 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return false;
        const int n = std::stoi(digits);
        return n >= 1 && n <= max;
      };
      if (name == "clients" || name == "db-1" || name == "mq-1" || name == "remote-1" || name == "sentinel" || name == "redis-1-replica" || name == "zk-1" ||
          name == "etcd-1" ||
          numbered("app-", app_servers) || numbered("redis-", 99))
        return name;
      r.fail(fmt::format("a node: app-1 .. app-{}, db-1, redis-N, redis-1-replica, sentinel, zk-1, etcd-1, mq-1, remote-1 or clients, got {}",
                         app_servers, quote_value(name)),
             key);
    };
    auto at = [](const Reader& r) { return sim::Time{} + r.millis("at_ms", {}); };
    auto list = [&f](const std::string& key, auto&& each) {
      if (!f.has(key)) return;
      if (!f.raw().at(key).is_array()) f.fail("a list", key);
      for (std::size_t i = 0; i < f.raw().at(key).size(); ++i)
        each(Reader(f.raw().at(key)[i], f.file(), f.where(key + "/" + std::to_string(i))));
    };
    if (f.has("gc_pauses")) {
      const Reader g = f.child("gc_pauses");
      g.only({"interval", "length", "nodes"});
      models::GcPausesConfig gc;
      gc.interval = g.distribution("interval", gc.interval);
      gc.length = g.distribution("length", gc.length);
      s.faults.gc_pauses = gc;
      if (g.has("nodes")) {
        const json& nodes = g.raw().at("nodes");
        if (!nodes.is_array()) g.fail("a list of nodes", "nodes");
        for (std::size_t i = 0; i < nodes.size(); ++i) {
          const json one = {{"node", nodes[i]}};
          s.faults.gc_nodes.push_back(node_name(Reader(one, f.file(), g.where("nodes/" + std::to_string(i))), "node"));
        }
      }
    }
    list("pauses", [&](const Reader& p) {
      p.only({"node", "at_ms", "length_ms"});
      s.faults.pauses.push_back({node_name(p, "node"), at(p), p.millis("length_ms", {}, 0.001)});
    });
    list("crashes", [&](const Reader& c) {
      c.only({"node", "at_ms", "downtime_ms", "process_only"});
      Faults::Crash crash{node_name(c, "node"), at(c), c.millis("downtime_ms", std::chrono::seconds(1))};
      if (c.has("process_only")) {
        if (!c.raw().at("process_only").is_boolean()) c.fail("true or false", "process_only");
        crash.process_only = c.raw().at("process_only").get<bool>();
      }
      s.faults.crashes.push_back(crash);
    });
    list("partitions", [&](const Reader& p) {
      p.only({"at_ms", "length_ms", "side_a", "side_b", "mode"});
      Faults::Partition w{at(p), p.millis("length_ms", {}, 0.001), {}, {}};
      for (const char* side : {"side_a", "side_b"}) {
        if (!p.has(side) || !p.raw().at(side).is_array() || p.raw().at(side).empty()) p.fail("a non-empty list of nodes", side);
        for (std::size_t i = 0; i < p.raw().at(side).size(); ++i) {
          const json one = {{"node", p.raw().at(side)[i]}};
          (std::string(side) == "side_a" ? w.side_a : w.side_b)
              .push_back(node_name(Reader(one, f.file(), p.where(std::string(side) + "/" + std::to_string(i))), "node"));
        }
      }
      w.mode = p.choice("mode", "drop", {"drop", "hold"}) == "hold" ? models::PartitionMode::hold : models::PartitionMode::drop;
      s.faults.partitions.push_back(w);
    });
    list("clock_steps", [&](const Reader& c) {
      c.only({"node", "at_ms", "step_ms"});
      if (!c.has("step_ms")) c.fail("a step_ms (negative: backward)");
      s.faults.clock_steps.push_back({node_name(c, "node"), at(c), c.millis("step_ms", {}, -1e12)});
    });
  }

  // Strategies: "all", names, or {"name": ..., "as": "a label", "params": {...}}.
  std::vector<json> chosen;
  if (!top.has("strategies") || top.raw().at("strategies") == "all") {
    for (const auto& e : models::strategies::registry())
      if (e.workload() == s.workload) chosen.push_back(e.info.name);
  } else {
    const json& list = top.raw().at("strategies");
    if (!list.is_array() || list.empty()) top.fail("\"all\" or a non-empty list of strategies", "strategies");
    chosen.assign(list.begin(), list.end());
  }
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const std::string at = "strategies/" + std::to_string(i);
    const json& item = chosen[i];
    std::string name, label;
    json params = json::object();
    if (item.is_string()) {
      name = item.get<std::string>();
    } else if (item.is_object()) {
      const Reader r(item, path, "/" + at);
      r.only({"name", "as", "params"});
      name = r.string("name", "");
      label = r.string("as", "");
      if (r.has("as") && !is_file_name(label)) r.fail(std::string(kFileName) + " (it names report files), got " + quote_value(label), "as");
      if (r.has("params")) params = item.at("params");
    } else {
      top.fail("a strategy name or {\"name\": ..., \"params\": {...}}", at);
    }
    const models::strategies::Entry* entry = models::strategies::find(name);
    if (entry == nullptr) top.fail("a strategy name (see `locksim list`), got " + quote_value(name), at);
    if (entry->workload() != s.workload)
      top.fail(fmt::format("a strategy of the {} workload; {} is one of {}", s.workload, name, entry->workload()), at);
    StrategyChoice choice{name, {}, label};
    for (const auto& earlier : s.strategies)
      if (earlier.shown() == choice.shown())
        top.fail("each strategy once, or told apart with \"as\": \"a label\" (" + quote_value(choice.shown()) + " twice)", at);
    for (const auto& p : entry->info.params) choice.params[p.name] = p.value;
    if (!params.is_object()) top.fail("an object of parameters", at + "/params");
    for (const auto& [key, value] : params.items()) {
      if (!choice.params.count(key)) top.fail("a parameter of " + name + " (unknown parameter)", at + "/params/" + key);
      if (!value.is_number() || !(value.get<double>() >= 0 && value.get<double>() <= limits::max_ms))
        top.fail(fmt::format("a number from 0 to {}", limits::max_ms), at + "/params/" + key);
      choice.params[key] = value.get<double>();
    }
    s.strategies.push_back(std::move(choice));
  }

  if (top.has("expect")) {
    const Reader e = top.child("expect");
    if (!e.raw().is_object()) e.fail("an object: strategy -> {metric: comparison}");
    for (const auto& [strategy, metrics] : e.raw().items()) {
      if (std::none_of(s.strategies.begin(), s.strategies.end(), [&](const auto& c) { return c.shown() == strategy; }))
        e.fail("a strategy this scenario runs (its name, or its \"as\" label), got " + quote_value(strategy), strategy);
      const Reader m = e.child(strategy);
      if (!metrics.is_object()) m.fail("an object: metric -> comparison");
      for (const auto& [metric, comparison] : metrics.items()) s.expect.push_back(parse_expectation(m, strategy, metric));
    }
  }
  return s;
}

}  // namespace locksim
