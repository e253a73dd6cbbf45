#include "sim/trace.hpp"

#include <stdexcept>

namespace sim {

namespace {
// The engine's kinds, named once a process: every engine's trace shares them.
const std::vector<std::string>& engine_kind_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n(trace_kind::first_model_kind);
    n[trace_kind::process_start] = "process_start";
    n[trace_kind::process_resume] = "process_resume";
    n[trace_kind::process_exit] = "process_exit";
    n[trace_kind::process_killed] = "process_killed";
    n[trace_kind::node_pause] = "node_pause";
    n[trace_kind::node_resume] = "node_resume";
    n[trace_kind::node_crash] = "node_crash";
    n[trace_kind::node_restart] = "node_restart";
    n[trace_kind::callback] = "callback";
    return n;
  }();
  return names;
}
}  // namespace

Trace::Trace(TraceMode mode) : mode_(mode) {
  // Room for a world's model kinds, so that registering them does not move the names, each run.
  model_kind_names_.reserve(trace_kind::first_model_kind);
}

TraceKind Trace::kind(std::string_view name) {
  for (std::size_t i = 0; i < model_kind_names_.size(); ++i)
    if (model_kind_names_[i] == name) return static_cast<TraceKind>(trace_kind::first_model_kind + i);
  if (trace_kind::first_model_kind + model_kind_names_.size() >= 0xffff)
    throw std::length_error("sim::Trace::kind: too many trace kinds");
  model_kind_names_.emplace_back(name);
  return static_cast<TraceKind>(trace_kind::first_model_kind + model_kind_names_.size() - 1);
}

const std::string& Trace::kind_name(TraceKind kind) const {
  static const std::string unknown = "unknown";
  const std::size_t model = kind - trace_kind::first_model_kind;
  const std::string* name = kind < trace_kind::first_model_kind ? &engine_kind_names()[kind]
                            : model < model_kind_names_.size()  ? &model_kind_names_[model]
                                                                : &unknown;
  return name->empty() ? unknown : *name;
}

}  // namespace sim
