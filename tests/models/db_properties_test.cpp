// Generated transaction mixes against the InnoDB-like database (docs/sql.md, Locks and
// "What a statement returns"): with a unique index the committed table never holds two rows
// with one key, every statement succeeds or fails with an error a strategy catches (1062,
// 1213, 1205), and the deadlock detector and lock wait timeout always end the waits, so
// the run itself ends.

#include <catch2/catch.hpp>
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "models/db/server.hpp"
#include "support.hpp"

using namespace test;
namespace db = models::db;

namespace {

const std::string kTable = "accounts";

struct Step {
  enum class Kind { insert, select, update, remove } kind = Kind::select;
  std::string key;
  db::OnDuplicate on_duplicate = db::OnDuplicate::error;  // insert
  db::ReadLock lock = db::ReadLock::none;                 // select
  std::int64_t status = 0;                                // insert, update
  int gap_ms = 0;                                         // before it is sent
};

struct Session {
  int start_ms = 0;
  std::vector<Step> steps;
  int hold_ms = 0;  // before COMMIT or ROLLBACK: past the lock wait timeout, others get 1205
  bool commit = true;
};

struct Plan {
  std::uint64_t seed = 1;
  db::Isolation isolation = db::Isolation::repeatable_read;
  std::vector<Session> sessions;
};

const char* kind_name(Step::Kind kind) {
  switch (kind) {
    case Step::Kind::insert: return "INSERT";
    case Step::Kind::select: return "SELECT";
    case Step::Kind::update: return "UPDATE";
    case Step::Kind::remove: return "DELETE";
  }
  return "?";
}

// Shown by RapidCheck when the property fails.
void showValue(const Plan& plan, std::ostream& os) {
  os << "seed " << plan.seed << ", " << db::to_string(plan.isolation) << "\n";
  for (std::size_t i = 0; i < plan.sessions.size(); ++i) {
    const Session& s = plan.sessions[i];
    os << "  session " << i << " at " << s.start_ms << " ms: BEGIN;";
    for (const Step& step : s.steps) {
      os << " +" << step.gap_ms << " ms " << kind_name(step.kind) << " " << step.key;
      if (step.kind == Step::Kind::insert) os << " on_duplicate=" << static_cast<int>(step.on_duplicate);
      if (step.kind == Step::Kind::select) os << " lock=" << static_cast<int>(step.lock);
      if (step.kind == Step::Kind::insert || step.kind == Step::Kind::update) os << " status=" << step.status;
      os << ";";
    }
    os << " +" << s.hold_ms << " ms" << (s.commit ? " COMMIT" : " ROLLBACK") << "\n";
  }
}

Step gen_step() {
  Step step;
  step.kind = *rc::gen::element(Step::Kind::insert, Step::Kind::insert, Step::Kind::select, Step::Kind::update,
                                Step::Kind::remove);
  step.key = *rc::gen::element<std::string>("k1", "k2", "k3");
  step.on_duplicate =
      *rc::gen::element(db::OnDuplicate::error, db::OnDuplicate::ignore, db::OnDuplicate::update, db::OnDuplicate::replace);
  step.lock = *rc::gen::element(db::ReadLock::none, db::ReadLock::share, db::ReadLock::update);
  step.status = *rc::gen::inRange<std::int64_t>(0, 3);
  step.gap_ms = *rc::gen::inRange(0, 10);
  return step;
}

Session gen_session() {
  Session s;
  s.start_ms = *rc::gen::inRange(0, 30);
  s.steps = *rc::gen::resize(4, rc::gen::nonEmpty(rc::gen::container<std::vector<Step>>(rc::gen::exec(gen_step))));
  if (s.steps.size() > 4) s.steps.resize(4);
  s.hold_ms = *rc::gen::element(0, 0, 0, 1500);
  s.commit = *rc::gen::arbitrary<bool>();
  return s;
}

Plan gen_plan() {
  Plan plan;
  plan.seed = *rc::gen::inRange<std::uint64_t>(1, 1'000'000);
  plan.isolation = *rc::gen::element(db::Isolation::read_committed, db::Isolation::repeatable_read);
  const int sessions = *rc::gen::inRange(2, 5);
  for (int i = 0; i < sessions; ++i) plan.sessions.push_back(*rc::gen::exec(gen_session));
  return plan;
}

bool caught_by_strategies(db::Code code) {
  return code == db::Code::duplicate_key || code == db::Code::deadlock || code == db::Code::lock_wait_timeout;
}

// Runs one statement of a session's transaction; throws SqlError as the connection does.
void run_step(db::Connection& c, const Step& step) {
  const db::Where where{db::eq("open_id", step.key)};
  switch (step.kind) {
    case Step::Kind::insert:
      c.insert(kTable, {{"open_id", step.key}, {"status", step.status}}, step.on_duplicate, {{"status", step.status}});
      break;
    case Step::Kind::select: c.select(kTable, where, step.lock); break;
    case Step::Kind::update: c.update(kTable, {{"status", step.status}}, where); break;
    case Step::Kind::remove: c.remove(kTable, where); break;
  }
}

struct Outcome {
  std::string failure;  // what ended the run if it was not ok, or a process's exception
  std::vector<std::string> unexpected;  // errors no strategy expects, as "session 1: 1205 on step 2"
  std::map<std::string, int> rows_per_key;
  std::map<db::Code, int> errors;
};

Outcome run(const Plan& plan) {
  Outcome out;
  sim::Engine engine(config(plan.seed));
  models::Network net(engine, {sim::fixed(1ms), 0});
  models::Node node(engine, {"db-1", {}});
  db::Server server(net, node, {.database = {.lock_wait_timeout = 1s}, .isolation = plan.isolation});
  server.create_table({.name = kTable,
                       .key_column = "open_id",
                       .key_index = db::KeyIndex::unique,
                       .columns = {{"status", std::int64_t{0}}}});
  std::vector<std::unique_ptr<models::Node>> apps;
  std::vector<std::unique_ptr<db::Pool>> pools;
  for (std::size_t i = 0; i < plan.sessions.size(); ++i) {
    apps.push_back(std::make_unique<models::Node>(engine, models::NodeConfig{"app-" + std::to_string(i + 1), {}}));
    pools.push_back(std::make_unique<db::Pool>(net, *apps.back(), server));
    apps.back()->spawn("session-" + std::to_string(i), [&, i] {
      const Session& s = plan.sessions[i];
      sim::sleep_for(std::chrono::milliseconds(s.start_ms));
      auto c = pools[i]->acquire();
      c.set_origin("session " + std::to_string(i));
      c.begin();
      bool open = true;
      for (std::size_t n = 0; n < s.steps.size() && open; ++n) {
        sim::sleep_for(std::chrono::milliseconds(s.steps[n].gap_ms));
        try {
          run_step(c, s.steps[n]);
        } catch (const db::SqlError& e) {
          ++out.errors[e.code()];
          if (!caught_by_strategies(e.code()))
            out.unexpected.push_back("session " + std::to_string(i) + ": " + db::to_string(e.code()) + " on step " +
                                     std::to_string(n));
          if (e.code() == db::Code::deadlock) open = false;  // 1213 rolled back the whole transaction
        }
      }
      if (!open) return;
      sim::sleep_for(std::chrono::milliseconds(s.hold_ms));
      try {
        if (s.commit) c.commit();
        else c.rollback();
      } catch (const db::SqlError& e) {
        out.unexpected.push_back("session " + std::to_string(i) + ": " + db::to_string(e.code()) + " at the end");
      }
    });
  }
  try {
    const sim::RunResult result = engine.run();
    if (!result.ok()) out.failure = result.liveness_report();
  } catch (const std::exception& e) {
    out.failure = e.what();
  }
  // Processes still alive use the pools: unwind them before anything is destroyed.
  engine.shutdown();
  for (const auto& record : server.database().committed_rows(kTable))
    ++out.rows_per_key[std::get<std::string>(record.row.values.at("open_id"))];
  return out;
}

}  // namespace

TEST_CASE("random transaction mixes on a unique key never commit two rows with one key and always end", "[db]") {
  rc::prop("no duplicate key, only 1062 / 1213 / 1205 errors, and the run ends", [] {
    const Plan plan = *rc::gen::exec(gen_plan);
    const Outcome out = run(plan);
    RC_LOG() << out.failure << "\n";
    RC_ASSERT(out.failure.empty());
    for (const auto& line : out.unexpected) RC_LOG() << line << "\n";
    RC_ASSERT(out.unexpected.empty());
    for (const auto& [key, count] : out.rows_per_key) {
      RC_LOG() << key << ": " << count << " committed rows\n";
      RC_ASSERT(count <= 1);
    }
    RC_TAG(db::to_string(plan.isolation));
    for (const auto& [code, count] : out.errors) RC_CLASSIFY(count > 0, db::to_string(code));
  });
}
