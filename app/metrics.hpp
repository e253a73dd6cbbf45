#pragma once
// Metric names: the same in scenario `expect` blocks, results.json and --json output.

#include <string>

namespace locksim {

/// Whether `name` is a metric this tool knows (measured or not in a given scenario).
bool is_metric(const std::string& name);

}  // namespace locksim
