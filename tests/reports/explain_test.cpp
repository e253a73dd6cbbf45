// A trial told and drawn from its Timeline: the paragraphs say why each violation happened,
// the sequence diagram has the lanes and marks of what went wrong, and report.html stands
// alone.

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <fstream>
#include <sstream>

#include "app/runner.hpp"
#include "app/scenario.hpp"
#include "reports/explain.hpp"
#include "reports/report.hpp"
#include "reports/timeline_parts.hpp"
#include "support.hpp"

namespace {

using locksim::reports::Timeline;

// The GC-pause story: app-1 takes the lock, pauses past its lease, app-2 takes the lock and
// inserts, app-1 wakes and inserts again.
Timeline paused_holder() {
  Timeline t;
  t.end_s = 50;
  t.bars.push_back({"lock:k", test::who("app-1 worker 4, client 0, op 0 attempt 1"), 0.01, 45.02, 3.01});
  t.bars.push_back({"lock:k", test::who("app-2 worker 1, client 0, op 1 attempt 1"), 40.0, 40.05, 43.0});
  t.bands.push_back({"app-1", 0.02, 45.0, "paused"});
  t.inserts.push_back({1, test::who("app-2 worker 1, client 0, op 1 attempt 1"), 40.03, "k", true});
  t.inserts.push_back({2, test::who("app-1 worker 4, client 0, op 0 attempt 1"), 45.01, "k"});
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
  auto st = test::refused(0.01, 0.011, "s2", "INSERT INTO t (k) VALUES ('a')", 1213, "1213 Deadlock found");
  st.waited_for = {test::who("s3")};
  st.cycle = {test::who("s2"), test::who("s3")};
  st.undone = "transaction";
  st.undone_rows = 1;
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
  CHECK(count(svg, "DUPLICATE: row") == 1);  // the second row; the key's first is an insert like any
  CHECK(svg.find("DUPLICATE: row 2 by app-1") != std::string::npos);
  CHECK(svg.find("INSERT: row 1 by app-2") != std::string::npos);
  CHECK(svg.find("lease ran out: lock:k") != std::string::npos);
  CHECK(svg.find("app-1 paused") != std::string::npos);
  CHECK(svg.find("<script") == std::string::npos);
}

TEST_CASE("the sequence diagram keeps the lanes involved in a violation and says what it folded") {
  Timeline t = paused_holder();
  for (int i = 0; i < 12; ++i)
    t.bars.push_back({"lock:other", test::who(fmt::format("app-3 worker {}, client {}, op {} attempt 1", i + 1, 10 + i, 10 + i)), 1.0 + i,
                      1.5 + i, -1});
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
  // One diagram each, in one picture or in parts (each part after the first uses the first's drawing).
  CHECK(count(html, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"sequence\"") - count(html, "<use href=\"#sequence-") == failing);
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
  CHECK(robbed->holder.node == "app-2");
  CHECK(robbed->deleted_by.node == "app-1");
  CHECK(robbed->service_to_s == Approx(5.9).margin(0.05));  // app-1's DEL, not the nominal 10.6 s
  CHECK(robbed->lease_to_s == robbed->service_to_s);
  CHECK(robbed->end == Timeline::End::deleted);
  CHECK(locksim::reports::ended_words(*robbed).find("(wrong unlock)") != std::string::npos);
  bool unlocker_marked = false;
  for (const auto& b : t.bars) unlocker_marked = unlocker_marked || (b.removed.node == "app-2" && b.holder.node == "app-1");
  CHECK(unlocker_marked);

  // The commands on the wire: app-1's late DEL found a lock to delete, app-2's later one none.
  std::vector<std::string> dels;
  for (const auto& m : t.messages)
    if (m.request == "DEL lock:openid:0") dels.push_back(m.from.lane + " " + m.reply);
  REQUIRE(!dels.empty());
  CHECK(dels.front() == "app-1 worker 4 (integer) 1");
  CHECK(std::find(dels.begin(), dels.end(), "app-2 worker 4 (integer) 0") != dels.end());

  const std::string story = joined(locksim::reports::narrate(t));
  CHECK(story.find("app-1 worker 4 -> redis-1: DEL lock:openid:0 -> (integer) 1") != std::string::npos);
  CHECK(story.find("DEL of lock:openid:0 removed app-2") != std::string::npos);
  CHECK(story.find("DEL of lock:openid:0 removed the lock of app-2 worker 4") != std::string::npos);
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
  CHECK(hold.end == Timeline::End::released);
}

namespace {

// A client's retry: attempt 1 waits in app-1's queue past the client's 0.3 s timeout, the
// client sends attempt 2, and both attempts insert.
Timeline retried_request() {
  Timeline t;
  t.end_s = 1;
  t.messages.push_back({test::client(7), test::worker("app-1", 2), "op 7 attempt 1 (key 7)", "ok", 0.1, 0.101, 0.5, 0.8, 0.801, 0.4, 7, 1});
  t.messages.push_back({test::client(7), test::worker("app-1", 3), "op 7 attempt 2 (key 7)", "ok", 0.45, 0.451, 0.46, 0.9, 0.901, -1, 7, 2});
  t.inserts.push_back({1, test::who("app-1 worker 2, client 7, op 7 attempt 1"), 0.7, "k"});
  t.inserts.push_back({2, test::who("app-1 worker 3, client 7, op 7 attempt 2"), 0.85, "k"});
  return t;
}

}  // namespace

TEST_CASE("a duplicate from a retry is explained by the attempt the client gave up on while a worker still worked on it") {
  const Timeline t = retried_request();
  const std::string why = joined(locksim::reports::explain(t, {"duplicate_rows 1"}));
  CHECK(why.find("client 7 sent op 7 2 times") != std::string::npos);
  CHECK(why.find("attempt 1 at t=0.100 s, taken up by app-1 worker 2 at t=0.500 s") != std::string::npos);
  CHECK(why.find("gave up on it at t=0.400 s, while app-1 worker 2 still worked on it") != std::string::npos);
  CHECK(why.find("attempt 2 at t=0.450 s, taken up by app-1 worker 3 at t=0.460 s") != std::string::npos);

  const std::string story = joined(locksim::reports::narrate(t));
  CHECK(story.find("t=0.400 s  client 7: no answer to op 7 attempt 1 (key 7) in 0.300 s") != std::string::npos);
  CHECK(story.find("t=0.500 s  app-1 worker 2 takes up op 7 attempt 1 (key 7) from client 7 (0.400 s after it was sent)") !=
        std::string::npos);
  CHECK(story.find("t=0.800 s  app-1 worker 2 answers op 7 attempt 1 (key 7): ok, but client 7 is no longer waiting") !=
        std::string::npos);
}

TEST_CASE("the sequence diagram draws attempts and answers as arrows, and the client's timeout as a band") {
  const std::string svg = locksim::reports::sequence_svg(retried_request(), "one trial");
  CHECK(svg.find(">client 7</text>") < svg.find(">app-1 worker 2</text>"));  // the client's lane comes first
  CHECK(svg.find("<title>client 7 -&gt; app-1 worker 2: op 7 attempt 1 (key 7)</title></line>") != std::string::npos);
  CHECK(svg.find("<title>app-1 worker 2 -&gt; client 7: ok</title></line>") != std::string::npos);
  CHECK(svg.find("fill=\"#f6d9a8\" fill-opacity=\"0.5\"><title>client 7: no answer to op 7 attempt 1 (key 7) in 0.300 s</title>") !=
        std::string::npos);
  CHECK(svg.find(">timed out after 0.300 s</text>") != std::string::npos);
  CHECK(svg.find(">too late, unread: ok</text>") != std::string::npos);
}

TEST_CASE("a refused SET NX is told as refused, and a retry loop once with how many times it went round") {
  Timeline t;
  t.end_s = 1;
  for (int i = 0; i < 5; ++i)
    t.messages.push_back({test::worker("app-1", 1), test::node("redis-1"), "SET lock:k app-1-0-3-1 NX PX 5000", "(nil)", 0.1 * i,
                          0.1 * i + 0.0002, -1, 0.1 * i + 0.0003, 0.1 * i + 0.0005, -1});
  t.messages.push_back(
      {test::worker("app-1", 1), test::node("redis-1"), "SET lock:k app-1-0-3-1 NX PX 5000", "OK", 0.5, 0.5002, -1, 0.5003, 0.5005, -1});
  const std::string story = joined(locksim::reports::narrate(t));
  CHECK(story.find("t=0.000 s  app-1 worker 1 -> redis-1: SET lock:k app-1-0-3-1 NX PX 5000 -> (nil): refused, another holds the key (5 "
                   "times in all, the last at t=0.400 s)") != std::string::npos);
  CHECK(story.find("t=0.500 s  app-1 worker 1 -> redis-1: SET lock:k app-1-0-3-1 NX PX 5000 -> OK") != std::string::npos);
  const std::string svg = locksim::reports::sequence_svg(t, "one trial");
  CHECK(svg.find("-&gt; (nil) (x5)</tspan></text>") != std::string::npos);  // one row, there and back, its words wrapped
  CHECK(count(svg, "<title>app-1 worker 1 -&gt; redis-1: SET lock:k app-1-0-3-1 NX PX 5000 (x5)</title></line>") == 1);
  CHECK(count(svg, "<title>app-1 worker 1 -&gt; redis-1: SET lock:k app-1-0-3-1 NX PX 5000</title></line>") == 1);
}

TEST_CASE("a ZooKeeper lock node gone with its session ends the hold's lease where the session expired, and is told so") {
  auto s = locksim::load_scenario(locksim::scenario_path("zk-session-expiry-during-pause"));
  s.trials = 1;
  s.strategies.erase(s.strategies.begin() + 1, s.strategies.end());  // zookeeper-recipe alone
  const auto results = locksim::run_scenario(s, {.jobs = 1});
  const Timeline& t = results.strategies.front().timeline;
  const Timeline::Bar* lost = nullptr;
  for (const auto& b : t.bars)
    if (locksim::reports::ended_words(b).starts_with("session expired at t=")) lost = &b;
  REQUIRE(lost != nullptr);
  CHECK(lost->service == "zookeeper");
  CHECK(lost->from_s < lost->service_to_s);
  CHECK(lost->service_to_s < lost->to_s);  // the holder let go later, when it woke
  CHECK(lost->lease_to_s == lost->service_to_s);
  // The holder's node pinged for its session once it woke, and heard it was gone.
  bool told_expired = false;
  for (const auto& m : t.messages)
    told_expired = told_expired || (m.from.lane.ends_with("zk-ping") && m.request == "ping" && m.reply == "SessionExpired" && m.sent_s > lost->service_to_s);
  CHECK(told_expired);
  const std::string why = joined(locksim::reports::explain(t, {"lease_expiry_violations 1"}));
  CHECK(why.find(fmt::format("ZooKeeper session expired at t={:.3f} s, and its lock node under /locks/openid:0 went with it",
                             lost->service_to_s)) != std::string::npos);
}

TEST_CASE("report.html, its calls and diagrams included, is the same bytes for a seed whether one thread or two ran it") {
  auto s = locksim::load_scenario(locksim::scenario_path("del-removes-another-lock"));
  s.trials = 4;
  const auto one = report_files(locksim::run_scenario(s, {.jobs = 1, .draw_first_violation = true}), {"report.html"});
  const auto two = report_files(locksim::run_scenario(s, {.jobs = 2, .draw_first_violation = true}), {"report.html"});
  REQUIRE(one.at("report.html").find(" -&gt; redis-1: SET lock:openid:0") != std::string::npos);
  CHECK(one.at("report.html") == two.at("report.html"));
}

TEST_CASE("an attempt no worker took up is told as received, and its retry story does not say it went on") {
  Timeline t;
  t.end_s = 1;
  // attempt 1 reached app-1, whose queue was full: rejected at once; attempt 2 was taken up and inserted twice over
  t.messages.push_back({test::client(3), test::node("app-1"), "op 3 attempt 1 (key 3)", "rejected", 0.1, 0.101, -1, 0.101, 0.102, -1, 3, 1});
  t.messages.push_back({test::client(3), test::worker("app-1", 1), "op 3 attempt 2 (key 3)", "ok", 0.2, 0.201, 0.201, 0.3, 0.301, -1, 3, 2});
  t.inserts.push_back({1, test::who("app-1 worker 1, client 3, op 3 attempt 2"), 0.25, "k"});
  t.inserts.push_back({2, test::who("app-2 worker 1, client 9, op 9 attempt 1"), 0.26, "k"});
  const std::string story = joined(locksim::reports::narrate(t));
  CHECK(story.find("app-1 receives op 3 attempt 1 (key 3) from client 3; no worker takes it up") != std::string::npos);
  CHECK(story.find("app-1 takes up op 3 attempt 1") == std::string::npos);
  const std::string why = joined(locksim::reports::explain(t, {"duplicate_rows 1"}));
  CHECK(why.find("client 3 sent op 3 2 times: attempt 1 at t=0.100 s, answered rejected; attempt 2 at t=0.200 s, taken up by app-1 "
                 "worker 1 at t=0.201 s.") != std::string::npos);
  CHECK(why.find("went on beside its retry") == std::string::npos);
}

TEST_CASE("a trial's story passes who and what as data: the deadlock's statement, its cycle and its waits name their operations") {
  auto s = locksim::load_scenario(locksim::scenario_path("select-for-update-deadlock"));
  s.trials = 1;
  s.strategies.erase(s.strategies.begin() + 1, s.strategies.end());  // select-for-update alone
  const auto results = locksim::run_scenario(s, {.jobs = 1, .draw_first_violation = true});
  const Timeline& t = results.strategies.front().timeline;
  const Timeline::Statement* victim = nullptr;
  for (const auto& st : t.statements)
    if (!st.cycle.empty()) victim = &st;
  REQUIRE(victim != nullptr);
  CHECK(victim->error == 1213);
  CHECK(locksim::reports::failed(*victim));
  CHECK(locksim::reports::outcome_words(*victim).starts_with("1213 Deadlock found"));
  CHECK(victim->undone == "transaction");
  CHECK(victim->cycle.front() == victim->who);  // the victim first
  for (const auto& who : victim->cycle) {
    CHECK(who.node.starts_with("app-"));
    CHECK(who.worker > 0);
    CHECK(who.operation >= 0);
    CHECK(who.lane == fmt::format("{} worker {}", who.node, who.worker));
  }
  REQUIRE_FALSE(victim->waits.empty());
  CHECK(victim->waits.front().mode.find("insert intention") != std::string::npos);
  CHECK(victim->waits.front().behind.size() == 1);
  // The statements that succeeded say what they came to in their own fields.
  bool selected = false;
  for (const auto& st : t.statements)
    if (st.kind == Timeline::Statement::Kind::select && !locksim::reports::failed(st)) {
      selected = true;
      CHECK(locksim::reports::outcome_words(st) == fmt::format("{} row{}", st.rows, st.rows == 1 ? "" : "s"));
    }
  CHECK(selected);
}

TEST_CASE("the first insert of a key is told as its first row, and only the later ones as duplicates") {
  auto s = locksim::load_scenario(locksim::scenario_path("gc-pause-longer-than-lease"));
  s.trials = 1;
  const auto results = locksim::run_scenario(s, {.jobs = 1});
  bool told = false;
  for (const auto& st : results.strategies) {
    const Timeline& t = st.timeline;
    if (t.inserts.empty()) continue;
    told = true;
    std::map<std::string, int> firsts;
    std::size_t duplicates = 0;
    for (const auto& m : t.inserts) {
      firsts[m.key] += m.first ? 1 : 0;
      duplicates += m.first ? 0 : 1;
    }
    for (const auto& [key, n] : firsts) CHECK(n <= 1);
    CHECK(static_cast<double>(duplicates) == st.counts.at("duplicate_rows").total);
    const std::string story = joined(locksim::reports::narrate(t));
    CHECK(count(story, "(a duplicated key)") == duplicates);
    CHECK(count(locksim::reports::sequence_svg(t, "one trial"), "DUPLICATE: row") == duplicates);
  }
  CHECK(told);
}

TEST_CASE("a hold its holder released with compare-and-delete ends its lease at the release, not at its TTL") {
  auto s = locksim::load_scenario(locksim::scenario_path("del-removes-another-lock"));
  s.trials = 1;
  const auto results = locksim::run_scenario(s, {.jobs = 1});
  const locksim::reports::StrategyResult* cas = nullptr;
  for (const auto& st : results.strategies)
    if (st.name == "redis-token-cas-unlock") cas = &st;
  REQUIRE(cas != nullptr);
  std::size_t released = 0;
  for (const auto& b : cas->timeline.bars) {
    if (b.end != Timeline::End::released || b.lease_to_s < 0) continue;
    ++released;
    CHECK(b.lease_to_s <= b.to_s + 1e-9);
    CHECK(b.service_to_s < 0);
  }
  CHECK(released > 0);
}

TEST_CASE("a statement sent before its node paused is told as the database's work, not the paused node's") {
  Timeline t;
  t.end_s = 50;
  t.bands.push_back({"app-1", 0.0106, 45.0106, "paused"});
  t.statements.push_back(test::selected(0.0109, 0.0119, "app-1 worker 1, client 0, op 0 attempt 1", "SELECT id FROM t_account", 0));
  std::size_t told = 0;
  for (const auto& line : locksim::reports::narrate(t)) {
    if (line.find("SELECT id FROM t_account") == std::string::npos) continue;
    ++told;
    CHECK(line.find("  app-1 worker 1") == std::string::npos);
    CHECK(line.find("the database runs SELECT id FROM t_account for app-1 worker 1") != std::string::npos);
    CHECK(line.find("sent before its node was paused -> 0 rows") != std::string::npos);
  }
  CHECK(told == 1);
}

TEST_CASE("a diagram with nothing to draw is wide enough for the sentence that says so") {
  const std::string svg = locksim::reports::sequence_svg(Timeline{}, "one trial");
  const std::string said = "nothing to draw: no lock holds, statements, calls, pauses or duplicate inserts were recorded";
  REQUIRE(svg.find(said) != std::string::npos);
  const auto at = svg.find("width=\"") + 7;
  const int width = std::stoi(svg.substr(at));
  CHECK(width >= static_cast<int>(said.size()) * 6);
}

TEST_CASE("a trial in which nothing fired is told too: why it was safe") {
  Timeline t;
  t.end_s = 1;
  Timeline::Bar held{"lock:k", test::who("app-1 worker 1, client 0, op 0 attempt 1"), 0.01, 0.02, 3.01};
  held.end = Timeline::End::released;
  held.lease_to_s = 0.02;
  t.bars.push_back(held);
  t.statements.push_back(test::refused(0.5, 0.501, "app-2 worker 1, client 1, op 1 attempt 1", "INSERT INTO t_account (open_id) VALUES ('a')",
                                       1062, "1062 Duplicate entry 'a' for key 'open_id'"));
  const std::string why = joined(locksim::reports::explain(t, {}));
  CHECK_THAT(why, Catch::Contains("No checker fired in this trial."));
  CHECK_THAT(why, Catch::Contains("The unique index refused 1 insert of a key already there, the first at t=0.500 s by app-2 worker 1"));
  CHECK_THAT(why, Catch::Contains("Each of the 1 lock hold ended while the service still granted it"));
  // A trial that broke something is not called safe.
  CHECK_THAT(joined(locksim::reports::explain(paused_holder(), {"duplicate_rows 1"})), !Catch::Contains("No checker fired"));
}

TEST_CASE("report.html tells each safe strategy's first trial, not only the violating ones") {
  auto s = locksim::load_scenario(locksim::scenario_path("account-bind"), {}, {"unique-index", "check-then-insert"});
  s.trials = 1;
  const auto results = locksim::run_scenario(s, {.jobs = 1, .draw_first_violation = true});
  REQUIRE(!results.strategies[0].first_violation);
  REQUIRE(results.strategies[1].first_violation);
  const std::string html = report_files(results, {"report.html"})["report.html"];
  CHECK_THAT(html, Catch::Contains("unique-index: its first trial, seed 1, had no finding"));
  CHECK_THAT(html, Catch::Contains("The unique index refused"));
  CHECK_THAT(html, !Catch::Contains("check-then-insert: its first trial, seed 1, had no finding"));
}

TEST_CASE("a trial of thousands of pauses keeps a story of bounded size, and says how many it left out") {
  auto s = locksim::load_scenario(locksim::scenario_path("gc-pause-longer-than-lease"),
                                  {R"(faults.gc_pauses={"interval": {"fixed_ms": 1}, "length": {"fixed_ms": 1}})"}, {"redlock"});
  s.trials = 1;
  const auto results = locksim::run_scenario(s, {.jobs = 1});
  const Timeline& t = results.strategies.front().timeline;
  CHECK(t.bands.size() == Timeline::kMostKept);
  CHECK(t.bands_left_out > 10'000);  // a pause every 2 ms on two app servers for about 85 s
  CHECK(locksim::reports::narrate(t).size() <= 100);
  CHECK_THAT(locksim::reports::sequence_svg(t, "one trial"), Catch::Contains("shorter pauses or crashes not kept"));
}

TEST_CASE("a fencing write that changed nothing is told as the token the fence refused and the later one it had seen") {
  Timeline t;
  t.end_s = 3;
  t.statements = {test::wrote(1.0, 1.002, "app-2 worker 1, client 0, op 1 attempt 1",
                        "UPDATE t_fence SET token = 2 WHERE lock_key = 'openid:0' AND token < 2", 1),
                  test::wrote(2.0, 2.002, "app-1 worker 1, client 0, op 0 attempt 1",
                        "UPDATE t_fence SET token = 1 WHERE lock_key = 'openid:0' AND token < 1", 0),
                  test::wrote(2.5, 2.502, "app-1 worker 2, client 1, op 2 attempt 1", "UPDATE t_account SET device = 'x' WHERE id = 1", 0)};
  std::string told;
  for (const auto& line : locksim::reports::narrate(t)) told += line + "\n";
  INFO(told);
  CHECK(told.find("-> 0 affected (token 1 refused: the fence of 'openid:0' had seen token 2, raised by app-2 worker 1, client 0, op 1 "
                  "attempt 1 at t=1.002 s)") != std::string::npos);
  CHECK(told.find("token = 2 WHERE lock_key = 'openid:0' AND token < 2 -> 1 affected\n") != std::string::npos);  // raised: no words
  CHECK(told.find("WHERE id = 1 -> 0 affected\n") != std::string::npos);  // another write that changed nothing: no fence
}

TEST_CASE("a ZooKeeper or etcd holder is told with the number its lock node or key was created at, its fencing token") {
  auto s = locksim::load_scenario(locksim::scenario_path("zk-session-expiry-during-pause"));
  s.trials = 1;
  const auto results = locksim::run_scenario(s, {.jobs = 1});
  const std::map<std::string, std::string> told = {{"zookeeper-recipe", "(czxid "}, {"etcd-lease-revision", "created at revision "}};
  for (const auto& strategy : results.strategies) {
    const auto marker = told.find(strategy.name);
    if (marker == told.end()) continue;
    CAPTURE(strategy.name);
    // Every grant is told with the number its holder's own create or get answered before it.
    std::size_t grants = 0;
    for (const std::string& line : locksim::reports::narrate(strategy.timeline)) {
      if (line.find("it holds the lock") == std::string::npos) continue;
      ++grants;
      CAPTURE(line);
      const std::size_t at = line.find(marker->second);
      REQUIRE(at != std::string::npos);
      const std::string number = line.substr(at + marker->second.size(), line.find_first_not_of("0123456789", at + marker->second.size()) -
                                                                         (at + marker->second.size()));
      CHECK(!number.empty());
      bool answered = false;
      for (const auto& m : strategy.timeline.messages)
        answered = answered || m.reply.find(marker->second + number + ")") != std::string::npos;
      CHECK(answered);
    }
    CHECK(grants >= 2);  // the paused holder and the one after it
  }
}

TEST_CASE("a Consul holder is told with its key's lock index, and the paused one's end as its session invalidated") {
  auto s = locksim::load_scenario(locksim::scenario_path("consul-lock-delay"));
  s.trials = 1;
  const auto results = locksim::run_scenario(s, {.jobs = 1});
  for (const auto& strategy : results.strategies) {
    CAPTURE(strategy.name);
    std::string told;
    for (const std::string& line : locksim::reports::narrate(strategy.timeline)) told += line + "\n";
    INFO(told);
    // Each grant with the lock index its holder's own GET answered: 1 for the paused holder; 2
    // for the next where the story follows both (the 5 s delays, whose findings involve both;
    // the safe trial of the 15 s delay follows the first operation's calls only).
    CHECK(told.find("Consul granted locks/openid:0 to its session (lock index 1): it holds the lock") != std::string::npos);
    if (strategy.name.ends_with("delay-5s"))
      CHECK(told.find("Consul granted locks/openid:0 to its session (lock index 2): it holds the lock") != std::string::npos);
    CHECK(told.find("its Consul session was invalidated at the service") != std::string::npos);
    CHECK(told.find("its Consul session had been invalidated and locks/openid:0 released; it let go") != std::string::npos);
  }
}

TEST_CASE("a statement longer than a lane is wrapped onto more lines, not cut, and its row is taller") {
  Timeline t;
  t.end_s = 1;
  const std::string sql = "UPDATE t_fence SET token = 1 WHERE lock_key = 'openid:0' AND token < 1";
  t.statements.push_back(test::wrote(0.01, 0.0102, "app-1 worker 1, client 0, op 0 attempt 1", sql, 1));
  t.statements.push_back(test::selected(0.02, 0.0202, "app-1 worker 1, client 0, op 0 attempt 1", "SELECT 1", 1));
  const std::string svg = locksim::reports::sequence_svg(t, "one trial");
  // Every word is drawn, across lines, and nothing is cut.
  std::string drawn;
  CAPTURE(sql);
  const std::size_t at = svg.find("</title>UPDATE");
  REQUIRE(at != std::string::npos);
  const std::string text = svg.substr(at + 8, svg.find("</text>", at) - at - 8);
  CHECK(count(text, "<tspan") >= 1);
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<') {
      const bool line = text.compare(i, 6, "<tspan") == 0;
      i = text.find('>', i);
      if (line) drawn += ' ';
      continue;
    }
    drawn += text[i];
  }
  CHECK(drawn == "UPDATE t_fence SET token = 1 WHERE lock_key = 'openid:0' AND token &lt; 1 -&gt; 1 affected");
  CHECK(svg.find("...") == std::string::npos);
  // The next row starts below the wrapped lines: its mark lies more than a plain row lower.
  const auto mark_y = [&](std::size_t nth) {
    std::size_t from = 0;
    for (std::size_t i = 0; i <= nth; ++i) from = svg.find("<circle cx=", from) + 1;
    const std::size_t y = svg.find("cy=\"", from) + 4;
    return std::stoi(svg.substr(y));
  };
  CHECK(mark_y(1) - mark_y(0) > 24);
}

