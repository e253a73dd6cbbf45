#pragma once
// The database server on its own node, and the connection pools app nodes reach it by.
//
// Imitates a MySQL server with one thread per connection and a JDBC pool such as HikariCP
// (docs/models.md, Figures the models take): each connection has a session process on the
// database node that runs its statements in order, taking service time per statement kind
// and commit time (the redo-log flush) per commit, each where it falls in the statement
// (ServerConfig). A pool has a bounded number of connections; waiting for one is latency
// the caller sees, and waiting too long is an error. A client whose statement times out
// closes the connection: the server finishes the statement, then rolls back whatever
// transaction was open (the server acted, the client does not know what it did).

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/db/database.hpp"
#include "models/db/sql.hpp"
#include "models/net/rpc.hpp"
#include "models/node/node.hpp"

namespace models::db {

/// A statement's time on the server, drawn per statement: a plain read's (BEGIN, ROLLBACK
/// and SET TRANSACTION too) or a write's (locking reads and DML) before it touches any row;
/// one row's step between the read and the write of INSERT ... SELECT; and, for COMMIT or
/// an autocommit write, the commit's after its changes and before they commit, so its locks
/// are held through the flush. That is what makes the second of two INSERT ... SELECT ...
/// WHERE NOT EXISTS sent together wait on the first's new, uncommitted row in MariaDB, and
/// two such statements under READ COMMITTED both insert (docs/sql.md, Locks).
struct ServerConfig {
  DatabaseConfig database{};
  Isolation isolation = Isolation::repeatable_read;  // MySQL's default
  sim::Distribution read_service = sim::fixed(std::chrono::microseconds(200));
  sim::Distribution write_service = sim::fixed(std::chrono::microseconds(500));
  sim::Distribution commit_service = sim::fixed(std::chrono::milliseconds(1));  // flush at commit
  /// Between reading a row and writing it within one statement: InnoDB's per-row work. Two
  /// INSERT ... SELECT ... WHERE NOT EXISTS sent at the same instant reach the server 0-400 us
  /// apart over 100-500 us links; they deadlock when the second reads inside the first's step,
  /// so 30 us makes that about 14% of pairs (1 - (370/400)^2), where MariaDB shows 5-25%
  /// (docs/sql.md, Locks). The write's 500 us there would make every such pair deadlock.
  sim::Distribution row_service = sim::fixed(std::chrono::microseconds(30));
};

/// What a connection sends: open a session, run a statement, or close.
struct Message {
  enum class Kind { open, statement, close } kind = Kind::statement;
  std::uint64_t session = 0;
  /// What to run (null for open and close); shared, so that the message moves through the
  /// network's callbacks and the session's queue without copying the statement.
  std::shared_ptr<const Statement> statement{};
  std::string who{};                     // the origin stamped on rows this connection inserts
  std::optional<Isolation> isolation{};  // open: the session's level (default: the server's)
  bool answer = false;  // close: answer once closed (a client's own close; a reset connection gets none)
};

struct Reply {
  Result result{};
  std::uint64_t session = 0;  // open: the new session
};

/// A statement the server ran, as its log keeps it (for narrating a trial).
struct LoggedStatement {
  sim::Time start{}, end{};  // from the start of its service to its answer
  std::string who;           // the connection's origin
  Statement statement;
  Result result;       // without its rows: a whole-table SELECT would keep the table again
  std::size_t rows{};  // how many rows the result had
  /// The locks every session held once it answered (at most kLocksLogged), for a story.
  std::vector<HeldLock> locks_after{};
  static constexpr std::size_t kLocksLogged = 40;
};

class Server {
 public:
  Server(Network& net, Node& node, ServerConfig config = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  void create_table(TableSchema schema) { database_.create_table(std::move(schema)); }
  void accept(Message message, ReplyTo<Reply> reply);
  /// Ends a session as a reset connection does (its client's machine went down): the
  /// current statement finishes, then its transaction is rolled back.
  void disconnect(std::uint64_t session);
  Node& node() const { return node_; }
  Database& database() { return database_; }
  const Database& database() const { return database_; }
  const ServerConfig& config() const { return config_; }
  /// Statements that arrived on its sessions and wait for them.
  std::size_t queued() const;
  /// From now on, keeps every statement it runs (a replay's narration reads them).
  void keep_log() { logging_ = true; }
  const std::vector<LoggedStatement>& log() const { return log_; }

 private:
  struct Session;
  void serve(Session& session);
  StatementTiming service_time(const Statement& statement, bool autocommit, sim::Stream& stream) const;

  Network& net_;
  Node& node_;
  ServerConfig config_;
  Database database_;
  std::uint64_t next_session_ = 1;
  std::map<std::uint64_t, std::unique_ptr<Session>> sessions_;
  bool logging_ = false;
  std::vector<LoggedStatement> log_;
};

/// A statement failed with a MySQL error (as JDBC's SQLException with its error code).
class SqlError : public std::runtime_error {
 public:
  SqlError(Code code, const std::string& what, Engine engine = Engine::mariadb);
  Code code() const { return code_; }
  /// The error as its server names it: "1062" on MariaDB, "23505" (the SQLSTATE) on PostgreSQL.
  std::string server_code() const;
  Engine engine() const { return engine_; }

