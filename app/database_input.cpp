#include "app/database_input.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <limits>
#include <numeric>

#include "app/fault_kind.hpp"
#include "app/scenario.hpp"
#include "app/workload_kind.hpp"
#include "models/db/ddl.hpp"
#include "models/db/postgres/sql.hpp"
#include "models/db/sql.hpp"

namespace locksim {

namespace sql = models::db::sql;
using json = nlohmann::json;

namespace {

// The names the strategies' and the workloads' own tables have: a scenario's table may not take them.
bool strategy_table(const std::string& name) {
  if (name == models::strategies::kLocks || name == models::strategies::kFences) return true;
  return std::any_of(workload_kinds().begin(), workload_kinds().end(), [&](const WorkloadKind* k) {
    const std::vector<std::string> tables = k->tables();
    return std::find(tables.begin(), tables.end(), name) != tables.end();
  });
}

bool is_session_name(const std::string& name) {
  if (name.empty() || name.size() > 32 || !std::isalpha(static_cast<unsigned char>(name[0]))) return false;
  if (name == "db-1" || name == "script") return false;  // the other nodes' names
  return std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; });
}

// A statement of the file, parsed in the engine's dialect; a mistake names the statement and
// where in it. `key` of an object, or item `key` of a list.
sql::Prepared parse(const Reader& r, const std::string& key, models::db::Engine engine) {
  const json& v = r.raw().is_array() ? r.raw().at(std::stoul(key)) : r.raw().at(key);
  if (!v.is_string()) r.fail("an SQL statement (a string)", key);
  const std::string text = v.get<std::string>();
  // One line: where, the server's error (MySQL's 1064 near what, at which byte, what was
  // expected; PostgreSQL's 42601 or 0A000), the statement cut to 60 bytes, and where the SQL
  // the model runs is described.
  const auto refuse = [&](const char* what) {
    throw InputError(fmt::format("{}: {}: {} in {} (the SQL the model runs: docs/sql.md)", shown(r.file()), shown(r.where(key)), what,
                                 quote_value(text, 60)));
  };
  try {
    return models::db::prepare_in(engine, text);
  } catch (const sql::Error& e) {
    refuse(e.what());
  } catch (const models::db::pg::Error& e) {
    refuse(e.what());
  }
  throw std::logic_error("unreachable");
}

const Names<models::db::Engine> kEngines = {{"mariadb", models::db::Engine::mariadb}, {"postgresql", models::db::Engine::postgresql}};

models::db::Value value_of(const Reader& row, const std::string& column) {
  const json& v = row.raw().at(column);
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return models::db::Null{};
  row.fail("an integer, a string or null (fractions are not modelled)", column);
}

json value_json(const models::db::Value& v) {
  if (models::db::is_null(v)) return nullptr;
  if (const auto* n = std::get_if<std::int64_t>(&v)) return *n;
  return std::get<std::string>(v);
}

}  // namespace

