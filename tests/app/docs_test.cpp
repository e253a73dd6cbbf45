// docs/scenario.md and the scenario loader agree: every key the loader reads is documented,
// every documented key is one it reads, and each documented default is the value in effect
// when the key is left out.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "support.hpp"
#include "app/scenario.hpp"

namespace {

using nlohmann::json;

// One row of a key table: `| `path` | type | default | meaning |`.
struct DocumentedKey {
  std::string path;           // as written: `faults.pauses[].node`, `expect.<strategy>.<metric>`
  std::optional<json> value;  // the default, when the page gives it as a JSON value in backticks
  std::string default_text;
  std::regex exactly, below;  // the paths it names, and the paths under it
};

std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::string cell;
  for (std::size_t i = 1; i < row.size(); ++i) {  // past the leading '|'
    if (row[i] == '|') {
      const auto first = cell.find_first_not_of(' '), last = cell.find_last_not_of(' ');
      out.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
      cell.clear();
    } else {
      cell += row[i];
    }
  }
  return out;
}

// A documented path as a pattern: `[]` and dots literal, `<name>` any name (a metric name
// may hold dots).
std::regex pattern(const std::string& documented, bool or_below) {
  std::string re;
  for (std::size_t i = 0; i < documented.size(); ++i) {
    const char ch = documented[i];
    if (ch == '<') {
      i = documented.find('>', i);
      re += ".+";
    } else if (std::string("[].\\^$|()*+?{}").find(ch) != std::string::npos) {
      re += std::string("\\") + ch;
    } else {
      re += ch;
    }
  }
  return std::regex(or_below ? re + "(\\.|\\[\\]).+" : re);
}

// The rows of docs/scenario.md whose first cell is a key path in backticks.
std::vector<DocumentedKey> documented_keys() {
  std::ifstream in(std::string(LOCKSIM_SOURCE_DIR) + "/docs/scenario.md");
  REQUIRE(in);
  std::vector<DocumentedKey> keys;
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("| `")) continue;
    const auto c = cells(line);
    REQUIRE(c.size() == 4);
    REQUIRE(c[0].size() > 2);
    const std::string path = c[0].substr(1, c[0].size() - 2);
    DocumentedKey key{path, std::nullopt, c[2], pattern(path, false), pattern(path, true)};
    const std::string& d = c[2];
    if (d.size() > 2 && d.front() == '`' && d.back() == '`' && d.find('`', 1) == d.size() - 1)
      key.value = json::parse(d.substr(1, d.size() - 2));
    keys.push_back(std::move(key));
  }
  return keys;
}

// A distribution ({"uniform_ms": [1, 5]}) is one value, not an object of keys.
bool is_distribution(const json& j) {
  static const std::set<std::string> forms = {"fixed_ms",     "uniform_ms", "exponential_ms", "normal_ms", "lognormal_ms",
                                              "pareto_ms",    "one_of_ms",  "empirical_ms",   "mixture"};
  return j.is_object() && j.size() == 1 && forms.count(j.begin().key()) == 1;
}

// Every key of `j` as a dotted path with its value; the items of a list of objects as
// `list[]`. A scalar, a list of scalars, a distribution or an empty object is one value.
void flatten(const json& j, const std::string& path, std::map<std::string, json>& out) {
  const auto below = [&](const std::string& key) { return path.empty() ? key : path + "." + key; };
  if (j.is_object() && !j.empty() && !is_distribution(j)) {
    for (const auto& [key, value] : j.items()) flatten(value, below(key), out);
  } else if (j.is_array() && !j.empty() && j.front().is_object()) {
    for (const auto& item : j) flatten(item, path + "[]", out);
  } else {
    out.emplace(path, j);  // the first item of a list speaks for the rest
  }
}

std::string temporary(const json& doc) {
  const auto path = test::unique_temp_path("locksim-docs", ".json");
  std::ofstream(path) << doc.dump();
  return path.string();
}

// The effective configuration of `doc`, which must load back as the same scenario.
json effective(const json& doc) {
  INFO(doc.dump());
  const std::string path = temporary(doc);
  const json config = locksim::effective_config(locksim::load_scenario(path));
  std::filesystem::remove(path);
  const std::string again = temporary(config);
  CHECK(locksim::effective_config(locksim::load_scenario(again)) == config);
  std::filesystem::remove(again);
  return config;
}

// Scenarios that leave out every key they can: their effective values are the defaults.
const json kMinimal = {{"name", "x"}};
const json kBatch = {{"name", "x"}, {"workload", {{"kind", "batch-scheduler"}}}};
// The sessions workload with what it needs: a table and a step (with a ? and a time).
const json kSessions = json::parse(R"json({
  "name": "x", "workload": "sessions",
  "database": {"tables": ["CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, k INT)"], "rows": {"t": [{"k": 1}]}},
  "steps": [{"session": "s1", "sql": "SELECT id FROM t WHERE k = ?", "args": [1], "at_ms": {"uniform_ms": [0, 1]}}]
})json");
// Every fault kind with the keys it needs (a length, left out, is 0, which the loader refuses
// when written).
const json kFaults = {
    {"name", "x"},
    {"faults",
     {{"gc_pauses", json::object()},
      {"pauses", {{{"node", "app-1"}, {"length_ms", 5}}}},
      {"crashes", {{{"node", "db-1"}}}},
      {"partitions", {{{"side_a", {"app-1"}}, {"side_b", {"db-1"}}, {"length_ms", 5}}}},
      {"clock_steps", {{{"node", "app-1"}, {"drift_ppm", 1}}}},
      {"latency_spikes", {{{"node", "db-1"}, {"length_ms", 5}}}},
      {"explore", {{"pauses", {{"count", 1}, {"length_ms", 5}}}, {"crashes", {{"count", 1}}}, {"lost_messages", {{"count", 1}}}}}}}};

