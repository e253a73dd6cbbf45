#pragma once
// What every workload's trial is made of: its engine, the scenario's faults injected and
// counted, the checkers' findings taken, and the picture of a trial (the holds, pauses,
// statements and calls of what went wrong). Each workload kind (workload_kind.hpp) runs its
// trials with these; the runner folds the outcomes.

#include <set>
#include <string>
#include <vector>

#include "app/runner.hpp"
#include "models/checkers/checker.hpp"
#include "models/db/server.hpp"
#include "models/deployment.hpp"

namespace locksim {

double seconds(sim::Time t);
double seconds(sim::Duration d);
double ms(sim::Time t);

/// A trial's engine: its seed, the scenario's budgets, an explorer's schedule if any.
sim::EngineConfig engine_config(const Scenario& s, std::uint64_t seed, TraceKept kept, sim::TieBreak tie_break,
                                sim::Chooser chooser, sim::Footprints* footprints);
void inject_faults(const Scenario& s, const models::FaultSurface& surface);
/// The faults a trial that ran until `end` injected, where the scenario has any: the
/// denominator of its rates per fault.
void count_faults(const Scenario& s, const models::FaultSurface& surface, sim::Time end, TrialOutcome& out);
/// What the checkers found, as a trial's outcome.
void take_findings(models::checkers::Findings&& f, TrialOutcome& out);
void add_time(models::TimeSpent& sum, const models::TimeSpent& t);
/// A statement's lock wait: "X on t.PRIMARY 3, behind s1, 12.0 ms".
std::string wait_text(const models::db::LockWait& w);

/// The statements of the operations involved in what went wrong: every statement of an
/// operation (a connection's origin) that waited for a lock, failed, or is in `origins`; with
/// `all`, every statement. At most 200, the first ones.
std::vector<reports::Timeline::Statement> involved_statements(const std::vector<models::db::LoggedStatement>& log,
                                                              const std::set<std::string>& origins, bool all = false);
/// The picture of one trial: holds as the holders believed them, pauses and crashes from the
/// trace, the trial's inserts of duplicated keys (of `rows`, the account table's; seeded rows
/// count for a key but are not marked), and the statements and calls of the operations involved.
reports::Timeline timeline(sim::Engine& engine, const models::checkers::LockMonitor& locks,
                           const std::vector<models::db::RowRecord>& rows, const std::vector<models::db::LoggedStatement>& log,
                           const models::CallLog* calls, std::uint64_t seed);

}  // namespace locksim
