#include "models/workloads/sessions/sessions.hpp"

#include <algorithm>

namespace models::sessions {

std::vector<std::string> Script::sessions() const {
  std::vector<std::string> names;
  for (const Step& s : steps)
    if (std::find(names.begin(), names.end(), s.session) == names.end()) names.push_back(s.session);
  return names;
}

// A session: a connection of its own (a pool of one on its client node, kept for the whole
// script) and the steps issued to it, run one at a time.
struct Sessions::Session {
  Session(Network& net, Node& node, db::Server& server, const std::string& name)
      : node(node), pool(net, node, server, config()), inbox("session " + name), name(name) {}
  static db::PoolConfig config() {
    db::PoolConfig c;
    c.size = 1;
    // A terminal waits as long as the server makes it: lock waits end in 1205 or 1213. The
    // one connection is never waited for.
    c.statement_timeout = kNoTimeout;
    return c;
  }
  Node& node;
  db::Pool pool;
  sim::Mailbox<std::size_t> inbox;  // the steps issued to it, by index
  std::string name;
};

Sessions::Sessions(Network& net, std::vector<Node*> session_nodes, Node& driver_node, db::Server& server, Script script)
    : driver_node_(driver_node), server_(server), script_(std::move(script)), records_(script_.steps.size()) {
  const std::vector<std::string> names = script_.sessions();
  if (names.size() != session_nodes.size()) throw sim::UsageError("models::sessions: one node per session");
  for (std::size_t i = 0; i < names.size(); ++i)
    sessions_.push_back(std::make_unique<Session>(net, *session_nodes[i], server, names[i]));
  for (std::size_t i = 0; i < script_.steps.size(); ++i) {
    StepRecord& r = records_[i];
    r.step = i + 1;
    r.session = script_.steps[i].session;
    r.sql = script_.steps[i].disconnect ? std::string(kDisconnect) : script_.steps[i].sql.text;
    finished_.emplace_back("step " + std::to_string(i + 1));
    finished_futures_.push_back(finished_.back().get_future());
  }
}

Sessions::~Sessions() = default;

void Sessions::start() {
  for (auto& session : sessions_) {
    Session& s = *session;
    s.node.spawn(s.name, [this, &s] {
      db::Connection connection = s.pool.acquire();
      connection.set_origin(s.name);
      while (auto step = s.inbox.get_unless_killed()) {
        StepRecord& r = records_[*step];
        if (script_.steps[*step].disconnect) {
          connection.close();
          r.finished = sim::now();
          r.done = true;
          finished_[*step].set_value(true);
          continue;
        }
        const db::sql::Prepared& p = script_.steps[*step].sql;
        r.result = connection.try_execute(p.statement);
        r.finished = sim::now();
        r.done = true;
        // SELECT * (and RETURNING *): the table's columns in their CREATE TABLE order, as the
        // server returns them; RETURNING's own list.
        const std::vector<std::string>& returning = p.statement.more().returning;
        const bool star = (p.columns.empty() && !p.constant && p.statement.kind == db::Statement::Kind::select) ||
                          (returning.size() == 1 && returning[0] == "*");
        const std::vector<std::string> columns =
            star ? server_.database().columns(p.statement.table) : !returning.empty() ? returning : p.columns;
        r.columns = columns;
        if (p.constant) {  // SELECT 1: a row of the number for each row found, as MySQL returns it
          r.columns.push_back(std::to_string(*p.constant));
          for (std::size_t n = 0; n < r.result.rows.size(); ++n) r.rows.emplace_back().emplace_back(std::in_place_type<std::int64_t>, *p.constant);
        }
        for (const db::Row& row : r.result.rows) {
          if (p.constant) break;
          std::vector<db::Value> values;
          if (columns.empty()) {
            for (const auto& [column, value] : row.values) values.push_back(value);
          } else {
            for (const std::string& column : columns) {
              values.push_back(row.values.find(column).value_or(db::Value{std::int64_t{1}}));  // SELECT 1
            }
          }
          r.rows.push_back(std::move(values));
        }
        finished_[*step].set_value(true);
      }
    }, sim::SpawnOptions{.daemon = true});
  }
  driver_node_.spawn("script", [this] { drive(); });
}

void Sessions::drive() {
  const sim::Time start = sim::now();
  sim::Stream stream = driver_node_.engine().stream("sessions.script");
  for (std::size_t i = 0; i < script_.steps.size(); ++i) {
    const Step& step = script_.steps[i];
    if (step.at) {
      sim::sleep_until(std::max(sim::now(), start + step.at->sample_duration(stream)));
    } else if (i > 0) {
      finished_futures_[i - 1].try_get_for(script_.settle);  // finished, or blocked long enough
    }
    records_[i].issued = sim::now();
    records_[i].was_issued = true;
    for (auto& s : sessions_)
      if (s->name == step.session) s->inbox.put(i);
  }
}

std::vector<TableContents> contents(const db::Database& database, const std::vector<db::TableSchema>& tables) {
  std::vector<TableContents> out;
  for (const db::TableSchema& t : tables) {
    TableContents c{t.name, t.column_order, t.key_column, database.committed_rows(t.name)};
    if (c.columns.empty()) {
      c.columns.push_back("id");
      if (!t.key_column.empty()) c.columns.push_back(t.key_column);
      for (const auto& [column, value] : t.columns) c.columns.push_back(column);
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace models::sessions
