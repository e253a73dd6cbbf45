// A long trial told around its finding (reports/focus.hpp): only what is involved, the rest
// counted; a short trial told whole; and the diagram's window, breaks and words.

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "reports/explain.hpp"
#include "reports/focus.hpp"
#include "reports/report.hpp"
#include "reports/timeline_json.hpp"
#include "reports/timeline_parts.hpp"
#include "support.hpp"

namespace {

using locksim::reports::Timeline;

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// 300 operations each holding its own lock for 10 ms, one every 100 ms; op 150's lease runs out
// in a pause of app-1 and op 151 takes the same lock meanwhile.
Timeline busy_trial() {
  Timeline t;
  t.end_s = 31;
  t.operations = 300;
  for (int i = 0; i < 300; ++i) {
    if (i == 150 || i == 151) continue;
    Timeline::Bar b{fmt::format("lock:openid:{}", i), test::who(fmt::format("app-2 worker {}, client {}, op {} attempt 1", i % 8 + 1, i, i)), 0.1 * i,
                    0.1 * i + 0.01, 0.1 * i + 5};
    b.end = Timeline::End::released;
    b.service = "redis";
    t.bars.push_back(b);
    t.bands.push_back({"app-2", 0.1 * i + 0.05, 0.1 * i + 0.06, "paused"});
  }
  Timeline::Bar lost{"lock:openid:150", test::who("app-1 worker 4, client 150, op 150 attempt 1"), 15.0, 26.0, 20.0};
  lost.service = "redis";
  lost.service_to_s = 20.0;
  lost.end = Timeline::End::expired;
  Timeline::Bar next{"lock:openid:150", test::who("app-1 worker 2, client 151, op 151 attempt 1"), 21.0, 21.1, 26.0};
  next.service = "redis";
  next.end = Timeline::End::released;
  t.bars.push_back(lost);
  t.bars.push_back(next);
  t.bands.push_back({"app-1", 15.1, 25.9, "paused"});
  t.statements.push_back(test::wrote(25.95, 26.05, "app-1 worker 4, client 150, op 150 attempt 1",
                                     "INSERT INTO t_account (open_id, device) VALUES ('openid:150', 'device-150')", 1, 9));
  return t;
}

}  // namespace

TEST_CASE("a long trial is told around its finding: the operations involved, the rest counted in a line") {
  const Timeline t = busy_trial();
  REQUIRE(locksim::reports::narrated_events(t) > locksim::reports::kMostNarrated);
  const auto f = locksim::reports::focus(t, {"lease_expiry_violations 1"});
  CHECK(f.about == "lease_expiry_violations");
  CHECK(f.at_s == Approx(20.0));
  REQUIRE(f.told.bars.size() == 2);  // the hold whose lease ran out, and who took the lock meanwhile
  CHECK(f.told.bars[0].holder.operation == 150);
  CHECK(f.told.bars[1].holder.operation == 151);
  REQUIRE(f.told.bands.size() == 1);  // app-1's pause; app-2's are another node's
  CHECK(f.told.bands[0].node == "app-1");
  CHECK(f.told.statements.size() == 1);
  const std::string left = joined(f.left_out);
  CHECK(left.find("Of the trial's 300 operations over 31.000 s, this story follows 2 (op 150, op 151)") != std::string::npos);
  CHECK(left.find("298 lock holds of other operations, each released by its holder") != std::string::npos);
  CHECK(left.find("298 pauses and crashes") != std::string::npos);
  // The story's events are told whole: nothing folded.
  const std::string story = joined(locksim::reports::narrate(f.told));
  CHECK(story.find("folded") == std::string::npos);
  CHECK(story.find("its lease ran out at the lock service") != std::string::npos);
}

TEST_CASE("a short trial is told whole, as before") {
  Timeline t;
  t.end_s = 50;
  t.bars.push_back({"lock:k", test::who("app-1 worker 4, client 0, op 0 attempt 1"), 0.01, 45.02, 3.01});
  t.bars.push_back({"lock:k", test::who("app-2 worker 1, client 1, op 1 attempt 1"), 40.0, 40.05, 43.0});
  t.bands.push_back({"app-1", 0.02, 45.0, "paused"});
  const auto f = locksim::reports::focus(t, {"lease_expiry_violations 1"});
  CHECK(f.whole());
  CHECK(f.left_out.empty());
  CHECK(f.told.bars.size() == 2);
}

