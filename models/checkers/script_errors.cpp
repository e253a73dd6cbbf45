// Runtime errors of a strategy written in Lua: a bug of the script (a nil indexed, a bad
// argument, a statement the model does not parse) ends its attempt as an internal error, and
// counts here with its message, so a design's results are never silently those of a crash.

#include "models/checkers/checker.hpp"

namespace models::checkers {
namespace {
class ScriptErrors : public Checker {
 public:
  std::vector<MetricInfo> metrics() const override {
    return {{.name = "script_errors",
             .unit = "errors",
             .meaning = "runtime errors of a strategy written in Lua (each ends its attempt as errors.internal); the first "
                        "is shown with its file, line and seed",
             .finding = true}};
  }
  void check(const Trial& trial, Findings& out) const override {
    if (trial.script_errors == nullptr) return;
    out.set("script_errors", static_cast<double>(trial.script_errors->size()));
    if (!trial.script_errors->empty()) out.examples.insert(out.examples.begin(), "script error: " + trial.script_errors->front());
  }
};
}  // namespace

const Checker& script_errors() {
  static const ScriptErrors checker;
  return checker;
}
}  // namespace models::checkers