TEST_CASE("a long diagram is drawn in parts a screen can show, each naming its lanes and showing its window of one drawing") {
  Timeline t;
  t.end_s = 100;
  for (int i = 0; i < 100; ++i) t.statements.push_back(test::selected(0.01 * i, 0.01 * i + 0.0001, "s1", fmt::format("SELECT {}", i), 1));
  const std::string svg = locksim::reports::sequence_svg(t, "one trial");
  CHECK(count(svg, "<svg xmlns=") == 3);
  CHECK(count(svg, "(part ") == 3);
  CHECK(svg.find("one trial (part 3 of 3)") != std::string::npos);
  CHECK(count(svg, ">s1</text>") == 3 + 1);  // each part's head, and the drawing's own
  CHECK(count(svg, "<g id=\"sequence-") == 1);
  CHECK(count(svg, "<use href=\"#sequence-") == 2);  // the first part draws it
  CHECK(count(svg, ">SELECT 99 -&gt; 1 row</text>") == 1);  // drawn once
  // A short story stays one picture.
  Timeline short_one;
  short_one.statements.push_back(test::selected(0.0, 0.0001, "s1", "SELECT 1", 1));
  CHECK(count(locksim::reports::sequence_svg(short_one, "one trial"), "<svg xmlns=") == 1);
}