TEST_CASE("the property a search asked for picks the story where the trial shows more than one kind") {
  Timeline t = busy_trial();
  t.inserts.push_back({1, test::who("app-2 worker 3, client 7, op 7 attempt 1"), 0.705, "openid:7", true});
  t.inserts.push_back({2, test::who("app-2 worker 5, client 9, op 9 attempt 1"), 0.905, "openid:7"});
  CHECK(locksim::reports::focus(t, {"duplicate_rows 1", "lease_expiry_violations 1"}).about == "duplicate_rows");
  const auto lease = locksim::reports::focus(t, {"duplicate_rows 1", "lease_expiry_violations 1"}, "lease_expiry_violations");
  CHECK(lease.about == "lease_expiry_violations");
  CHECK(joined(lease.left_out).find("2 inserts of other duplicated keys") != std::string::npos);
  const auto dup = locksim::reports::focus(t, {"duplicate_rows 1"});
  REQUIRE(dup.told.inserts.size() == 2);
  CHECK(joined(locksim::reports::explain(dup.told, {"duplicate_rows 1"})).starts_with("One key was inserted more than once: row 1 by"));
  Timeline two_keys;  // a short trial, told whole, that duplicated two keys
  two_keys.inserts = {{1, test::who("s1"), 0.1, "a", true}, {2, test::who("s2"), 0.2, "a"}, {3, test::who("s1"), 0.3, "b", true}, {4, test::who("s2"), 0.4, "b"}};
  CHECK(joined(locksim::reports::explain(two_keys, {"duplicate_rows 2"})).starts_with("2 keys were inserted more than once: row 1 by"));
  CHECK(dup.at_s == Approx(0.905));  // the key became a duplicate at its second insert
}

TEST_CASE("past kViolationsTold violations of the kind, the others are listed by when") {
  Timeline t = busy_trial();
  for (int i = 0; i < 5; ++i) {
    auto st = test::refused(1.0 + i, 1.2 + i, fmt::format("s{}", i), "UPDATE t SET v = 1 WHERE id = 1", 1213, "1213 Deadlock found");
    st.cycle = {test::who(fmt::format("s{}", i)), test::who(fmt::format("s{}", i + 10))};
    t.statements.push_back(st);
  }
  const auto f = locksim::reports::focus(t, {"deadlocks 5"});
  CHECK(f.about == "deadlocks");
  CHECK(f.told.statements.size() == locksim::reports::kViolationsTold);
  CHECK(joined(f.left_out).find("2 more deadlocks of the same kind, not told: at t=4.200 s, t=5.200 s.") != std::string::npos);
}

TEST_CASE("paragraphs alike but for when are told once, with how many more times and when") {
  Timeline t;
  t.end_s = 10;
  for (int i = 0; i < 4; ++i) {
    auto st = test::refused(1.0 + i, 1.5 + i, "s2", "UPDATE t SET v = 1 WHERE id = 1", 1213, "1213 Deadlock found");
    st.cycle = {test::who("s2"), test::who("s1")};
    t.statements.push_back(st);
  }
  const auto why = locksim::reports::explain(t, {"deadlocks 4"});
  REQUIRE(why.size() == 1);
  CHECK(why[0].find("A deadlock at t=1.500 s") != std::string::npos);
  CHECK(why[0].find("The same happened 3 more times: at t=2.500 s, t=3.500 s, t=4.500 s.") != std::string::npos);
}

TEST_CASE("a statement that took a while is drawn from its issue to its answer, with its outcome written on the answer's row") {
  Timeline t;
  t.end_s = 1;
  auto st = test::wrote(0.005, 0.1058, "s1", "INSERT INTO t (k) VALUES ('a')", 1, 1);
  st.waits = {{"X", "t", "k", "'a'", {"s2"}, 100.0}};
  st.waited_for = {test::who("s2")};
  t.statements.push_back(st);
  t.statements.push_back(test::selected(0.0, 0.0002, "s2", "SELECT id FROM t WHERE k = 'a'", 0));
  const std::string svg = locksim::reports::sequence_svg(t, "one trial");
  CHECK(svg.find(">0.005 s</text>") != std::string::npos);  // issued
  CHECK(svg.find(">0.106 s</text>") != std::string::npos);  // answered, where its outcome is
  CHECK(svg.find(">-&gt; 1 affected, id 1</text>") != std::string::npos);
  CHECK(svg.find("fill=\"#d08020\" fill-opacity=\"0.3\"") != std::string::npos);  // the band of its wait
  // A quick statement keeps its outcome in sight: "0 rows" is written, not only on hover.
  CHECK(svg.find("-&gt; 0 rows</tspan></text>") != std::string::npos);  // wrapped, the outcome at its end
}

