#include "models/db/server.hpp"

namespace models::db {

struct Server::Session {
  explicit Session(std::string name) : inbox(std::move(name)) {}
  std::uint64_t id = 0;
  Database::SessionId db = 0;
  std::string who;  // the origin its connection last gave
  bool closed = false;
  struct Job {
    Message message;
    ReplyTo<Reply> reply;
  };
  sim::Mailbox<Job> inbox;
};

Server::Server(Network& net, Node& node, ServerConfig config)
    : net_(net), node_(node), config_(std::move(config)), database_(config_.database) {}

Server::~Server() = default;

std::size_t Server::queued() const {
  std::size_t out = 0;
  for (const auto& [id, session] : sessions_) out += session->inbox.size();
  return out;
}

void Server::accept(Message message, ReplyTo<Reply> reply) {
  if (message.kind == Message::Kind::open) {
    const std::uint64_t id = next_session_++;
    auto session = std::make_unique<Session>(node_.name() + ".session-" + std::to_string(id));
    session->id = id;
    session->db = database_.open_session(message.isolation.value_or(config_.isolation), message.who);
    Session& s = *session;
    sessions_[id] = std::move(session);
    node_.spawn(node_.name() + ".session-" + std::to_string(id), [this, &s] { serve(s); }, sim::SpawnOptions{.daemon = true});
    reply.send(Reply{{}, id});
    return;
  }
  auto it = sessions_.find(message.session);
  if (it == sessions_.end() || it->second->closed) return;  // a closed connection: nobody answers
  it->second->inbox.put(Session::Job{std::move(message), std::move(reply)});
}

void Server::disconnect(std::uint64_t session) {
  auto it = sessions_.find(session);
  if (it == sessions_.end() || it->second->closed) return;
  // No one reads the reply to a close.
  ReplyTo<Reply> nobody(net_, node_.id(), node_.id(), sim::Promise<Reply>("db.close"));
  it->second->inbox.put(Session::Job{Message{.kind = Message::Kind::close, .session = session}, std::move(nobody)});
}

StatementTiming Server::service_time(const Statement& statement, bool autocommit, sim::Stream& stream) const {
  using K = Statement::Kind;
  StatementTiming t;
  switch (statement.kind) {
    case K::commit: t.before_commit = config_.commit_service.sample_duration(stream); return t;
    case K::begin:
    case K::rollback:
    case K::set_isolation:
    case K::set_timeout:
    case K::savepoint:
    case K::advisory: t.before = config_.read_service.sample_duration(stream); return t;
    case K::add_index:
    case K::drop_index:
      // The build's own time is the database's (DatabaseConfig::index_build_per_row); DDL
      // commits by itself, without a client's COMMIT.
      t.before = config_.write_service.sample_duration(stream);
      return t;
    case K::select:
      if (statement.lock == ReadLock::none) {
        t.before = config_.read_service.sample_duration(stream);
        return t;
      }
      break;
    default: break;
  }
  t.before = config_.write_service.sample_duration(stream);
  if (statement.kind == K::insert_if_absent) t.read_to_write = config_.row_service.sample_duration(stream);
  if (autocommit) t.before_commit = config_.commit_service.sample_duration(stream);
  return t;
}

void Server::serve(Session& session) {
  sim::Stream stream = node_.engine().stream(node_.name() + ".session-" + std::to_string(session.id));
  while (auto next = session.inbox.get_unless_killed()) {
    Session::Job& job = *next;
    if (job.message.kind == Message::Kind::close) {
      database_.close(session.db);
      session.closed = true;
      if (job.message.answer) job.reply.send(Reply{{}, session.id});
      return;
    }
    if (!job.message.who.empty()) {
      database_.set_origin(session.db, job.message.who);
      session.who = job.message.who;
    }
    const sim::Time start = sim::now();
    const Statement& statement = *job.message.statement;
    StatementTiming timing = service_time(statement, !database_.in_transaction(session.db), stream);
    timing.wall = node_.clock().now();
    Result result = database_.execute(session.db, statement, timing);
    if (logging_) {
      std::vector<Row> rows = std::move(result.rows);
      log_.push_back({start, sim::now(), session.who, statement, result, rows.size(), database_.locks(LoggedStatement::kLocksLogged)});
      result.rows = std::move(rows);
    }
    job.reply.send(Reply{std::move(result), session.id});
  }
}

SqlError::SqlError(Code code, const std::string& what, Engine engine) : std::runtime_error(what), code_(code), engine_(engine) {}

std::string SqlError::server_code() const {
  return engine_ == Engine::postgresql ? sqlstate(code_) : std::to_string(static_cast<int>(code_));
}

// --- Pool and connections ---------------------------------------------------

Pool::Pool(Network& net, Node& from, Server& server, PoolConfig config)
    : net_(net), from_(from), server_(server), config_(config), slots_(config.size) {
  if (config_.size == 0) throw sim::UsageError("models::db::Pool: size must be at least 1");
  for (std::size_t i = 0; i < slots_.size(); ++i) free_.push_back(i);
  from_.on_crash([this] {
    // The machine is gone: the server sees its connections reset.
    for (Slot& slot : slots_) {
      if (slot.session != 0) server_.disconnect(slot.session);
      slot.session = 0;
    }
    waiting_.clear();
    free_.clear();
    for (std::size_t i = 0; i < slots_.size(); ++i) free_.push_back(i);
  });
}

Connection Pool::acquire() {
  if (!free_.empty()) {
    const std::size_t slot = free_.front();
    free_.pop_front();
    return Connection(*this, slot);
  }
  sim::Promise<std::size_t> promise("db pool " + from_.name());
  sim::Future<std::size_t> slot = promise.get_future();
  auto gave_up = std::make_shared<bool>(false);
  waiting_.push_back(Waiter{std::move(promise), gave_up});
  try {
    return Connection(*this, slot.get_for(config_.acquire_timeout));
  } catch (const sim::Timeout&) {
    *gave_up = true;
    throw SqlError(Code::connection_timeout, "Connection is not available, request timed out after " +
                                                 sim::format_duration(config_.acquire_timeout));
  }
}

void Pool::give_back(std::size_t slot, bool close_it) {
  if (close_it) close(slot);
  while (!waiting_.empty()) {
    Waiter w = std::move(waiting_.front());
    waiting_.pop_front();
    if (*w.gave_up) continue;
    w.promise.set_value(slot);
    return;
  }
  free_.push_back(slot);
}

void Pool::close(std::size_t slot) {
  const std::uint64_t session = slots_[slot].session;
  if (session == 0) return;
  slots_[slot].session = 0;
  Server* server = &server_;
  net_.send(from_.id(), server_.node().id(), [server, session] { server->disconnect(session); });
}

void Pool::close_and_wait(std::size_t slot) {
  const std::uint64_t session = slots_[slot].session;
  if (session == 0) return;
  slots_[slot].session = 0;
  try {
    call(Message{.kind = Message::Kind::close, .session = session, .answer = true});
  } catch (const sim::Timeout&) {
    // Gone without an answer: the server closes it all the same.
  }
}

Reply Pool::call(Message message) {
  return call_server<Reply>(net_, from_.id(), server_, std::move(message), config_.statement_timeout);
}

Result Pool::run(std::size_t slot, const Statement& statement) {
  Slot& s = slots_[slot];
  try {
    if (s.session == 0)
      s.session = call(Message{.kind = Message::Kind::open, .who = s.who, .isolation = config_.isolation}).session;
    return call(Message{.kind = Message::Kind::statement,
                        .session = s.session,
                        .statement = std::make_shared<const Statement>(statement),
                        .who = s.who})
        .result;
  } catch (const sim::Timeout&) {
    close(slot);  // the statement may still run, and its transaction then rolls back
    return Result{.code = Code::connection_timeout};
  }
}

Connection::Connection(Connection&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)),
      slot_(other.slot_),
      in_transaction_(other.in_transaction_),
      lock_waits_(std::exchange(other.lock_waits_, nullptr)) {}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    give_back();
    pool_ = std::exchange(other.pool_, nullptr);
    slot_ = other.slot_;
    in_transaction_ = other.in_transaction_;
    lock_waits_ = std::exchange(other.lock_waits_, nullptr);
  }
  return *this;
}

