// clients.traffic: the whole population's arrivals, read from a scenario and written back into
// its effective configuration (docs/scenario.md, "clients.traffic").

#include <fmt/format.h>

#include <chrono>

#include "app/fault_kind.hpp"
#include "app/scenario_parts.hpp"

namespace locksim {

namespace {

// A rate for a duration or a number of operations.
void load_rate(const Reader& t, models::Traffic& traffic) {
  if (!t.has("rate_per_s"))
    t.fail("a \"rate_per_s\": operations per second arriving from the whole population (or \"kind\": \"listed\" with times_ms)");
  traffic.rate_per_s = t.number("rate_per_s", 1e-6, 1e6);
  if (t.has("duration_s") == t.has("operations"))
    t.fail("either \"duration_s\" (arrivals for this long) or \"operations\" (this many arrivals)");
  double expected = 0;
  if (t.has("operations")) {
    traffic.operations = static_cast<std::uint64_t>(t.integer("operations", 1, limits::max_operations));
    expected = static_cast<double>(traffic.operations);
  } else {
    const double seconds = t.number("duration_s", 1e-6, limits::max_ms / 1000);
    traffic.duration = std::chrono::duration_cast<sim::Duration>(std::chrono::duration<double>(seconds));
    expected = seconds * traffic.rate_per_s;
    if (expected > static_cast<double>(limits::max_operations))
      t.fail(fmt::format("at most {} operations a trial: rate_per_s x duration_s is {:g}", limits::max_operations, expected),
             "duration_s");
  }
}

}  // namespace

// clients.traffic: the whole population's arrivals.
//   {"kind": "poisson" | "constant", "rate_per_s": 200, "duration_s": 60 | "operations": 10000,
//    "start_ms": 0, "keys": {"kind": "fresh" | "uniform" | "zipf", "count": 1000, "exponent": 1.1},
//    "double_submit": {"probability": 0.01, "delay": {...}}}
//   or {"kind": "listed", "times_ms": [0, 5, 5, 900], ...}: one operation at each time.
models::Traffic load_traffic(const Reader& t) {
  t.only({"kind", "rate_per_s", "duration_s", "operations", "times_ms", "start_ms", "keys", "double_submit", "only"});
  models::Traffic traffic;
  const Names<models::Traffic::Kind> kinds = {{"poisson", models::Traffic::Kind::poisson},
                                              {"constant", models::Traffic::Kind::constant},
                                              {"listed", models::Traffic::Kind::listed}};
  traffic.kind = t.pick("kind", traffic.kind, kinds);
  const json listed = {{"properties", {{"kind", {{"const", "listed"}}}}}, {"required", {"kind"}}};
  t.declare("", {{"if", listed}, {"then", {{"required", {"times_ms"}}}}, {"else", {{"required", {"rate_per_s"}}}}});
  t.declare("rate_per_s", {{"type", "number"}, {"minimum", 1e-6}, {"maximum", 1e6}});
  t.declare("duration_s", {{"type", "number"}, {"minimum", 1e-6}, {"maximum", limits::max_ms / 1000}});
  t.declare("operations", {{"type", "integer"}, {"minimum", 1}, {"maximum", limits::max_operations}});
  if (traffic.kind == models::Traffic::Kind::listed) {
    for (const char* rated : {"rate_per_s", "duration_s", "operations"})
      if (t.has(rated)) t.fail("no rate, duration or operation count with listed times (the times say them)", rated);
    traffic.times = t.times("times_ms", "when each operation of listed traffic arrives", static_cast<std::size_t>(limits::max_operations));
  } else if (t.has("times_ms")) {
    t.fail("times_ms only with \"kind\": \"listed\"", "times_ms");
  } else {
    load_rate(t, traffic);
  }
  traffic.start = t.millis("start_ms", traffic.start);
  if (t.has("keys")) {
    const Reader k = t.child("keys");
    k.only({"kind", "count", "exponent"});
    k.declare("", {{"if", {{"properties", {{"kind", {{"enum", {"uniform", "zipf"}}}}}}, {"required", {"kind"}}}},
                   {"then", {{"required", {"count"}}}}});
    const Names<models::KeyChoice> choices = {
        {"fresh", models::KeyChoice::fresh}, {"uniform", models::KeyChoice::uniform}, {"zipf", models::KeyChoice::zipf}};
    traffic.keys = k.pick("kind", traffic.keys, choices);
    if (traffic.keys == models::KeyChoice::fresh && (k.has("count") || k.has("exponent")))
      k.fail("no count or exponent for fresh keys (a new key each)");
    if (traffic.keys != models::KeyChoice::fresh) {
      if (!k.has("count")) k.fail("a \"count\" of keys to choose from");
      traffic.key_count = static_cast<std::uint64_t>(k.integer("count", 1, limits::max_operations));
    }
    if (traffic.keys == models::KeyChoice::zipf) traffic.zipf_exponent = k.number("exponent", 1, 0, 10);
    else if (k.has("exponent")) k.fail("an exponent only for zipf keys", "exponent");
  }
  if (t.has("double_submit")) {
    const Reader d = t.child("double_submit");
    d.only({"probability", "delay"});
    d.require("probability", "a \"probability\" that a user submits the same request twice");
    traffic.double_submit = d.number("probability", 0, 0, 1);
    traffic.double_submit_delay = d.distribution("delay", traffic.double_submit_delay);
  }
  // Ranges of operation numbers, ascending and apart: [[0, 99], [120, 120]].
  t.declare("only", {{"type", "array"},
                     {"minItems", 1},
                     {"items", {{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", 0}}}, {"minItems", 2}, {"maxItems", 2}}}});
  if (t.has("only")) {
    const Reader o = t.child("only");
    const char* expected = "a list of [first, last] ranges of operation numbers, ascending and apart: [[0, 99], [120, 120]]";
    if (!o.raw().is_array() || o.raw().empty() || o.raw().size() > static_cast<std::size_t>(limits::max_operations)) o.fail(expected);
    std::int64_t after = -1;  // the last number of the range before
    for (std::size_t i = 0; i < o.raw().size(); ++i) {
      const json& r = o.raw().at(i);
      const auto number = [](const json& v) { return v.is_number_integer() && v.get<std::int64_t>() >= 0 && v.get<std::int64_t>() < 2 * limits::max_operations; };
      if (!r.is_array() || r.size() != 2 || !number(r[0]) || !number(r[1]) || r[0].get<std::int64_t>() > r[1].get<std::int64_t>() ||
          r[0].get<std::int64_t>() <= after)
        o.item(i).fail(expected);
      after = r[1].get<std::int64_t>();
      traffic.only.emplace_back(r[0].get<std::uint64_t>(), r[1].get<std::uint64_t>());
    }
  }
  return traffic;
}

json traffic_json(const models::Traffic& t) {
  using Kind = models::Traffic::Kind;
  json out = {{"kind", t.kind == Kind::poisson ? "poisson" : t.kind == Kind::constant ? "constant" : "listed"}, {"start_ms", to_ms(t.start)}};
  if (t.kind == Kind::listed) {
    out["times_ms"] = json::array();
    for (sim::Duration at : t.times) out["times_ms"].push_back(to_ms(at));
  } else {
    out["rate_per_s"] = t.rate_per_s;
    if (t.operations != 0) out["operations"] = t.operations;
    else out["duration_s"] = std::chrono::duration<double>(t.duration).count();
  }
  out["keys"] = {{"kind", models::to_string(t.keys)}};
  if (t.keys != models::KeyChoice::fresh) out["keys"]["count"] = t.key_count;
  if (t.keys == models::KeyChoice::zipf) out["keys"]["exponent"] = t.zipf_exponent;
  out["double_submit"] = {{"probability", t.double_submit}, {"delay", distribution_json(t.double_submit_delay)}};
  if (!t.only.empty()) {
    out["only"] = json::array();
    for (const auto& [first, last] : t.only) out["only"].push_back({first, last});
  }
  return out;
}


}  // namespace locksim