TEST_CASE("the diagram of a long story starts near its finding, and a second or more between two rows is a break") {
  Timeline t;
  t.end_s = 100;
  for (int i = 0; i < 300; ++i) t.statements.push_back(test::selected(0.01 * i, 0.01 * i + 0.0001, "s1", fmt::format("SELECT {}", i), 1));
  t.statements.push_back(test::selected(60.0, 60.0001, "s1", "SELECT 'after the break'", 1));
  const std::string svg = locksim::reports::sequence_svg(t, "one trial", 10, 120, 2.5);  // the finding at row 250
  CHECK(svg.find(">2.500 s</text>") != std::string::npos);
  CHECK(svg.find(">0.000 s</text>") == std::string::npos);
  CHECK(svg.find("earlier events not shown: the diagram starts near the finding") != std::string::npos);
  CHECK(svg.find("class=\"break\"") != std::string::npos);
  CHECK(svg.find(">+57.010 s</text>") != std::string::npos);
}

TEST_CASE("a page stays small whatever the trial: a key inserted thousands of times, thousands of holds and pauses") {
  Timeline t = busy_trial();
  for (int i = 0; i < 5000; ++i) {
    const std::string who = fmt::format("app-{} worker {}, client {}, op {} attempt 1", 1 + i % 3, i % 8 + 1, 1000 + i, 1000 + i);
    t.inserts.push_back({i + 1, test::who(who), 0.5 + 0.005 * i, "openid:hot"});
    t.statements.push_back(test::wrote(0.5 + 0.005 * i - 0.002, 0.5 + 0.005 * i, who,
                                       "INSERT INTO t_account (open_id, device) VALUES ('openid:hot', 'd')", 1));
  }
  const std::vector<std::string> fired = {"duplicate_rows 4999"};
  const auto folder = test::unique_temp_path("locksim-hot-key");
  locksim::reports::write_replay_report(t, "check-then-insert", folder.string(), fired);
  const auto bytes = std::filesystem::file_size(folder / "report.html");
  std::filesystem::remove_all(folder);
  CHECK(bytes < 2'000'000);
  const std::string why = joined(locksim::reports::explain(locksim::reports::focus(t, fired).told, fired));
  CHECK(why.find("; and 4992 more inserts.") != std::string::npos);
  CHECK(why.size() < 20000);  // not a list of every insert
}

TEST_CASE("a story that leaves things out links the trial's whole timeline as JSON beside the page, a story told whole links none") {
  const Timeline t = busy_trial();
  const std::vector<std::string> fired = {"lease_expiry_violations 1"};
  const auto folder = test::unique_temp_path("locksim-long-story");
  locksim::reports::write_replay_report(t, "redis-lock", folder.string(), fired);
  const auto data = folder / "timeline-redis-lock.json";
  REQUIRE(std::filesystem::exists(data));
  std::ifstream in(data);
  const Timeline back = nlohmann::json::parse(in).get<Timeline>();
  CHECK(back.bars.size() == t.bars.size());  // every hold, not only the story's two
  CHECK(back.bars.back().holder.operation == 151);
  CHECK(back.bars.front().deleted_by.empty());  // nobody's DEL: null in the file, empty again read back
  CHECK(back.statements.front().kind == Timeline::Statement::Kind::write);
  std::ifstream page_in(folder / "report.html");
  const std::string page((std::istreambuf_iterator<char>(page_in)), std::istreambuf_iterator<char>());
  CHECK(page.find("<a href=\"timeline-redis-lock.json\" download>timeline-redis-lock.json</a>") != std::string::npos);
  std::filesystem::remove_all(folder);

  Timeline small;
  small.end_s = 1;
  small.inserts = {{1, test::who("s1"), 0.1, "a"}, {2, test::who("s2"), 0.2, "a"}};
  locksim::reports::write_replay_report(small, "redis-lock", folder.string(), {"duplicate_rows 1"});
  CHECK_FALSE(std::filesystem::exists(folder / "timeline-redis-lock.json"));
  std::filesystem::remove_all(folder);
}

TEST_CASE("a finding asked for that the timeline cannot centre on is told by the whole trial, not by another finding's story") {
  const Timeline t = busy_trial();
  const auto asked = locksim::reports::focus(t, {"lease_expiry_violations 1"}, "double_booked");
  CHECK(asked.whole());
  const auto lease = locksim::reports::focus(t, {"lease_expiry_violations 1"}, "lease_expiry_violations");
  CHECK(!lease.whole());
  CHECK(lease.about == "lease_expiry_violations");
}
