#pragma once
// A trial's client-visible history in Jepsen's form, for checkers such as Elle and Knossos: each
// operation's invocation (:invoke) and its completion (:ok, :fail, or :info where it may or may
// not have taken effect: a timeout), with the process, :f, :value and :time in nanoseconds since
// the trial began, in the order they happened. As EDN, as Jepsen writes history.edn, or as JSON
// with the same keys.
#include <string>

#include "reports/results.hpp"

namespace locksim::reports {

enum class HistoryFormat { edn, json };

/// A process that saw an :info may never invoke again (its operation may still be running):
/// the client's next operation is a new process, its number plus the number of clients, as
/// Jepsen numbers a crashed worker's successor.
std::string history_text(const Timeline& t, HistoryFormat format);

}  // namespace locksim::reports