namespace {

// database.legacy, read and checked against the table it fills.
models::LegacyRows load_legacy(const Reader& r, const models::DatabaseSetup& setup) {
  r.only({"table", "column", "keys", "key_prefix", "duplicated_share", "max_copies", "span_days", "time_column"});
  models::LegacyRows l;
  r.require("table", "the table the legacy rows go in: {\"table\": \"t_account\", \"keys\": 1000}");
  r.require("keys", "how many distinct keys the legacy rows have: {\"table\": \"t_account\", \"keys\": 1000}");
  l.table = r.string("table", "");
  l.keys = r.integer("keys", 1, 10'000'000);
  l.key_prefix = r.string("key_prefix", l.key_prefix);
  if (l.key_prefix.size() > 200) r.fail("a key prefix of at most 200 bytes", "key_prefix");
  l.duplicated_share = r.number("duplicated_share", l.duplicated_share, 0, 1);
  l.max_copies = r.integer("max_copies", l.max_copies, 2, 100);
  l.span_days = r.integer("span_days", l.span_days, 1, 36'500);
  l.time_column = r.string("time_column", "");
  models::db::TableSchema table;
  if (l.table == models::strategies::kAccounts) {
    table = models::strategies::accounts_table(models::db::KeyIndex::none);
  } else {
    auto t = std::find_if(setup.tables.begin(), setup.tables.end(), [&](const auto& t) { return t.name == l.table; });
    if (t == setup.tables.end())
      r.fail(fmt::format("a table of database.tables, or {} (the account-bind strategies' table), got {}", models::strategies::kAccounts,
                         quote_value(l.table)),
             "table");
    table = *t;
    if (table.clustered_key)  // its rows go in by their id, a column such a table has not
      r.fail(fmt::format("a table whose primary key is id ({} has PRIMARY KEY ({}))", l.table, fmt::join(table.key_columns(), ", ")), "table");
  }
  const auto has_column = [&](const std::string& c) { return c == table.key_column || table.columns.count(c) != 0; };
  l.column = r.string("column", "");  // no default in the schema: it is the table's
  if (!r.has("column")) l.column = table.key_column;
  if (l.column.empty()) r.fail(fmt::format("\"column\": the column of {} the keys go in (it has no index to take it from)", l.table));
  if (l.column == "id" || !has_column(l.column))
    r.fail(fmt::format("a column of {} other than id, got {}", l.table, quote_value(l.column)), "column");
  if (!l.time_column.empty() && (l.time_column == "id" || l.time_column == l.column || !has_column(l.time_column)))
    r.fail(fmt::format("a column of {} other than id and {}, got {}", l.table, l.column, quote_value(l.time_column)), "time_column");
  return l;
}

// Every column an expression reads goes to `check` (VALUES(col) names one of the INSERT's).
template <class Check>
void check_columns(const models::db::Expr& e, const Check& check) {
  if (e.kind == models::db::Expr::Kind::column || e.kind == models::db::Expr::Kind::inserted) check(e.column);
  for (const auto& a : e.args) check_columns(a, check);
}

}  // namespace

const Names<models::db::Engine>& engine_names() { return kEngines; }

models::db::Engine read_engine(const Reader& top) {
  if (!top.has("database")) return models::db::Engine::mariadb;
  const Reader database = top.child("database");
  if (!database.raw().is_object()) return models::db::Engine::mariadb;  // refused where the section is read
  return database.pick("engine", models::db::Engine::mariadb, kEngines);
}

void load_tables(const Reader& database, models::DatabaseSetup& setup, std::vector<std::string>& ddl) {
  database.declare("tables", {{"type", "array"}, {"items", {{"type", "string"}}}});
  database.declare("rows", {{"type", "object"}});
  database.declare_names("rows", "<table>");
  database.declare("rows/<table>", {{"type", "array"}});
  database.declare("rows/<table>/[]", {{"type", "object"}, {"minProperties", 1}});
  database.declare_names("rows/<table>/[]", "<column>");
  database.declare("rows/<table>/[]/<column>", {{"type", {"integer", "string", "null"}}});
  if (database.has("tables")) {
    const Reader list = database.child("tables");
    if (!list.raw().is_array()) list.fail("a list of CREATE TABLE statements");
    for (std::size_t i = 0; i < list.raw().size(); ++i) {
      const sql::Prepared p = parse(list, std::to_string(i), setup.server.database.engine);
      if (p.create && strategy_table(p.create->name))
        list.fail(fmt::format("a table of a name of its own ({} is a strategy's table)", quote_value(p.create->name)), std::to_string(i));
      try {
        models::db::apply_ddl(p, setup.tables);
      } catch (const models::db::DdlRefused& e) {
        list.fail(e.what(), std::to_string(i));
      }
      ddl.push_back(p.text);
    }
  }
  if (database.has("rows")) {
    const Reader rows = database.child("rows");
    if (!rows.raw().is_object()) rows.fail("an object: table -> list of rows");
    for (const auto& [table, list] : rows.raw().items()) {
      const Reader l = rows.child(table);
      if (!list.is_array()) l.fail("a list of rows, each {\"column\": value, ...}");
      const bool known = table == models::strategies::kAccounts ||
                         std::any_of(setup.tables.begin(), setup.tables.end(), [&](const auto& t) { return t.name == table; });
      if (!known)
        rows.fail(fmt::format("a table of database.tables, or {} (the account-bind strategies' table)", models::strategies::kAccounts),
                  table);
      if (list.size() > static_cast<std::size_t>(limits::max_operations))
        l.fail(fmt::format("at most {} rows", limits::max_operations));
      for (std::size_t i = 0; i < list.size(); ++i) {
        const Reader row = l.item(i);
        if (!row.raw().is_object() || row.raw().empty()) row.fail("a row: {\"column\": value, ...}");
        models::SeedRow seed{table, {}, "seeded"};
        for (const auto& [column, value] : row.raw().items()) seed.values[column] = value_of(row, column);
        setup.rows.push_back(std::move(seed));
      }
    }
  }
  if (database.has("legacy")) {
    models::LegacyRows legacy = load_legacy(database.child("legacy"), setup);
    // After the listed rows of the table, as loading them would number them.
    for (const models::SeedRow& row : setup.rows) {
      if (row.table != legacy.table) continue;
      const auto id = row.values.find("id");
      const std::int64_t given = id != row.values.end() && std::holds_alternative<std::int64_t>(id->second)
                                     ? std::get<std::int64_t>(id->second)
                                     : legacy.first_id;
      if (given == std::numeric_limits<std::int64_t>::max())
        database.fail(fmt::format("listed rows of {} that leave ids for its legacy rows (one has BIGINT's largest id)", legacy.table),
                      "legacy");
      legacy.first_id = std::max(legacy.first_id, given + 1);
    }
    setup.legacy = std::move(legacy);
  }
}

void check_rows(const Reader& top, const models::DatabaseSetup& setup, const std::vector<StrategyChoice>& strategies,
                std::uint64_t memory_budget_mb) {
  if (setup.rows.empty() && !setup.legacy) return;
  const std::uint64_t budget = memory_budget_mb << 20;
  const std::int64_t rows = static_cast<std::int64_t>(setup.rows.size()) + (setup.legacy ? models::row_count(*setup.legacy) : 0);
  // Strategies with the same tables take the same rows: each set of tables is loaded once (a
  // legacy table may hold millions of rows).
  std::vector<std::vector<models::db::TableSchema>> checked;
  for (const StrategyChoice& choice : strategies) {
    const auto& entry = choice.entry();
    std::vector<models::db::TableSchema> tables;
    if (entry.make) {
      const models::strategies::Needs needs = models::strategies::needs(entry, choice.params);
      if (needs.account_table) tables.push_back(needs.accounts ? *needs.accounts : models::strategies::accounts_table(needs.key_index));
      tables.insert(tables.end(), needs.tables.begin(), needs.tables.end());
    }
    const bool strategy_tables = !tables.empty();  // whether a refusal may be the strategy's doing
    tables.insert(tables.end(), setup.tables.begin(), setup.tables.end());
    if (std::find(checked.begin(), checked.end(), tables) != checked.end()) continue;
    checked.push_back(tables);
    models::db::Database scratch(models::db::DatabaseConfig{.engine = setup.server.database.engine});
    for (const auto& t : tables) scratch.create_table(t);
    std::map<std::string, std::size_t> index;  // each table's row number in the file
    models::for_each_seed_row(setup.rows, setup.legacy, [&](const models::SeedRow& row) {
      const std::size_t i = index[row.table]++;
      const std::string at = row.origin == "workload" ? "workload/script"
                             : row.origin != "seeded" ? "database/legacy"
                                                      : fmt::format("database/rows/{}/{}", row.table, i);
      if (!scratch.has_table(row.table))
        top.fail(fmt::format("rows for the tables of the {} workload ({} has no {})", entry.workload, choice.shown(), row.table), at);
      try {
        scratch.load_row(row.table, row.values, row.origin);
        if (scratch.bytes_held() > budget) {
          const std::int64_t loaded = static_cast<std::int64_t>(std::accumulate(index.begin(), index.end(), std::size_t{0},
                                                                                [](std::size_t n, const auto& t) { return n + t.second; }));
          const double per_row = static_cast<double>(scratch.bytes_held()) / static_cast<double>(loaded);
          top.fail(fmt::format("seeded rows that fit a trial's memory budget (memory_budget_mb {}): they pass it at row {} of {}, "
                               "and all of them need about {:.0f} MB as the model counts them (docs/limits.md, \"Memory budget\")",
                               memory_budget_mb, loaded, rows, per_row * static_cast<double>(rows) / (1 << 20)),
                   at);
        }
      } catch (const sim::UsageError& e) {
        std::string why = e.what();
        if (const auto colon = why.find(": "); why.starts_with("models::db") && colon != std::string::npos) why = why.substr(colon + 2);
        top.fail(fmt::format("a row the table takes{}: {}", strategy_tables ? " (with the tables of " + choice.shown() + ")" : "", why), at);
      }
    });
  }
}

models::sessions::Script load_steps(const Reader& top) {
  const models::db::Engine engine = read_engine(top);
  models::sessions::Script script;
  top.declare("steps", {{"type", "array"}, {"minItems", 1}, {"maxItems", 10'000}});
  // Required with this workload only.
  const json is_sessions = {{"const", "sessions"}};
  const json kind_sessions = {{"type", "object"}, {"properties", {{"kind", is_sessions}}}, {"required", {"kind"}}};
  const json workload_sessions = {{"properties", {{"workload", {{"anyOf", json::array({is_sessions, kind_sessions})}}}}},
                                  {"required", {"workload"}}};
  top.declare("", {{"if", workload_sessions}, {"then", {{"required", {"steps"}}}}});
  if (!top.has("steps")) top.fail("\"steps\" for the sessions workload: [{\"session\": \"s1\", \"sql\": \"BEGIN\"}, ...]");
  const Reader steps = top.child("steps");
  if (!steps.raw().is_array() || steps.raw().empty()) steps.fail("a non-empty list of steps");
  if (steps.raw().size() > 10'000) steps.fail("at most 10000 steps");
  for (std::size_t i = 0; i < steps.raw().size(); ++i) {
    const Reader st = steps.item(i);
    st.only({"session", "sql", "args", "at_ms", "disconnect"});
    // A statement, or a disconnect (the session closes its connection; its next step opens one).
    st.declare("", {{"oneOf", json::array({{{"required", {"sql"}}}, {{"required", {"disconnect"}}}})}});
    st.require("session", "a step: {\"session\": \"s1\", \"sql\": \"...\"}");
    st.declare("session", {{"type", "string"}, {"pattern", "^[A-Za-z][A-Za-z0-9_-]{0,31}$"}});
    st.declare("sql", {{"type", "string"}});
    st.declare("disconnect", {{"const", true}});
    const bool disconnect = st.has("disconnect");
    if (disconnect && !(st.raw().at("disconnect").is_boolean() && st.raw().at("disconnect").get<bool>()))
      st.fail("true (the session closes its connection)", "disconnect");
    if (disconnect && (st.has("sql") || st.has("args")))
      st.fail("a step with \"sql\" or \"disconnect\", not both", "disconnect");
    // Not Reader::require: the schema's oneOf above says which of the two a step needs.
    if (!disconnect && !st.has("sql"))
      st.fail("a step: {\"session\": \"s1\", \"sql\": \"...\"} or {\"session\": \"s1\", \"disconnect\": true}");
    st.declare("args", {{"type", "array"}, {"items", {{"type", {"integer", "string", "null"}}}}});
    st.declare("at_ms", {{"anyOf", {{{"type", "number"}, {"minimum", 0}, {"maximum", limits::max_ms}}, {{"$ref", "#/$defs/distribution"}}}}});
    models::sessions::Step step;
    step.session = st.string("session", "");
    if (!is_session_name(step.session))
      st.fail("a session name of 1 to 32 letters, digits, '-' or '_', starting with a letter, other than db-1 and script (it "
              "names the session's node), got " + quote_value(step.session),
              "session");
    step.disconnect = disconnect;
    if (!disconnect) step.sql = parse(st, "sql", engine);
    if (step.sql.create) st.fail("a statement a session runs (tables go in database.tables)", "sql");
    std::vector<models::db::Value> args;
    if (st.has("args")) {
      const Reader a = st.child("args");
      if (!a.raw().is_array()) a.fail("a list of values for the statement's ?s");
      for (std::size_t k = 0; k < a.raw().size(); ++k) {
        const json& v = a.raw()[k];
        // Built in place: GCC 12 at -O3 takes a moved temporary variant for maybe-uninitialized.
        if (v.is_number_integer()) args.emplace_back(std::in_place_type<std::int64_t>, v.get<std::int64_t>());
        else if (v.is_string()) args.emplace_back(std::in_place_type<std::string>, v.get<std::string>());
        else if (v.is_null()) args.emplace_back(models::db::Null{});
        else a.fail("an integer, a string or null", std::to_string(k));
      }
    }
    if (args.size() != step.sql.params.size())
      st.fail(fmt::format("{} value{} in \"args\" for the statement's ?s, got {}", step.sql.params.size(),
                          step.sql.params.size() == 1 ? "" : "s", args.size()),
              "args");
    step.sql.statement = sql::bind(step.sql, args);
    step.args = std::move(args);
    if (st.has("at_ms")) {
      const json& at = st.raw().at("at_ms");
      if (Reader::is_ms(at)) step.at = sim::fixed(Reader::from_ms(at.get<double>()));
      else if (at.is_object()) step.at = st.distribution("at_ms", sim::fixed(sim::Duration{}));
      else st.fail(fmt::format("a time in ms from 0 to {}, or a distribution such as {{\"uniform_ms\": [0, 1]}}", limits::max_ms),
                   "at_ms");
    }
    script.steps.push_back(std::move(step));
  }
  return script;
}

// The columns an UPDATE may not change in the model: id, and on PostgreSQL each column of the
// key index (MariaDB's model moves a row's entries).
static std::vector<std::string> index_and_id(const models::db::TableSchema& t, models::db::Engine engine) {
  std::vector<std::string> out{"id"};
  if (engine == models::db::Engine::postgresql)
    for (const std::string& column : t.key_columns()) out.push_back(column);
  return out;
}

void check_steps(const Reader& top, const models::sessions::Script& script, const models::DatabaseSetup& setup) {
  using Kind = models::db::Statement::Kind;
  // Each table's key column and index as the ALTER steps before leave them, in step order; an
  // ADD UNIQUE INDEX may fail on duplicates, after which whether the table has it is unknown here.
  struct IndexState {
    std::vector<std::string> columns;  // the key index's, in order (none: the table has no key column)
    std::string name;
    bool indexed = false;
    bool known = true;
    bool plain = false;  // a plain index, which a unique one may be added over
  };
  std::map<std::string, IndexState> indexes;
  for (const auto& t : setup.tables)
    indexes[t.name] = {t.key_columns(), t.index_name.empty() ? t.key_column : t.index_name, t.key_index != models::db::KeyIndex::none,
                       true, t.key_index == models::db::KeyIndex::non_unique};
  for (std::size_t i = 0; i < script.steps.size(); ++i) {
    const models::db::Statement& st = script.steps[i].sql.statement;
    if (st.kind == Kind::begin || st.kind == Kind::commit || st.kind == Kind::rollback || st.kind == Kind::set_isolation ||
        st.kind == Kind::set_lock_wait_timeout || st.kind == Kind::set_timeout || st.kind == Kind::advisory ||
        st.kind == Kind::savepoint)
      continue;
    if (st.kind == Kind::select && st.table.empty()) continue;  // SELECT LAST_INSERT_ID(): no table, no column
    const std::string at = fmt::format("steps/{}/sql", i);
    auto t = std::find_if(setup.tables.begin(), setup.tables.end(), [&](const auto& table) { return table.name == st.table; });
    if (t == setup.tables.end())
      top.fail(fmt::format("a table of database.tables (1146 Table '{}' doesn't exist)", shown(st.table, 64)), at);
    // The model has one secondary index, on one column: an ALTER that would make a second, or
    // index another column, is refused here rather than failing the run.
    IndexState& index = indexes[t->name];
    if ((st.kind == Kind::drop_index || st.kind == Kind::add_index) && setup.server.database.engine == models::db::Engine::mariadb &&
        t->clustered_key)
      top.fail(fmt::format("an ALTER of a table whose primary key is id ({} has PRIMARY KEY ({}); an ALTER of it is not modelled: "
                           "docs/sql.md)", t->name, fmt::join(t->key_columns(), ", ")),
               at);
    if ((st.kind == Kind::drop_index || st.kind == Kind::add_index) && setup.server.database.engine == models::db::Engine::mariadb &&
        !t->indexes.empty())
      top.fail(fmt::format("an ALTER of a table with one secondary index ({} has {}; an ALTER of a table with several is not "
                           "modelled: docs/sql.md)", t->name, t->indexes.size() + 1),
               at);
    if (st.kind == Kind::drop_index) {
      if (index.indexed && index.name == st.index) index = {index.columns, index.name, false, true};
      continue;
    }
    // PostgreSQL's further indexes (on several columns, partial, or on another column than the
    // key column's): their columns are checked here, the rest when they run.
    const bool further = st.kind == Kind::add_index && setup.server.database.engine == models::db::Engine::postgresql &&
                         (st.more().index_def || (!index.columns.empty() && st.column != index.columns.front()));
    if (further) {
      for (const std::string& column : models::db::index_columns(models::db::further_index(st)))
        if (!t->has_column(column))
          top.fail(fmt::format("a column of {} (42703 column \"{}\" does not exist)", t->name, shown(column, 64)), at);
      continue;
    }
    if (st.kind == Kind::add_index) {
      if (index.indexed && index.name == st.index) continue;  // 1061 when it runs
      const std::vector<std::string> columns = models::db::further_index(st).columns;  // on MariaDB, the one index's columns
      if (!index.columns.empty() && columns != index.columns)
        top.fail(fmt::format("an index on {}.{} (the model's tables have one secondary index, on one column or several: docs/sql.md)",
                             t->name, index.columns.size() == 1 ? index.columns.front() : fmt::format("({})", fmt::join(index.columns, ", "))),
                 at);
      const bool over_plain = st.unique && index.plain && index.known && columns == index.columns;
      if (index.indexed && index.known && !over_plain)
        top.fail(fmt::format("an ALTER that adds no second index to {} (it has {}; the model's tables have at most one: docs/sql.md)",
                             t->name, index.name),
                 at);
      for (const std::string& column : columns)
        if (column != t->key_column && !t->columns.count(column))
          top.fail(fmt::format("a column of {} (1072 Key column '{}' doesn't exist in table)", t->name, shown(column, 64)), at);
      index = {columns, st.index, true, !st.unique && index.known, !st.unique};
      continue;
    }
    const auto check = [&](const std::string& column) {
      if (!t->has_column(column))
        top.fail(fmt::format("a column of {} (1054 Unknown column '{}')", t->name, shown(column, 64)), at);
    };
    for (const auto& c : st.where) check(c.column);
    for (const auto& e : st.more().filter) check_columns(e, check);
    for (const auto& [column, e] : st.more().assign) {
      check(column);
      check_columns(e, check);
    }
    for (const auto& [column, value] : st.values) check(column);
    for (const auto& row : st.more().more_rows)
      for (const auto& [column, value] : row) check(column);
    // The model moves no row to another place in an index: refused here, not failed in the run.
    if (st.kind == Kind::update)
      for (const std::string& moved : index_and_id(*t, setup.server.database.engine))
        if (!moved.empty() && (st.values.count(moved) || std::any_of(st.more().assign.begin(), st.more().assign.end(),
                                                                      [&](const auto& a) { return a.first == moved; })))
          top.fail(fmt::format("an UPDATE that leaves {} as it is (changing the primary key or an indexed column is not modelled: "
                               "docs/sql.md)", moved),
                   at);
    for (const auto& [column, value] : st.on_update) check(column);
    for (const auto& column : st.more().conflict_target) check(column);
    if (st.more().conflict_index_where) check_columns(*st.more().conflict_index_where, check);
    for (const auto& column : st.more().returning)
      if (column != "*") check(column);
    const auto& computed = st.more().computed;
    const auto is_computed = [&](const std::string& c) {
      return std::any_of(computed.begin(), computed.end(), [&](const auto& x) { return x.first == c; });
    };
    for (const auto& [name, e] : computed) check_columns(e, check);  // a computed column's name is its own
    if (!st.count_rows) {  // an aggregate's column is named for it: its argument is the column
      for (const auto& column : script.steps[i].sql.columns)
        if (!is_computed(column)) check(column);
    } else if (!st.more().aggregate_column.empty())
      check(st.more().aggregate_column);
    for (const auto& column : st.more().group_by) check(column);
  }
}

void check_session_metric(const Reader& expect, const std::string& metric, const models::sessions::Script* script,
                          const models::DatabaseSetup& setup) {
  if (script == nullptr) expect.fail("steps.* and rows.* metrics only for the sessions workload", metric);
  if (metric.starts_with("rows.")) {
    const std::string table = metric.substr(5);
    if (std::none_of(setup.tables.begin(), setup.tables.end(), [&](const auto& t) { return t.name == table; }))
      expect.fail(fmt::format("rows.TABLE for a table of database.tables, got {}", quote_value(table)), metric);
    return;
  }
  const std::string rest = metric.substr(6);  // "3.error"
  const auto dot = rest.find('.');
  const std::string number = rest.substr(0, dot), field = dot == std::string::npos ? "" : rest.substr(dot + 1);
  const bool numeric = !number.empty() && number.size() < 7 && std::all_of(number.begin(), number.end(), ::isdigit);
  const std::size_t n = numeric ? std::stoul(number) : 0;
  if (n < 1 || n > script->steps.size())
    expect.fail(fmt::format("steps.N.FIELD with N a step from 1 to {}, got {}", script->steps.size(), quote_value(metric)), metric);
  static const std::vector<std::string> fields = {"error", "affected", "insert_id", "rows", "value", "warnings", "waited", "done"};
  if (std::find(fields.begin(), fields.end(), field) == fields.end())
    expect.fail(fmt::format("steps.{}.FIELD with FIELD one of {}, got {}", n, fmt::join(fields, ", "), quote_value(metric)), metric);
}

json tables_json(const models::DatabaseSetup& setup, const std::vector<std::string>& ddl) {
  const std::optional<models::LegacyRows>& legacy = setup.legacy;
  json out = json::object();
  if (!ddl.empty()) out["tables"] = ddl;
  json rows = json::object();
  for (const auto& row : setup.rows) {
    if (row.origin != "seeded") continue;  // a workload's
    json one = json::object();
    for (const auto& [column, value] : row.values) one[column] = value_json(value);
    rows[row.table].push_back(std::move(one));
  }
  if (!rows.empty()) out["rows"] = rows;
  if (legacy) {
    out["legacy"] = {{"table", legacy->table},
                     {"column", legacy->column},
                     {"keys", legacy->keys},
                     {"key_prefix", legacy->key_prefix},
                     {"duplicated_share", legacy->duplicated_share},
                     {"max_copies", legacy->max_copies},
                     {"span_days", legacy->span_days}};
    if (!legacy->time_column.empty()) out["legacy"]["time_column"] = legacy->time_column;
  }
  return out;
}

namespace {
// A value as MySQL reads it back: numbers as they are, strings quoted with '' and \\ escaped.
std::string sql_literal(const models::db::Value& v) {
  if (models::db::is_null(v)) return "NULL";
  if (const auto* n = std::get_if<std::int64_t>(&v)) return std::to_string(*n);
  std::string out = "'";
  for (const char c : std::get<std::string>(v)) {
    if (c == '\'') out += "''";
    else if (c == '\\') out += "\\\\";
    else if (c == '\0') out += "\\0";
    else out += c;
  }
  return out + "'";
}
}  // namespace

void write_rows_sql(const models::DatabaseSetup& setup, std::ostream& out) {
  // Each table's rows with the ids loading gives them, tables in the order their rows first come.
  // The legacy rows come last in their table (their ids follow the listed ones) and are written
  // as they are made, not held.
  std::vector<std::string> tables;
  std::map<std::string, std::map<std::int64_t, const models::db::Values*>> by_id;
  std::map<std::string, std::int64_t> next_id;
  for (const auto& row : setup.rows) {
    if (!by_id.count(row.table)) tables.push_back(row.table);
    std::int64_t& next = next_id.try_emplace(row.table, 1).first->second;
    const auto given = row.values.find("id");
    const std::int64_t id = given != row.values.end() && std::holds_alternative<std::int64_t>(given->second)
                                ? std::get<std::int64_t>(given->second)
                                : next;
    if (id < std::numeric_limits<std::int64_t>::max()) next = std::max(next, id + 1);  // the last id: no next one
    by_id[row.table][id] = &row.values;
  }
  if (setup.legacy && !by_id.count(setup.legacy->table)) tables.push_back(setup.legacy->table);
  const auto write = [&](const std::string& table, std::int64_t id, const models::db::Values& values) {
    // A table keyed by other columns has no id: its rows go in by their key.
    const auto schema = std::find_if(setup.tables.begin(), setup.tables.end(), [&](const auto& t) { return t.name == table; });
    const bool keyed = schema != setup.tables.end() && schema->clustered_key;
    std::vector<std::string> columns, list;
    if (!keyed) columns.push_back("id"), list.push_back(std::to_string(id));
    for (const auto& [column, value] : values) {
      if (column == "id") continue;
      columns.push_back(column);
      list.push_back(sql_literal(value));
    }
    out << fmt::format("INSERT INTO {} ({}) VALUES ({});\n", table, fmt::join(columns, ", "), fmt::join(list, ", "));
  };
  for (const auto& table : tables) {
    for (const auto& [id, values] : by_id[table]) write(table, id, *values);
    if (setup.legacy && setup.legacy->table == table)
      models::generate(*setup.legacy, [&](const models::SeedRow& row) { write(table, std::get<std::int64_t>(row.values.at("id")), row.values); });
  }
}

json steps_json(const models::sessions::Script& script) {
  json steps = json::array();
  for (const auto& step : script.steps) {
    json one = step.disconnect ? json{{"session", step.session}, {"disconnect", true}} : json{{"session", step.session}, {"sql", step.sql.text}};
    if (!step.args.empty()) {
      one["args"] = json::array();
      for (const auto& v : step.args) one["args"].push_back(value_json(v));
    }
    if (step.at) one["at_ms"] = distribution_json(*step.at);
    steps.push_back(std::move(one));
  }
  return steps;
}

}  // namespace locksim
