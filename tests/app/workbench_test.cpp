// The workbench's API (`locksim serve`): the same trials, figures and stories as the command
// line, branches that keep the choices before them, and requests outside its folders refused.

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "app/search/explore.hpp"
#include "app/runner.hpp"
#include "app/scenario.hpp"
#include "app/workbench.hpp"
#include "reports/explain.hpp"

namespace {

using nlohmann::json;
using locksim::workbench::BadRequest;
using locksim::workbench::Workbench;

// A fresh folder for the user's files and one for drafts, removed at the end.
struct Folders {
  std::filesystem::path root;
  Folders() {
    root = std::filesystem::temp_directory_path() / ("locksim-workbench-test-" + std::to_string(::getpid()) + "-" +
                                                     std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    std::filesystem::create_directories(root / "dir");
    std::filesystem::create_directories(root / "drafts");
  }
  ~Folders() { std::filesystem::remove_all(root); }
  locksim::workbench::Folders folders() const { return {(root / "dir").string(), (root / "drafts").string()}; }
};

// Results without their wall-clock timings, which no two runs share.
json without_timing(json j) {
  if (j.is_object()) {
    j.erase("timing");
    j.erase("wall_s");
    for (auto& [key, value] : j.items()) value = without_timing(value);
  } else if (j.is_array()) {
    for (auto& value : j) value = without_timing(value);
  }
  return j;
}

json wait_for(Workbench& bench, const json& job) {
  for (int i = 0; i < 6000; ++i) {
    json answer = bench.call("job", {{"job", job.at("job")}});
    if (answer.at("state") != "queued" && answer.at("state") != "running") return answer;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL("the run did not end within 60 s");
  return {};
}

}  // namespace

TEST_CASE("the workbench's trial is replay's: the same token, trace hash, findings and story") {
  Folders f;
  Workbench bench(f.folders());
  const json t = bench.call("trial", {{"scenario", "two-clients-pause"}, {"strategy", "redis-set-nx-ex-drop"}});
  const locksim::Replay r = locksim::replay(locksim::parse_token(t.at("token")));
  CHECK(t.at("trace_hash") == fmt::format("{:016x}", r.outcome.trace_hash));
  CHECK(t.at("schedule") == "dfs");
  CHECK(t.at("story").at("lines") == json(locksim::reports::narrate(r.outcome.timeline)));
  CHECK(t.at("fired").size() == r.fired.size());
  CHECK(t.at("replay") == "locksim replay " + t.at("token").get<std::string>());
  // Every choice the run asked, with its options; a tie says whose each event is.
  REQUIRE(t.at("choices").size() == r.asked.size());
  REQUIRE(!r.asked.empty());
  const json& tie = t.at("choices").at(0);
  CHECK(tie.at("stream") == "sim.ties");
  CHECK(tie.at("labels").size() == tie.at("options"));
  // The same trial asked twice, or by its token, is the same.
  CHECK(bench.call("trial", {{"token", t.at("token")}}).at("trace_hash") == t.at("trace_hash"));
}

TEST_CASE("a branch keeps the choices before it, takes the new option, and replays on the command line") {
  Folders f;
  Workbench bench(f.folders());
  const json t = bench.call("trial", {{"scenario", "two-clients-pause"}, {"strategy", "redis-set-nx-ex-drop"}});
  std::uint64_t last = 0;
  for (const json& c : t.at("choices"))
    if (c.at("options").get<int>() > 1) last = c.at("index");
  const json b = bench.call("branch", {{"token", t.at("token")}, {"choice", last}, {"option", 1}});
  CHECK(b.at("schedule") == fmt::format("dfs.{}=1", last));
  CHECK(b.at("choices").at(last).at("took") == 1);
  const locksim::Replay r = locksim::replay(locksim::parse_token(b.at("token")));
  CHECK(b.at("trace_hash") == fmt::format("{:016x}", r.outcome.trace_hash));
  // A branch at an earlier choice drops the later one: the choices after it take their defaults.
  const json earlier = bench.call("branch", {{"token", b.at("token")}, {"choice", 0}, {"option", 1}});
  CHECK(earlier.at("schedule") == "dfs.0=1");
}

TEST_CASE("the hint's choices, applied one by one, break the design as explore's counterexample does") {
  Folders f;
  Workbench bench(f.folders());
  json t = bench.call("trial", {{"scenario", "two-clients-pause"}, {"strategy", "redis-set-nx-ex-drop"}});
  CHECK((t.at("fired").empty() || t.at("fired").at(0).at("metric") != "duplicate_rows"));
  for (int step = 0; step < 4; ++step) {
    const json h = bench.call("hint", {{"token", t.at("token")}, {"property", "duplicate_rows"}});
    REQUIRE(h.at("found") == true);
    if (!h.contains("next")) break;
    t = bench.call("branch", {{"token", t.at("token")}, {"choice", h.at("next").at("choice")}, {"option", h.at("next").at("option")}});
  }
  bool duplicated = false;
  for (const json& fired : t.at("fired")) duplicated = duplicated || fired.at("metric") == "duplicate_rows";
  CHECK(duplicated);
  // With a unique index no schedule within the bound duplicates a row: the search says it covered them.
  const json safe = bench.call("trial", {{"scenario", "two-clients-pause"}, {"strategy", "unique-index"}});
  const json none = bench.call("hint", {{"token", safe.at("token")}, {"property", "duplicate_rows"}, {"bound", 1}});
  CHECK(none.at("found") == false);
  CHECK(none.at("exhausted") == true);
}

TEST_CASE("the workbench's run gives the results `run --json` prints, and a cancelled run stops") {
  Folders f;
  Workbench bench(f.folders());
  const json job = bench.call("run", {{"scenario", "two-clients-pause"}, {"trials", 20}, {"set", {"clients.count=2"}}});
  const json done = wait_for(bench, job);
  REQUIRE(done.at("state") == "done");
  locksim::Scenario s = locksim::load_scenario(locksim::scenario_path("two-clients-pause"), {"clients.count=2"});
  s.trials = 20;
  CHECK(without_timing(done.at("results")) == without_timing(json::parse(locksim::reports::to_json(locksim::run_scenario(s)))));
  CHECK(done.at("done") == done.at("total"));

  const json long_run = bench.call("run", {{"scenario", "account-bind"}, {"trials", 100000}});
  bench.call("cancel", {{"job", long_run.at("job")}});
  const json stopped = wait_for(bench, long_run);
  CHECK(stopped.at("state") == "cancelled");
  CHECK(!stopped.contains("results"));
}

TEST_CASE("the workbench refuses requests that name files outside its folders, and bad requests, in one line") {
  Folders f;
  Workbench bench(f.folders());
  const auto refused = [&](const std::string& call, const json& request) {
    try {
      bench.call(call, request);
    } catch (const BadRequest& e) {
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
      return true;
    }
    return false;
  };
  CHECK(refused("scenario", {{"scenario", "../scenarios/account-bind"}}));
  CHECK(refused("scenario", {{"scenario", "/etc/passwd"}}));
  CHECK(refused("scenario", {{"scenario", "dir/../../x.json"}}));
  CHECK(refused("scenario", {{"scenario", "account-bind"}, {"set", {"workload.script=/etc/passwd"}}}));
  CHECK(refused("scenario", {{"scenario", "account-bind"}, {"set", {"+script=/etc/passwd"}}}));
  CHECK(refused("scenario", {{"scenario", "account-bind"}, {"strategy_file", "/etc/passwd"}}));
  CHECK(refused("scenario", {{"scenario", "account-bind"}, {"strategy_file", "draft:../../x.lua"}}));
  CHECK(refused("script", {{"name", "../scenarios/account-bind.json"}}));
  CHECK(refused("save", {{"name", "x.lua"}, {"text", ""}, {"replace", "yes"}}) == false);  // saved: a plain name in --dir
  CHECK(refused("save", {{"name", "x.lua"}, {"text", ""}}));                               // there already
  CHECK(refused("save", {{"name", "../x.lua"}, {"text", ""}}));
  // A token is checked before anything it names is read: its scenario, its scripts.
  const json t = bench.call("trial", {{"scenario", "two-clients-pause"}});
  locksim::Token token = locksim::parse_token(t.at("token"));
  token.scenario = "/etc/passwd";
  CHECK(refused("trial", {{"token", token.text()}}));
  token = locksim::parse_token(t.at("token"));
  token.sets = {"+script=/etc/passwd"};
  CHECK(refused("trial", {{"token", token.text()}}));
  CHECK(refused("hint", {{"token", token.text()}}));
  // Requests of the wrong shape.
  CHECK(refused("trial", json::array()));
  CHECK(refused("nothing", json::object()));
  CHECK(refused("trial", {{"scenario", 7}}));
  CHECK(refused("branch", {{"token", t.at("token")}, {"choice", -1}}));
  CHECK(refused("job", {{"job", 999}}));
  CHECK(refused("trial", {{"token", t.at("token").get<std::string>() + "x"}}));
}

TEST_CASE("a Lua strategy edited in the workbench: its error at its line, and once loaded a strategy of the scenario") {
  Folders f;
  Workbench bench(f.folders());
  const json bad = bench.call("lua", {{"name", "mine.lua"}, {"text", "description = \"x\"\nfunction bind(req)\n  if true then\nend\n"}});
  CHECK(bad.at("ok") == false);
  CHECK(bad.at("error").at("line") == 5);
  const json good = bench.call("lua", {{"name", "mine.lua"}, {"text", bench.call("script", {{"name", "check-then-insert.lua"}}).at("text")}});
  REQUIRE(good.at("ok") == true);
  const json s = bench.call("scenario", {{"scenario", "account-bind"}, {"strategy_file", good.at("draft")}});
  bool listed = false;
  for (const json& c : s.at("strategies")) listed = listed || c.at("name") == "mine.lua";
  CHECK(listed);
  const json t = bench.call("trial", {{"scenario", "account-bind"}, {"strategy_file", good.at("draft")}, {"strategy", "mine.lua"}});
  CHECK(t.at("strategy") == "mine.lua");
  // Nothing was written into the user's folder until asked.
  CHECK(std::filesystem::is_empty(f.root / "dir"));
}
