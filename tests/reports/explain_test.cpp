// A trial told and drawn from its Timeline: the paragraphs say why each violation happened,
// the sequence diagram has the lanes and marks of what went wrong, and report.html stands
// alone.

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <fstream>
#include <sstream>

#include "app/runner.hpp"
#include "app/scenario.hpp"
#include "reports/explain.hpp"
#include "reports/report.hpp"
#include "support.hpp"

namespace {

using locksim::reports::Timeline;

// The GC-pause story: app-1 takes the lock, pauses past its lease, app-2 takes the lock and
// inserts, app-1 wakes and inserts again.
Timeline paused_holder() {
  Timeline t;
  t.end_s = 50;
  t.bars.push_back({"lock:k  app-1 worker 4, op 0", 0.01, 45.02, 3.01});
  t.bars.push_back({"lock:k  app-2 worker 1, op 1", 40.0, 40.05, 43.0});
  t.bands.push_back({"app-1", 0.02, 45.0, "paused"});
  t.inserts.push_back({"row 1 by app-2 worker 1, client 0, op 1 attempt 1", 40.03});
  t.inserts.push_back({"row 2 by app-1 worker 4, client 0, op 0 attempt 1", 45.01});
  return t;
}

// The files write_report() writes for `results`, read back by name (the folder is removed).
std::map<std::string, std::string> report_files(const locksim::reports::RunResults& results,
                                                std::initializer_list<const char*> names) {
  const auto folder = test::unique_temp_path("locksim-report");
  locksim::reports::write_report(results, folder.string());
  std::map<std::string, std::string> out;
  for (const char* name : names) {
    std::ifstream in(folder / name);
    std::stringstream text;
    text << in.rdbuf();
    out[name] = text.str();
  }
  std::filesystem::remove_all(folder);
  return out;
}

std::string joined(const std::vector<std::string>& paragraphs) {
  std::string out;
  for (const auto& p : paragraphs) out += p + "\n";
  return out;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a duplicate after a pause is explained by the lease that ran out in it and the holder that came next") {
  const std::string why = joined(locksim::reports::explain(paused_holder(), {"duplicate_rows 1", "lease_expiry_violations 1"}));
  CHECK(why.find("One key was inserted more than once") != std::string::npos);
  CHECK(why.find("app-1 worker 4 inserted believing it held lock:k, but its lease had run out at t=3.010 s") != std::string::npos);
  CHECK(why.find("paused from t=0.020 s to t=45.000 s") != std::string::npos);
  CHECK(why.find("granted the lock again: to app-2 worker 1 at t=40.000 s") != std::string::npos);
  CHECK(why.find("app-2 worker 1 held lock:k when it inserted") != std::string::npos);
}

TEST_CASE("a deadlock is explained by its cycle, its victim and what was rolled back") {
  Timeline t;
  Timeline::Statement st{0.01, 0.011, "s2", "INSERT INTO t (k) VALUES ('a')", "1213 Deadlock found", {}, {"s3"}, {"s2", "s3"},
                         "transaction (1 row change)"};
  t.statements.push_back(st);
  const std::string why = joined(locksim::reports::explain(t, {"deadlocks 1"}));
  CHECK(why.find("s2 and s3 each held a lock") != std::string::npos);
  CHECK(why.find("chose s2 as the victim") != std::string::npos);
  CHECK(why.find("rolling back its transaction (1 row change)") != std::string::npos);
  CHECK(why.find("The checker") == std::string::npos);  // told, not listed
}

TEST_CASE("a checker the timeline does not show gets a sentence with its meaning") {
  const std::string why = joined(locksim::reports::explain(Timeline{}, {"stale_writes_accepted 1"},
                                                           {{"stale_writes_accepted", "writes accepted from a stale holder"}}));
  CHECK(why == "The checker stale_writes_accepted fired (1): writes accepted from a stale holder.\n");
}

TEST_CASE("the sequence diagram has a lane per participant, the duplicate inserts and the pause") {
  const std::string svg = locksim::reports::sequence_svg(paused_holder(), "one trial");
  CHECK(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  CHECK(svg.find(">app-1 worker 4</text>") != std::string::npos);
  CHECK(svg.find(">app-2 worker 1</text>") != std::string::npos);
  CHECK(count(svg, "DUPLICATE: row") == 2);
  CHECK(svg.find("lease ran out: lock:k") != std::string::npos);
  CHECK(svg.find("app-1 paused") != std::string::npos);
  CHECK(svg.find("<script") == std::string::npos);
}

TEST_CASE("the sequence diagram keeps the lanes involved in a violation and says what it folded") {
  Timeline t = paused_holder();
  for (int i = 0; i < 12; ++i) t.bars.push_back({"lock:other  app-3 worker " + std::to_string(i), 1.0 + i, 1.5 + i, -1});
  const std::string svg = locksim::reports::sequence_svg(t, "one trial", 4, 30);
  CHECK(svg.find(">app-1 worker 4</text>") != std::string::npos);  // the inserters stay
  CHECK(svg.find(">app-2 worker 1</text>") != std::string::npos);
  CHECK(svg.find("10 more lanes folded") != std::string::npos);
}

TEST_CASE("report.html stands alone and explains each failing strategy's first violating trial") {
  auto s = locksim::load_scenario(locksim::scenario_path("gc-pause-longer-than-lease"));
  s.trials = 3;
  const auto results = locksim::run_scenario(s, {.jobs = 1, .draw_first_violation = true});
  const std::string html = report_files(results, {"report.html"})["report.html"];
  CHECK(html.starts_with("<!DOCTYPE html>"));
  CHECK(html.find(results.lesson.substr(0, 40)) != std::string::npos);
  // Nothing from elsewhere: no script, stylesheet, image or frame; the only address is SVG's namespace.
  for (const char* outside : {"<script", "<link", "<img", "<iframe", "src=", "https:", "@import", "url("}) CHECK(html.find(outside) == std::string::npos);
  std::size_t failing = 0;
  for (const auto& st : results.strategies) {
    if (!st.first_violation) continue;
    ++failing;
    CHECK(html.find(st.name + ": its first violating trial, seed") != std::string::npos);
  }
  CHECK(failing >= 4);
  CHECK(count(html, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"sequence\"") == failing);
}

namespace {

// del-removes-another-lock's first trial of the plain DEL strategy: app-1 wakes from its pause
// at 5.9 s and DELs the key, which is app-2's lock by then.
const locksim::reports::StrategyResult& del_strategy(const locksim::reports::RunResults& results) {
  for (const auto& st : results.strategies)
    if (st.name == "redis-set-nx-ex-drop") return st;
  FAIL("no redis-set-nx-ex-drop in del-removes-another-lock");
  return results.strategies.front();
}

const Timeline::Bar* deleted_bar(const Timeline& t) {
  for (const auto& b : t.bars)
    if (!b.deleted_by.empty()) return &b;
  return nullptr;
}

}  // namespace

TEST_CASE("a DEL that removed another holder's lock ends that holder's lease at the DEL, not at its TTL, and is marked") {
  auto s = locksim::load_scenario(locksim::scenario_path("del-removes-another-lock"));
  s.trials = 1;
  const auto results = locksim::run_scenario(s, {.jobs = 1});
  const Timeline& t = del_strategy(results).timeline;
  const Timeline::Bar* robbed = deleted_bar(t);
  REQUIRE(robbed != nullptr);
  CHECK(robbed->row.find("app-2") != std::string::npos);
  CHECK(robbed->deleted_by.starts_with("app-1"));
  CHECK(robbed->service_to_s == Approx(5.9).margin(0.05));  // app-1's DEL, not the nominal 10.6 s
  CHECK(robbed->lease_to_s == robbed->service_to_s);
  CHECK(robbed->ended.find("(wrong unlock)") != std::string::npos);
  bool unlocker_marked = false;
  for (const auto& b : t.bars) unlocker_marked = unlocker_marked || (b.removed.starts_with("app-2") && b.row.find("app-1") != std::string::npos);
  CHECK(unlocker_marked);

  const std::string story = joined(locksim::reports::narrate(t));
  CHECK(story.find("DEL lock:openid:0 removed app-2") != std::string::npos);
  CHECK(story.find("SET lock:openid:0 NX granted") != std::string::npos);
  const std::string why = joined(locksim::reports::explain(t, {"wrong_unlocks 1"}));
  CHECK(why.find("'s DEL at t=5.9") != std::string::npos);
  CHECK(why.find("removed app-2") != std::string::npos);
  CHECK(why.find("a wrong unlock") != std::string::npos);
}

TEST_CASE("report.html's sequence diagram marks the wrong unlock and ends the robbed hold at the DEL") {
  auto s = locksim::load_scenario(locksim::scenario_path("del-removes-another-lock"));
  s.trials = 2;
  const auto results = locksim::run_scenario(s, {.jobs = 1, .draw_first_violation = true});
  auto files = report_files(results, {"report.html", "timeline-redis-set-nx-ex-drop.dat"});
  const std::string& html = files["report.html"];
  CHECK(html.find("WRONG UNLOCK: DEL lock:openid:0") != std::string::npos);
  CHECK(html.find("removed the lock of app-2") != std::string::npos);
  CHECK(html.find("held after its lock was deleted by app-1") != std::string::npos);
  CHECK(files["timeline-redis-set-nx-ex-drop.dat"].find("# wrong unlocks") != std::string::npos);
}

TEST_CASE("a lock released before its holder's COMMIT is drawn with the commit after the hold's end") {
  auto s = locksim::load_scenario(locksim::scenario_path("lock-released-before-commit"));
  s.trials = 1;
  const auto results = locksim::run_scenario(s, {.jobs = 1});
  const std::string text = report_files(results, {"timeline-redis-retry-lock.dat"})["timeline-redis-retry-lock.dat"];
  const auto commits = text.find("# commits");
  REQUIRE(commits != std::string::npos);
  std::istringstream rows(text.substr(text.find('\n', commits) + 1));
  double at = -1;
  std::size_t row = 0;
  REQUIRE(rows >> at >> row);
  const Timeline::Bar& hold = results.strategies.front().timeline.bars.at(row);
  CHECK(at > hold.to_s);  // the lesson: the lock went before the transaction committed
  CHECK(hold.ended == "released");
}