TEST_CASE("an isolation anomaly is told on the page with its cycle, and its sessions' lanes are marked in the diagram") {
  // Ward a's two REPEATABLE READ transactions each read both doctors on call and take one off.
  auto s = locksim::load_scenario(locksim::scenario_path("write-skew-serializable-postgresql"));
  s.trials = 1;
  const auto results = locksim::run_scenario(s, {.jobs = 1, .draw_first_violation = true});
  const auto& st = results.strategies.front();
  REQUIRE(st.first_violation);
  const Timeline& t = st.first_violation->timeline;
  REQUIRE(t.anomalies.size() == 1);
  CHECK(t.anomalies.front().metric == "anomalies.g2_item");
  CHECK(t.anomalies.front().lanes == std::vector<std::string>{"s1", "s2"});
  const std::string why = joined(locksim::reports::explain(t, st.first_violation->fired));
  CHECK(why.find("An isolation anomaly in the transactions' history (docs/anomalies.md), G2-item: s1's transaction") != std::string::npos);
  CHECK(why.find("The checker anomalies.g2_item") == std::string::npos);  // told, not listed
  const std::string svg = locksim::reports::sequence_svg(t, "one trial");
  CHECK(count(svg, "<text class=\"anomaly\"") == 2);
  const std::string html = report_files(results, {"report.html"})["report.html"];
  CHECK(html.find("G2-item: s1's transaction") != std::string::npos);
}