 private:
  Code code_;
  Engine engine_;
};

struct PoolConfig {
  std::size_t size = 10;                                      // HikariCP maximumPoolSize
  sim::Duration acquire_timeout = std::chrono::seconds(30);   // HikariCP connectionTimeout
  sim::Duration statement_timeout = std::chrono::seconds(10);  // the driver's socket timeout
  std::optional<Isolation> isolation{};                        // default: the server's
};

class Pool;

/// A connection borrowed from a pool; goes back when destroyed. Every call blocks the
/// calling process for the round trip (and any lock wait on the server). Errors come back
/// as SqlError: duplicate key, deadlock, lock wait timeout, or connection timeout (the
/// connection is closed then, its open transaction rolled back by the server).
class Connection {
 public:
  Connection() = default;
  Connection(Connection&& other) noexcept;
  Connection& operator=(Connection&& other) noexcept;
  ~Connection();

  /// Who the rows this connection inserts come from, for checkers.
  void set_origin(std::string who);
  /// From now on, adds how long each statement waited for locks on the server to `*sink`,
  /// the statements that fail included (null: not counted). The sink outlives the connection.
  void count_lock_waits(sim::Duration* sink) { lock_waits_ = sink; }

  Result execute(const Statement& statement);  // throws SqlError unless the result is ok
  /// Runs a prepared statement (prepare once: `static const auto kFind = sql::prepare("...")`)
  /// with its `?`s bound to `args`; throws SqlError unless the result is ok.
  Result execute(const sql::Prepared& statement, const std::vector<Value>& args = {}) {
    return execute(sql::bind(statement, args));
  }
  /// Runs `statement` and returns its result, an error included (SqlError is not thrown).
  Result try_execute(const Statement& statement);
  /// The server's engine: which dialect its SQL is in, and how it names its errors.
  Engine engine() const;
  /// The server's session this connection is on now (0: none open yet, or closed after a
  /// timeout), and its database: for a peek at what the session holds (the lock checkers).
  std::uint64_t session() const;
  const Database& database() const;
  /// Closes the connection as a client does (a pool's reconnect): the server ends the session
  /// once its statement has finished, rolling back its transaction and releasing its user locks,
  /// and answers; the next statement opens a new session.
  void close();
  void begin() { execute({.kind = Statement::Kind::begin}); }
  void commit() { execute({.kind = Statement::Kind::commit}); }
  void rollback() { execute({.kind = Statement::Kind::rollback}); }
  std::vector<Row> select(const std::string& table, Where where, ReadLock lock = ReadLock::none) {
    return execute({.kind = Statement::Kind::select, .table = table, .where = std::move(where), .lock = lock}).rows;
  }
  Result insert(const std::string& table, Values values, OnDuplicate on_duplicate = OnDuplicate::error,
                Values on_update = {}) {
    return execute({.kind = Statement::Kind::insert, .table = table, .values = std::move(values),
                    .on_duplicate = on_duplicate, .on_update = std::move(on_update)});
  }
  Result insert_if_absent(const std::string& table, Values values, Where absent) {
    return execute({.kind = Statement::Kind::insert_if_absent, .table = table, .where = std::move(absent),
                    .values = std::move(values)});
  }
  std::int64_t update(const std::string& table, Values set, Where where) {
    return execute({.kind = Statement::Kind::update, .table = table, .where = std::move(where), .values = std::move(set)})
        .affected;
  }
  std::int64_t remove(const std::string& table, Where where) {
    return execute({.kind = Statement::Kind::remove, .table = table, .where = std::move(where)}).affected;
  }
  /// The conditional write that rejects a stale fencing token: sets `set` and
  /// `fence_column` = token where `where` holds and the stored token is lower. Returns
  /// false (nothing written) for a stale token.
  bool update_fenced(const std::string& table, Values set, Where where, const std::string& fence_column,
                     std::int64_t token);

 private:
  friend class Pool;
  Connection(Pool& pool, std::size_t slot) : pool_(&pool), slot_(slot) {}
  void give_back();
  Pool* pool_ = nullptr;
  std::size_t slot_ = 0;
  bool in_transaction_ = false;
  sim::Duration* lock_waits_ = nullptr;
};

class Pool {
 public:
  Pool(Network& net, Node& from, Server& server, PoolConfig config = {});
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  /// Borrows a connection, waiting up to acquire_timeout for one to be free; throws
  /// SqlError(connection_timeout) after that.
  Connection acquire();
  std::size_t idle() const { return free_.size(); }
  const PoolConfig& config() const { return config_; }

 private:
  friend class Connection;
  struct Slot {
    std::uint64_t session = 0;  // 0: not open (yet, or again after a timeout)
    std::string who;
  };
  struct Waiter {
    sim::Promise<std::size_t> promise;
    std::shared_ptr<bool> gave_up;
  };
  Reply call(Message message);
  Result run(std::size_t slot, const Statement& statement);
  void give_back(std::size_t slot, bool close_it);
  void close(std::size_t slot);
  void close_and_wait(std::size_t slot);

  Network& net_;
  Node& from_;
  Server& server_;
  PoolConfig config_;
  std::vector<Slot> slots_;
  std::deque<std::size_t> free_;
  std::deque<Waiter> waiting_;
};

}  // namespace models::db
