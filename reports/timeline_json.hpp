#pragma once
// A trial's Timeline as JSON: what a report writes beside its page for a story that leaves
// things out (every hold, pause, insert, statement and call the trial's timeline holds), and
// what carries a trial's outcome between ranks (app/exec/outcome_codec.cpp). Names, not numbers, for
// how a hold ended and what a statement was.

#include <nlohmann/json.hpp>

#include "reports/results.hpp"

namespace locksim::reports {

NLOHMANN_JSON_SERIALIZE_ENUM(Timeline::End, {{Timeline::End::held, "held"},
                                             {Timeline::End::released, "released"},
                                             {Timeline::End::expired, "expired"},
                                             {Timeline::End::deleted, "deleted"},
                                             {Timeline::End::session_expired, "session_expired"},
                                             {Timeline::End::lease_expired, "lease_expired"},
                                             {Timeline::End::lost, "lost"},
                                             {Timeline::End::crashed, "crashed"}})
NLOHMANN_JSON_SERIALIZE_ENUM(Timeline::Statement::Kind, {{Timeline::Statement::Kind::select, "select"},
                                                         {Timeline::Statement::Kind::write, "write"},
                                                         {Timeline::Statement::Kind::other, "other"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LockWait, mode, table, index, entry, behind, waited_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(HeldLock, who, mode, table, index, entry)
// Nobody (no DEL removed a hold's lock) is null; someone is every part.
inline void to_json(nlohmann::json& j, const Timeline::Who& w) {
  if (w.empty()) {
    j = nullptr;
    return;
  }
  j = {{"text", w.text},   {"lane", w.lane},           {"node", w.node},      {"worker", w.worker},
       {"client", w.client}, {"operation", w.operation}, {"attempt", w.attempt}};
}
inline void from_json(const nlohmann::json& j, Timeline::Who& w) {
  w = {};
  if (j.is_null()) return;
  j.at("text").get_to(w.text);
  j.at("lane").get_to(w.lane);
  j.at("node").get_to(w.node);
  j.at("worker").get_to(w.worker);
  j.at("client").get_to(w.client);
  j.at("operation").get_to(w.operation);
  j.at("attempt").get_to(w.attempt);
}
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Timeline::Bar, lock, holder, from_s, to_s, lease_to_s, end, service_to_s, deleted_by, removed,
                                   renewals_s, service)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Timeline::Band, node, from_s, to_s, kind)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Timeline::Mark, row, who, at_s, key, first)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Timeline::Statement, from_s, to_s, who, sql, kind, rows, affected, insert_id, warnings, error, code,
                                   message, waits, waited_for, cycle, undone, undone_rows, held, held_cut)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Timeline::Message, from, to, request, reply, sent_s, arrived_s, taken_s, replied_s, returned_s,
                                   gave_up_s, operation, attempt)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Timeline::Anomaly, metric, text, lanes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Timeline, seed, schedule, end_s, bars, bands, inserts, statements, messages, calls_left_out,
                                   bands_left_out, operations, anomalies)

}  // namespace locksim::reports
