#pragma once
// One trial told and drawn for a reader: the events in order (narrate), a paragraph per
// violation saying why it happened (explain), and a sequence diagram (sequence_svg): a lane per
// participant, an event a row, requests and replies as arrows between lanes, a client's timeout
// as a band, lock holds as spans, statements with their outcomes and lock waits, pauses and
// crashes as bands, the duplicate inserts marked. All of it from the trial's
// Timeline alone, so a run's report, a replay and a test draw the same picture of a trial.

#include <map>
#include <string>
#include <vector>

#include "reports/results.hpp"

namespace locksim::reports {

/// Whos as their origins name them ("app-1 worker 4, client 7, op 7 attempt 1", "s1"), in order.
template <class Whos>
std::vector<std::string> texts_of(const Whos& whos) {
  std::vector<std::string> out;
  for (const Timeline::Who& w : whos) out.push_back(w.text);
  return out;
}

/// Whether a statement ended in an error.
bool failed(const Timeline::Statement& st);

/// What a statement came to, in a few words: "0 rows", "1 affected, id 7", "1062 Duplicate entry ...".
std::string outcome_words(const Timeline::Statement& st);

/// What a failed statement rolled back: "statement (2 row changes)"; empty: nothing.
std::string undone_words(const Timeline::Statement& st);

/// When the service ended a hold its holder still believed in (its lease ran out, another's
/// DEL removed it); < 0: the service granted it as long as the holder believed.
double lost_at(const Timeline::Bar& b);

/// The unlock that removed another holder's lock, as the lock's service has it: "DEL" (Redis),
/// "retried Unlock" (etcd: an Unlock whose reply was lost, sent again, deletes by the key's name).
const char* wrong_unlock_words(const Timeline::Bar& b);

/// How a hold ended, in words: "released", "expired at t=10.600 s", "deleted by app-1 worker 3
/// at t=5.900 s (wrong unlock)", "session expired at t=... (ZooKeeper)", "node crashed", with
/// ", renewed 3 times" and "; its DEL removed ...'s lock (wrong unlock)"; empty: still held.
std::string ended_words(const Timeline::Bar& b);

/// How many events narrate() tells before it folds any.
std::size_t narrated_events(const Timeline& timeline);

/// The trial's events in time order, one line each ("t=5.910 s  app-1 paused 6.000 s ..."):
/// pauses and crashes, lock holds (the grant in the service's words, renewals, the lease
/// running out, a DEL removing another's lock, sessions expiring, the unlock and what it
/// found), calls (a client's attempts, who took each up, its answer or the client's timeout;
/// commands to lock services with their replies, a repeated one once with how many times),
/// inserts of duplicated keys, statements with their outcomes, waits, deadlock cycles and
/// rollbacks. Past `kMostNarrated` lines the middle is folded into one line.
inline constexpr std::size_t kMostNarrated = 80;
std::vector<std::string> narrate(const Timeline& timeline);

/// Why each violation happened, a paragraph each, in plain words: duplicate inserts (who
/// inserted, whether each held the lock then, a lease that ran out in a pause and who took
/// the lock meanwhile, a request sent again after a timeout while its first attempt went on), leases that ran out or locks another's DEL removed under their holder, deadlocks (the cycle, the
/// victim, what it undid) and lock-wait timeouts. `fired`: the checkers that fired
/// ("duplicate_rows 1"); one the timeline does not show gets a sentence of its own, with its
/// meaning from `meanings` (metric name -> meaning) where it is there.
std::vector<std::string> explain(const Timeline& timeline, const std::vector<std::string>& fired,
                                 const std::map<std::string, std::string>& meanings = {});
/// Why a trial in which no checker fired was safe, in a paragraph: the inserts the unique index
/// refused, the holds that all ended within their leases (explain's paragraph when none fired).
std::string safe_story(const Timeline& timeline);

/// The trial as an SVG sequence diagram (a standalone <svg> element, no script, no external
/// reference). At most `max_lanes` lanes, those involved in a violation first, and
/// `max_rows` events; what is left out is said under the diagram.
/// Past `max_rows`, the rows around `focus_s` (when a finding happened; < 0: none) are drawn.
/// Where a second or more passes between two rows, a break says how long; every event's words
/// sit where no arrow runs through them.
std::string sequence_svg(const Timeline& timeline, const std::string& title, std::size_t max_lanes = 10,
                         std::size_t max_rows = 120, double focus_s = -1);

}  // namespace locksim::reports
