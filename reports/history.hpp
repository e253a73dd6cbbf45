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

/// Each line is a map with :index, :type, :f, :value, :process, :time and :client (the client or
/// session the operation is of), and :error on a :fail or :info. A process runs one operation at
/// a time and never another after an :info (its operation may still be running): each
/// operation takes the lowest process free when it is invoked.
std::string history_text(const Timeline& t, HistoryFormat format);

}  // namespace locksim::reports
