#pragma once
// The scenario loader's parts, shared by its files: app/scenario.cpp (the document, strategies
// and expectations), app/scenario_keys.cpp (the sections of plain keys and the effective
// configuration), app/traffic_input.cpp (clients.traffic) and app/rollout_input.cpp (a rollout
// and its plans). Not for the loader's callers: they have app/scenario.hpp.

#include <memory>
#include <string>
#include <vector>

#include "app/reader.hpp"
#include "app/scenario.hpp"
#include "models/app/clients.hpp"
#include "models/workloads/rollout/rollout.hpp"

namespace locksim {

/// Scenario names and strategy labels name files and folders of the report.
inline constexpr const char* kFileName = "a name of 1 to 100 letters, digits, '-', '_', '+' or '.', not starting with '.'";
bool is_file_name(const std::string& name);

/// An error kind by its name (retry_on), or a complaint at `key` of `r`.
models::ErrorKind read_error_kind(const Reader& r, const std::string& name, const std::string& key);
/// Another server error's code (MariaDB's number, PostgreSQL's SQLSTATE) or the name of an answer
/// a strategy declares in its `outcomes`: what errors.<code> counts.
bool answer_code(const std::string& name);
/// A strategy's parameters: `given` (at `at` of `owner`) over the registry's defaults.
models::strategies::Params params_over_defaults(const Reader& owner, const std::string& at, const models::strategies::Entry& entry,
                                                const std::string& name, const json& given);

/// The top-level values (name, trials, seed, the budgets) into `s`, and their names.
void read_top_keys(const Reader& top, Scenario& s);
std::vector<std::string> top_key_names();
/// "topology", "database", "clients", "redis", "zookeeper" and "etcd" into `s`.
void load_sections(const Reader& top, Scenario& s);

/// clients.traffic: the whole population's arrivals; and as the effective configuration writes it.
models::Traffic load_traffic(const Reader& t);
json traffic_json(const models::Traffic& t);

/// The scenario's "rollout": the table, the code and the cleanup job every plan starts from.
models::rollout::Plan rollout_base(const Reader& top, sim::Duration time_budget);
/// A plan's steps ("rollout": [...]) over the scenario's base, as a strategy of its own.
std::shared_ptr<const models::rollout::Plan> load_plan(const Reader& item, const models::rollout::Plan& base);
std::shared_ptr<const models::strategies::Entry> plan_entry(std::shared_ptr<const models::rollout::Plan> plan);
/// A plan's steps and the scenario's rollout, as the effective configuration writes them.
json plan_steps_json(const models::rollout::Plan& plan);
json rollout_json(const models::rollout::Plan& plan);

}  // namespace locksim
