#pragma once
// Scenario files (scenarios/*.json): what world to build, which strategies to run in it, how
// many trials, and what each strategy is expected to show. Loading validates everything:
// a mistake is one line naming the file, the JSON path and what was expected.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/app/clients.hpp"
#include "models/db/database.hpp"
#include "models/faults/gc_pauses.hpp"
#include "models/strategies/strategy.hpp"

namespace locksim {

/// Bad input: `file: path: what was expected`.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct StrategyChoice {
  std::string name;
  models::strategies::Params params;  // the registry's defaults, overridden by the file
};

/// "the strategy's metric compares with value", for example duplicate_rows > 0.
struct Expectation {
  std::string strategy;
  std::string metric;
  std::string op;  // >, >=, =, <=, <
  double value = 0;
  bool holds(double measured) const;
  std::string text() const;
};

struct Database {
  models::db::Isolation isolation = models::db::Isolation::repeatable_read;
  std::size_t pool_size = 10;
  sim::Distribution read = sim::fixed(std::chrono::microseconds(200));
  sim::Distribution write = sim::fixed(std::chrono::microseconds(500));
  sim::Distribution commit = sim::fixed(std::chrono::milliseconds(1));
  sim::Duration lock_wait_timeout = std::chrono::seconds(50);
  sim::Duration statement_timeout = std::chrono::seconds(10);
};

struct Scenario {
  std::string file;
  std::string name, description, source, lesson;
  int app_servers = 2;
  models::AppServerConfig server;
  models::Balance balance = models::Balance::round_robin;
  models::LinkConfig client_link{sim::uniform(std::chrono::milliseconds(5), std::chrono::milliseconds(30)), 0};
  sim::Distribution app_work = sim::fixed(sim::Duration{});  // between a handler's read and its write
  models::LinkConfig internal_link{sim::uniform(std::chrono::microseconds(100), std::chrono::microseconds(500)), 0};
  Database database;
  models::ClientsConfig clients;
  std::optional<models::GcPausesConfig> gc_pauses;  // on every app server
  std::vector<StrategyChoice> strategies;
  int trials = 100;
  std::uint64_t seed = 1;
  sim::Duration time_budget = std::chrono::hours(1);
  std::vector<Expectation> expect;
  std::uint64_t hash = 0;  // of the resolved document: names the configuration in results
  std::string resolved;    // the document after overrides, as JSON text
};

/// Reads and validates a scenario file, after applying `path=value` overrides (for example
/// `clients.count=50`, written as if in the file). Throws InputError.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
/// Finds a scenario by file path, or by name in the scenarios directory.
std::string scenario_path(const std::string& name_or_path);
/// The scenario files of the catalogue, sorted.
std::vector<std::string> catalogue();

}  // namespace locksim
