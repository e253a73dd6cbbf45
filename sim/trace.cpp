#include "sim/trace.hpp"

#include <stdexcept>

namespace sim {

Trace::Trace(TraceMode mode) : mode_(mode) {
  // Room for the models' kinds too, so that registering the first of them does not move
  // every engine kind's name, each run.
  kind_names_.reserve(2 * trace_kind::first_model_kind);
  kind_names_.resize(trace_kind::first_model_kind);
  kind_names_[trace_kind::process_start] = "process_start";
  kind_names_[trace_kind::process_resume] = "process_resume";
  kind_names_[trace_kind::process_exit] = "process_exit";
  kind_names_[trace_kind::process_killed] = "process_killed";
  kind_names_[trace_kind::node_pause] = "node_pause";
  kind_names_[trace_kind::node_resume] = "node_resume";
  kind_names_[trace_kind::node_crash] = "node_crash";
  kind_names_[trace_kind::node_restart] = "node_restart";
  kind_names_[trace_kind::callback] = "callback";
}

TraceKind Trace::kind(std::string_view name) {
  for (std::size_t i = trace_kind::first_model_kind; i < kind_names_.size(); ++i)
    if (kind_names_[i] == name) return static_cast<TraceKind>(i);
  if (kind_names_.size() >= 0xffff) throw std::length_error("sim::Trace::kind: too many trace kinds");
  kind_names_.emplace_back(name);
  return static_cast<TraceKind>(kind_names_.size() - 1);
}

const std::string& Trace::kind_name(TraceKind kind) const {
  static const std::string unknown = "unknown";
  return kind < kind_names_.size() && !kind_names_[kind].empty() ? kind_names_[kind] : unknown;
}

}  // namespace sim