Connection::~Connection() { give_back(); }

void Connection::give_back() {
  if (pool_ == nullptr) return;
  // A connection handed back inside a transaction is closed, so its transaction ends
  // (rolled back by the server) instead of passing to the next borrower.
  pool_->give_back(slot_, in_transaction_);
  pool_ = nullptr;
}

void Connection::set_origin(std::string who) { pool_->slots_[slot_].who = std::move(who); }

Engine Connection::engine() const { return pool_->server_.database().engine(); }

std::uint64_t Connection::session() const { return pool_->slots_[slot_].session; }

const Database& Connection::database() const { return pool_->server_.database(); }

void Connection::close() {
  if (pool_ == nullptr) throw sim::UsageError("models::db::Connection: used after it was given back");
  pool_->close_and_wait(slot_);
  in_transaction_ = false;
}

Result Connection::try_execute(const Statement& statement) {
  if (pool_ == nullptr) throw sim::UsageError("models::db::Connection: used after it was given back");
  Result r = pool_->run(slot_, statement);
  if (lock_waits_ != nullptr)
    for (const LockWait& w : r.waits) *lock_waits_ += w.waited;
  using K = Statement::Kind;
  if (statement.kind == K::begin) in_transaction_ = r.ok();
  if (statement.kind == K::commit || statement.kind == K::rollback || statement.kind == K::add_index ||
      statement.kind == K::drop_index || (r.undone == Undone::transaction && engine() == Engine::mariadb) ||
      r.code == Code::connection_timeout)  // PostgreSQL's deadlock leaves the block open, aborted; a user lock's, any
    in_transaction_ = false;
  return r;
}

Result Connection::execute(const Statement& statement) {
  Result r = try_execute(statement);
  if (!r.ok()) throw SqlError(r.code, r.message.empty() ? to_string(r.code) : r.message, engine());
  return r;
}

bool Connection::update_fenced(const std::string& table, Values set, Where where, const std::string& fence_column,
                               std::int64_t token) {
  set[fence_column] = Value{token};
  where.push_back(lt(fence_column, Value{token}));
  return update(table, std::move(set), std::move(where)) > 0;
}

}  // namespace models::db
