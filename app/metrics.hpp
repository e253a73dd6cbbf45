#pragma once
// Metric names: the same in scenario `expect` blocks, results.json and --json output.

#include <optional>
#include <string>

#include "models/app/request.hpp"

namespace locksim {

/// Whether `name` is a metric this tool knows (measured or not in a given scenario).
bool is_metric(const std::string& name);

/// How an error kind is named in metrics (`errors.<name>`) and in `retry_on`: MySQL errors
/// by number (1062, 1213, 1205), the others by their kind (timeout, lock_busy, ...).
std::string error_name(models::ErrorKind kind);
/// The error kind a name stands for, if any.
std::optional<models::ErrorKind> error_kind(const std::string& name);

}  // namespace locksim
