#include "app/exec/outcome_codec.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>

#include "app/metrics.hpp"
#include "reports/timeline_json.hpp"

// CBOR (RFC 8949) through nlohmann::json: binary, and a double travels as its 8 bytes.

namespace nlohmann {
template <>
struct adl_serializer<locksim::reports::Cell> {
  static void to_json(json& j, const locksim::reports::Cell& c) {
    std::visit([&](const auto& v) { j = v; }, c);
  }
  static void from_json(const json& j, locksim::reports::Cell& c) {
    if (j.is_null()) c = nullptr;
    else if (j.is_string()) c = j.get<std::string>();
    else c = j.get<std::int64_t>();
  }
};
}  // namespace nlohmann

namespace locksim::reports {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StepResult, step, session, sql, issued_ms, finished_ms, applied_ms, columns, rows, affected, insert_id,
                                   warnings, error, code, message, waited_for, waited_ms, waits, deadlock_cycle, undone, undone_rows,
                                   outcomes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TableResult, name, columns, rows, row_count, checksum)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Histogram::State, counts, max_ms)
}  // namespace locksim::reports

namespace locksim {

namespace {
using json = nlohmann::json;
}

std::string encode(const TrialOutcome& o) {
  json time = json::array();
  for (const TimePart& part : kTimeParts) time.push_back((o.time_ok.*part.member).count());
  const json j = {{"counts", o.counts},
                  {"latency", o.latency.state()},
                  {"failed_latency", o.failed_latency.state()},
                  {"time_ok", time},
                  {"operations", o.operations},
                  {"db_statements", o.db_statements},
                  {"redis_commands", o.redis_commands},
                  {"events", o.events},
                  {"trace_hash", o.trace_hash},
                  {"examples", o.examples},
                  {"timeline", o.timeline},
                  {"step_outcomes", o.step_outcomes},
                  {"steps", o.steps},
                  {"tables", o.tables}};
  const std::vector<std::uint8_t> bytes = json::to_cbor(j);
  return {bytes.begin(), bytes.end()};
}

TrialOutcome decode_outcome(const std::string& bytes) {
  try {
    const json j = json::from_cbor(bytes);
    TrialOutcome o;
    j.at("counts").get_to(o.counts);
    o.latency = reports::Histogram::restored(j.at("latency").get<reports::Histogram::State>());
    o.failed_latency = reports::Histogram::restored(j.at("failed_latency").get<reports::Histogram::State>());
    const json& time = j.at("time_ok");
    if (time.size() != kTimeParts.size()) throw std::runtime_error("time_ok has the wrong number of parts");
    for (std::size_t i = 0; i < kTimeParts.size(); ++i) o.time_ok.*kTimeParts[i].member = sim::Duration{time[i].get<std::int64_t>()};
    j.at("operations").get_to(o.operations);
    j.at("db_statements").get_to(o.db_statements);
    j.at("redis_commands").get_to(o.redis_commands);
    j.at("events").get_to(o.events);
    j.at("trace_hash").get_to(o.trace_hash);
    j.at("examples").get_to(o.examples);
    j.at("timeline").get_to(o.timeline);
    j.at("step_outcomes").get_to(o.step_outcomes);
    j.at("steps").get_to(o.steps);
    j.at("tables").get_to(o.tables);
    return o;
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("a trial's outcome from another rank does not decode: ") + e.what());
  }
}

}  // namespace locksim