// Traffic with only what it needs: the defaults of the others; Zipf keys without an exponent.
const json kMinimalTraffic = {{"name", "x"}, {"clients", {{"traffic", {{"rate_per_s", 1}, {"operations", 1}}}}}};
const json kMinimalZipf = {
    {"name", "x"}, {"clients", {{"traffic", {{"rate_per_s", 1}, {"operations", 1}, {"keys", {{"kind", "zipf"}, {"count", 2}}}}}}}};
// The population's traffic, over Zipf keys: the keys of clients.traffic.
const json kTraffic = json::parse(R"({
  "name": "x",
  "clients": {"traffic": {"rate_per_s": 50, "operations": 20, "keys": {"kind": "zipf", "count": 10, "exponent": 1.2},
                          "only": [[0, 9], [12, 19]]}}
})");

// Traffic at listed times.
const json kListedTraffic = json::parse(R"({"name": "x", "clients": {"traffic": {"kind": "listed", "times_ms": [0, 5]}}})");

// A rollout: its defaults, and a plan with a step of each kind.
const json kRollout = json::parse(R"({
  "name": "x", "rollout": {"duration_s": 60},
  "strategies": [{"as": "p", "rollout": [{"at_s": 0, "deploy": "redis-token-cas-unlock"}, {"at_s": 1, "job": "start"},
                                         {"at_s": 2, "sql": "DELETE FROM t_account WHERE open_id = 'a'"}]}]
})");

// A scenario with the keys that appear only when given: the texts, a listed arrival, a
// Redis instance count, a labelled strategy, a spike between two nodes, expectations.
const json kEverything = json::parse(R"({
  "name": "x", "description": "d", "source": "s", "lesson": "l",
  "clients": {"arrival": {"kind": "listed", "times_ms": [0, 10]}},
  "redis": {"instances": 3},
  "faults": {"gc_pauses": {"nodes": ["app-2"]},
             "latency_spikes": [{"between": ["app-1", "db-1"], "length_ms": 5}],
             "explore": {"pauses": {"count": 1, "length_ms": 5, "nodes": ["app-1"]}, "crashes": {"count": 1, "nodes": ["app-1"]},
                         "lost_messages": {"count": 1, "nodes": ["clients"]}}},
  "strategies": ["unique-index", {"name": "redlock", "as": "slow-redlock", "params": {"ttl_ms": 30000}},
                 {"script": "check-then-insert.lua", "as": "lua"}],
  "expect": {"slow-redlock": {"latency_ms.p99": "< 1000"}},
  "database": {"legacy": {"table": "t_account", "column": "open_id", "keys": 10, "key_prefix": "old:", "duplicated_share": 0,
                          "max_copies": 4, "span_days": 30, "time_column": "version"}}
})");

// Legacy rows with only the keys they need: the others take their defaults (10 keys: none duplicated).
const json kLegacy = json::parse(R"({"name": "x", "database": {"legacy": {"table": "t_account", "keys": 10}}})");

}  // namespace

TEST_CASE("docs/scenario.md lists exactly the keys the loader reads and the defaults it applies") {
  const std::vector<DocumentedKey> documented = documented_keys();
  REQUIRE(documented.size() > 50);

  // What the code produces: defaults first, so that a default is read where the key was left out.
  std::map<std::string, json> defaults, produced;
  for (const json& doc : {kMinimal, kBatch, kFaults, kSessions, kMinimalTraffic, kMinimalZipf, kLegacy, kRollout})
    flatten(effective(doc), "", defaults);
  produced = defaults;
  flatten(effective(kEverything), "", produced);
  flatten(effective(kTraffic), "", produced);
  flatten(effective(kListedTraffic), "", produced);
  for (const std::string& file : locksim::catalogue()) flatten(locksim::effective_config(locksim::load_scenario(file)), "", produced);

  // (a) Every key the code produces is documented.
  for (const auto& [path, value] : produced) {
    INFO("a key the effective configuration has: " << path);
    CHECK(std::any_of(documented.begin(), documented.end(),
                      [&](const DocumentedKey& d) { return std::regex_match(path, d.exactly); }));
  }

  for (const DocumentedKey& d : documented) {
    INFO("documented: " << d.path << " (default " << d.default_text << ")");
    // (b) Every documented key is one the loader reads: it is in an effective configuration
    // (each of which loads back), or it holds keys that are; `$schema` is there for editors.
    const bool read = d.path == "$schema" || std::any_of(produced.begin(), produced.end(), [&](const auto& p) {
      return std::regex_match(p.first, d.exactly) || std::regex_match(p.first, d.below);
    });
    CHECK(read);
    // (c) A default given as a JSON value is the value in effect when the key is left out.
    if (d.value) {
      const auto it = defaults.find(d.path);
      CHECK(it != defaults.end());
      if (it != defaults.end()) {
        INFO("in effect: " << it->second.dump());
        CHECK(it->second == *d.value);
      }
    }
  }
}
