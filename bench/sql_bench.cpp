#include "bench/sql_bench.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "models/db/database.hpp"
#include "models/db/postgres/sql.hpp"
#include "models/db/sql.hpp"
#include "sim/sim.hpp"

namespace bench {
namespace {

namespace db = models::db;
using Clock = std::chrono::steady_clock;

const std::vector<std::string> kMixed = {
    "SELECT * FROM t WHERE id BETWEEN ? AND ? + 20 FOR UPDATE",
    "SELECT k, v FROM t WHERE k IN ('k10', 'k20', 'k30', ?) LOCK IN SHARE MODE",
    "UPDATE t SET v = v + 1 WHERE id = ? AND v >= 0",
    "INSERT INTO t (k, v) VALUES (?, 1), (CONCAT_LESS, 2)",
    "SELECT id FROM t WHERE v % 7 = 3 OR k LIKE 'k1%' ORDER BY id LIMIT 5 FOR UPDATE SKIP LOCKED",
    "DELETE FROM t WHERE k = ? AND v BETWEEN 0 AND 1000000",
    "INSERT INTO t (k, v) VALUES (?, 0) ON DUPLICATE KEY UPDATE v = v + VALUES(v)",
    "SELECT COUNT_LESS FROM t WHERE id > ? AND id <= ? + 5",
};
const std::vector<std::string> kPoint = {
    "SELECT id FROM t WHERE k = ?",
    "INSERT INTO t (k, v) VALUES (?, 1)",
    "UPDATE t SET v = 2 WHERE id = ?",
    "SELECT * FROM t WHERE k = ? FOR UPDATE",
    "INSERT IGNORE INTO t (k) VALUES (?)",
    "DELETE FROM t WHERE k = ? AND v = 2",
};

// kPoint in PostgreSQL's dialect.
const std::vector<std::string> kPgPoint = {
    "SELECT id FROM t WHERE k = $1",
    "INSERT INTO t (k, v) VALUES ($1, 1)",
    "UPDATE t SET v = 2 WHERE id = $1",
    "SELECT * FROM t WHERE k = $1 FOR UPDATE",
    "INSERT INTO t (k) VALUES ($1) ON CONFLICT DO NOTHING",
    "DELETE FROM t WHERE k = $1 AND v = 2",
};

// The mixed set with its placeholders made valid: the model has no functions, so the set's
// "CONCAT_LESS" and "COUNT_LESS" stand for a second key and a column list.
std::vector<std::string> mixed() {
  std::vector<std::string> out;
  for (std::string s : kMixed) {
    if (auto at = s.find("CONCAT_LESS"); at != std::string::npos) s.replace(at, 11, "?");
    if (auto at = s.find("COUNT_LESS"); at != std::string::npos) s.replace(at, 10, "id, k");
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<db::Value> args_for(const db::sql::Prepared& p, std::int64_t n) {
  std::vector<db::Value> args;
  for (const auto& param : p.params) {
    const bool text = param.in == db::sql::Param::In::values || (param.in == db::sql::Param::In::where && p.statement.where.at(param.where_index).column == "k") ||
                      (param.in == db::sql::Param::In::args && p.text.find("IN (") != std::string::npos);
    if (text) args.emplace_back("k" + std::to_string(n % 5000) + (param.row ? "b" : ""));
    else args.emplace_back(std::int64_t{1 + n % 4000});
  }
  return args;
}

// Runs `texts` round after round for about `seconds` on a table of 4,000 rows; statements/s.
double statements_per_s(const std::vector<std::string>& texts, double seconds) {
  sim::Engine engine(sim::EngineConfig{.stack_bytes = 256 * 1024});
  db::Database database;
  database.create_table(*db::sql::prepare("CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, k VARCHAR(32) NOT NULL, "
                                          "v INT NOT NULL DEFAULT 0, UNIQUE KEY uk_k (k))")
                             .create);
  for (int i = 0; i < 4000; ++i) database.load_row("t", {{"k", "k" + std::to_string(i)}, {"v", std::int64_t{i}}});
  std::uint64_t done = 0;
  double elapsed = 0;
  engine.spawn(sim::kWorld, "bench", [&] {
    const auto session = database.open_session(db::Isolation::repeatable_read, "bench");
    const auto start = Clock::now();
    for (std::int64_t n = 0;; ++n) {
      for (const std::string& text : texts) {
        const db::sql::Prepared p = db::sql::prepare(text);
        database.execute(session, db::sql::bind(p, args_for(p, n)));
        ++done;
      }
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      if (elapsed >= seconds) break;
    }
  });
  engine.run();
  engine.shutdown();
  return static_cast<double>(done) / elapsed;
}

double prepares_per_s(const std::vector<std::string>& texts, double seconds, bool postgresql = false) {
  std::uint64_t done = 0;
  const auto start = Clock::now();
  double elapsed = 0;
  while (elapsed < seconds) {
    for (const std::string& text : texts) {
      const db::sql::Prepared p = postgresql ? db::pg::prepare(text) : db::sql::prepare(text);
      done += p.text.size() == text.size();
    }
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  }
  return static_cast<double>(done) / elapsed;
}

}  // namespace

SqlFigures sql_bench(int repeats) {
  const std::vector<std::string> set = mixed();
  std::vector<double> m, p, q, pg, my;
  for (int i = 0; i < repeats; ++i) {
    m.push_back(statements_per_s(set, 1.0));
    p.push_back(statements_per_s(kPoint, 1.0));
    q.push_back(prepares_per_s(set, 0.5));
    pg.push_back(prepares_per_s(kPgPoint, 0.5, true));
    my.push_back(prepares_per_s(kPoint, 0.5));
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  return {median(m), median(p), median(q), median(pg), median(my)};
}

}  // namespace bench
