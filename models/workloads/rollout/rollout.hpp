#pragma once
// A rollout: a fix played out over time on a table that already holds duplicates, as the
// production case of sources/003 (sections 3.3 and 5.3) ends. A plan lists timed steps:
// deploy a strategy on the app servers (all at once, or one server at a time), start or
// stop the cleanup job, run a DDL statement (ALTER TABLE ... ADD UNIQUE INDEX, retried
// while it fails if the plan says so). The traffic goes on throughout; each request runs
// the code its app server has deployed when it arrives there, and one already running
// finishes on the code it began with.
//
// The cleanup job is the article's scheduled task, running on app-1 with connections of its
// own: every interval, one plain SELECT of the table, then for each of the first
// `keys_per_run` duplicated keys (in key order) a DELETE of every row of the key but the
// lowest id, each its own transaction, competing for locks with the traffic. Statements run
// from app-1 too, on a DBA's session whose client waits for one as long as the plan lasts.
//
// The plan's phases run from one step's time to the next; the rollout records where they
// begin, the duplicates in the table at each phase's end, every DDL statement and cleanup
// run (RolloutLog), and the rollout checker reads it.

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "models/workloads/rollout/log.hpp"
#include "models/db/sql.hpp"
#include "models/strategies/strategy.hpp"

namespace models::rollout {

/// Deploys a strategy of the registry: on every app server at once, or one server at a time
/// (app-1 first), `rolling` apart. With `drain`, each server is first taken out of the load
/// balancer for that long (the requests it runs finish on the old code, new ones go to the
/// others), then switched and put back; the next begins `rolling` after that.
struct Deploy {
  std::string strategy;
  strategies::Params params{};  // every parameter, defaults included
  sim::Duration rolling{};
  sim::Duration drain{};
};

struct Cleanup {
  sim::Duration interval = std::chrono::minutes(1);  // the article's job: every minute,
  std::uint64_t keys_per_run = 1000;                 // 1000 duplicated OpenIDs per run
};

/// Starts (with the plan's settings, or its own) or stops the cleanup job.
struct Job {
  bool start = true;
  std::optional<Cleanup> settings{};
};

/// Runs a statement (DDL, mostly); while it fails, again every `retry` (0: once) until the
/// plan's end.
struct Sql {
  db::sql::Prepared statement;
  sim::Duration retry{};
};

struct Step {
  sim::Duration at{};  // from the start of the trial
  std::variant<Deploy, Job, Sql> action;
  /// "deploy redis-token-cas-unlock (rolling, 10 s apart)", "start the cleanup job", the SQL.
  std::string text() const;
};

struct Plan {
  Deploy running{"check-then-insert"};  // on every server when the trial starts
  std::vector<Step> steps{};            // in time order
  sim::Duration duration{};             // the plan's end: its last phase ends here
  Cleanup cleanup{};
  db::TableSchema table = strategies::accounts_table(db::KeyIndex::non_unique);  // as it stands at the start
};

/// A phase of a plan: from one step's time to the next's, with the steps taken as it begins
/// (none for the first, unless a step is at 0); the last ends at the plan's end.
struct Phase {
  sim::Duration from{}, to{};
  std::vector<std::string> steps{};
};
std::vector<Phase> phases(const Plan& plan);

/// The distinct code a plan deploys, the running code first.
std::vector<Deploy> code_of(const Plan& plan);
/// What the world must hold for every code of the plan, with the plan's table.
strategies::Needs needs(const Plan& plan);

/// A plan as a strategy: it hands each request to the code its server runs, and plays the
/// plan's steps in processes of its own from the start of the trial.
class Rollout : public strategies::Strategy {
 public:
  Rollout(strategies::Env& env, std::shared_ptr<const Plan> plan);
  ~Rollout() override;
  Response handle(const Request& request, Worker& worker) override;
  /// Completes the record from the database once the trial is over.
  const RolloutLog& finish(const db::Database& database);
  std::uint64_t bytes_held() const override;  // every code it deploys

 protected:
  ErrorKind bind(const Request&, Worker&) override { return ErrorKind::internal; }  // handle() dispatches

 private:
  void drive();
  void apply(const Step& step);
  void run_job(Cleanup settings);
  void run_sql(const Sql& sql);
  std::size_t code_index(const Deploy& deploy) const;

  std::shared_ptr<const Plan> plan_;
  std::vector<Deploy> code_;
  std::vector<std::unique_ptr<strategies::Strategy>> strategies_;  // one per code_
  std::vector<std::size_t> deployed_;                              // per app server: its code
  std::unique_ptr<db::Pool> job_pool_, dba_pool_;                  // the job's and the DBA's sessions
  bool job_running_ = false;
  std::uint64_t job_generation_ = 0;  // a stopped job's process ends at its next wake-up
  RolloutLog log_;
};

}  // namespace models::rollout
