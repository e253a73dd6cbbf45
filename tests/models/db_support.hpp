#pragma once
// What the tests of the InnoDB-like database share (db_*_test.cpp): a database server with one
// table `accounts` keyed by `open_id`, app nodes with their pools, and short ways to write rows,
// statements and their outcomes.
//
// Timing: links take 1 ms each way and statements 0.2-1 ms on the server, so the steps of
// different sessions are staggered by 10 ms or more and nothing is observed at the instant
// two things happen at once (the seed breaks such ties).

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "models/checkers/duplicates.hpp"
#include "models/db/server.hpp"
#include "models/db/sql.hpp"
#include "support.hpp"

using namespace test;
namespace db = models::db;
using db::Code;
using db::Isolation;
using db::KeyIndex;
using db::OnDuplicate;
using db::ReadLock;

namespace Catch {
template <>
struct StringMaker<models::db::Code> {
  static std::string convert(models::db::Code code) { return std::to_string(static_cast<int>(code)); }
};
template <>
struct StringMaker<sim::Time> {
  static std::string convert(sim::Time t) { return sim::format_time(t); }
};
}  // namespace Catch

namespace test::db_model {

inline const std::string kTable = "accounts";

/// An app node with its own connection pool to the database.
struct App {
  models::Node node;
  db::Pool pool;
  App(sim::Engine& engine, models::Network& net, db::Server& server, const std::string& name, db::PoolConfig config)
      : node(engine, {name, {}}), pool(net, node, server, config) {}
};

/// The database server on its own node, one table `accounts` keyed by `open_id`, and app
/// nodes added by the test.
struct Db {
  sim::Engine engine;
  models::Network net;
  models::Node node{engine, {"db-1", {}}};
  db::Server server;
  std::vector<std::unique_ptr<App>> apps;

  explicit Db(KeyIndex index, db::ServerConfig server_config = {}, std::uint64_t seed = 1,
              models::LinkConfig link = {sim::fixed(1ms), 0}, std::optional<sim::EngineConfig> engine_config = {})
      : engine(engine_config ? std::move(*engine_config) : config(seed)), net(engine, link), server(net, node, server_config) {
    server.create_table({.name = kTable,
                         .key_column = "open_id",
                         .key_index = index,
                         .columns = {{"status", std::int64_t{0}}, {"device", std::string()}, {"token", std::int64_t{0}}}});
  }
  ~Db() { engine.shutdown(); }

  App& app(db::PoolConfig pool_config = {}) {
    apps.push_back(std::make_unique<App>(engine, net, server, "app-" + std::to_string(apps.size() + 1), pool_config));
    return *apps.back();
  }

  std::vector<db::Row> rows() const {
    std::vector<db::Row> out;
    for (const auto& record : server.database().committed_rows(kTable)) out.push_back(record.row);
    return out;
  }
  /// Committed rows whose key is `key`.
  std::vector<db::Row> rows_with(const std::string& key) const {
    std::vector<db::Row> out;
    for (const auto& row : rows())
      if (row.values.at("open_id") == db::Value{key}) out.push_back(row);
    return out;
  }
};

inline const db::PoolConfig kReadCommitted{.isolation = Isolation::read_committed};

inline db::Values account(const std::string& key, db::Values more = {}) {
  more["open_id"] = key;
  return more;
}
inline db::Where by_key(const std::string& key) { return {db::eq("open_id", key)}; }
/// A statement written in SQL, with no `?`.
inline db::Statement sql(const std::string& text) { return db::sql::bind(db::sql::prepare(text), {}); }

inline std::int64_t int_of(const db::Row& row, const std::string& column) { return std::get<std::int64_t>(row.values.at(column)); }
inline std::string text_of(const db::Row& row, const std::string& column) { return std::get<std::string>(row.values.at(column)); }

/// Runs `statement`; returns the MySQL error it threw, or ok.
template <class F>
Code code_of(F&& statement) {
  try {
    statement();
    return Code::ok;
  } catch (const db::SqlError& e) {
    return e.code();
  }
}

inline const char* name(KeyIndex index) {
  switch (index) {
    case KeyIndex::none: return "no index";
    case KeyIndex::non_unique: return "non-unique index";
    case KeyIndex::unique: return "unique index";
  }
  return "?";
}

/// The database server on its own node with one table made by `ddl`, and three app nodes a, b and p, each with its
/// own pool.
struct SqlDb {
  sim::Engine engine{config(1)};
  models::Network net{engine, {sim::fixed(1ms), 0}};
  models::Node node{engine, {"db-1", {}}};
  db::Server server{net, node, {}};
  explicit SqlDb(const std::string& ddl) { server.create_table(*db::sql::prepare(ddl).create); }
  App a{engine, net, server, "app-1", {}}, b{engine, net, server, "app-2", {}}, p{engine, net, server, "app-3", {}};
  ~SqlDb() { engine.shutdown(); }
};

inline db::Statement insert_statement(const std::string& table, db::Values values) {
  return {.kind = db::Statement::Kind::insert, .table = table, .values = std::move(values)};
}
inline db::Statement select_for_update(const std::string& key) {
  return {.kind = db::Statement::Kind::select, .table = kTable, .where = by_key(key), .lock = ReadLock::update};
}
}  // namespace test::db_model

using namespace test::db_model;
