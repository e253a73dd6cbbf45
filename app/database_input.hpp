#pragma once
// The database parts of a scenario file: its own tables (CREATE TABLE statements), rows
// loaded before the run, and the sessions workload's steps (SQL on named sessions). Each
// statement is parsed here, once; a statement the model does not run is one line naming
// the file, the JSON path, the statement, the position and what is supported.

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "app/reader.hpp"
#include "models/deployment.hpp"
#include "models/workloads/sessions/sessions.hpp"

namespace locksim {

struct StrategyChoice;

/// database.engine: "mariadb" (the default) or "postgresql", which also says in which dialect
/// the file's SQL is written.
models::db::Engine read_engine(const Reader& top);
/// The engines by the names scenario files give them.
const Names<models::db::Engine>& engine_names();

/// database.tables, database.rows and database.legacy into `setup` (the legacy rule, its rows
/// made as each trial loads them, after the listed ones); `ddl` gets each CREATE TABLE as written.
void load_tables(const Reader& database, models::DatabaseSetup& setup, std::vector<std::string>& ddl);
/// Loads the seeded rows into a scratch database with the tables each strategy has (its own,
/// with its index, and the scenario's), so a row the tables refuse (a duplicate under a
/// unique index, an unknown column) is found now, with its JSON path.
/// Refuses rows that alone pass a trial's memory budget (`memory_budget_mb`, as the database
/// counts what it holds), before loading more of them than the budget holds.
void check_rows(const Reader& top, const models::DatabaseSetup& setup, const std::vector<StrategyChoice>& strategies,
                std::uint64_t memory_budget_mb);
/// The sessions workload's steps: the top-level "steps".
models::sessions::Script load_steps(const Reader& top);

/// Each step's table is one of the scenario's, and the columns it names are the table's.
void check_steps(const Reader& top, const models::sessions::Script& script, const models::DatabaseSetup& setup);
/// An expectation's metric on a step (steps.3.error) or a table (rows.t) names a step of
/// `script` (null: not the sessions workload) and a field, or a table of the scenario.
void check_session_metric(const Reader& expect, const std::string& metric, const models::sessions::Script* script,
                          const models::DatabaseSetup& setup);

/// The same parts as a scenario file writes them, for the effective configuration (the
/// legacy rule as given, not its rows).
nlohmann::json tables_json(const models::DatabaseSetup& setup, const std::vector<std::string>& ddl);
/// Every seeded row, listed and generated, as SQL: one `INSERT INTO t (id, ...) VALUES (...);`
/// a row, each table's rows in id order (`locksim rows`).
void write_rows_sql(const models::DatabaseSetup& setup, std::ostream& out);
nlohmann::json steps_json(const models::sessions::Script& script);

}  // namespace locksim
