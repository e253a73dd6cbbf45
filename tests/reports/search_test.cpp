// A search's verdict: the sentence says what was proved, for which bound, over how many
// schedules, and only an exhausted dfs search claims a proof.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "reports/search.hpp"

namespace {
locksim::reports::SearchClaim dfs_claim() {
  locksim::reports::SearchClaim c;
  c.scenario = "pause-anywhere";
  c.strategy = "fencing-token";
  c.mode = "dfs";
  c.property = "duplicate_rows";
  c.bound = 2;
  c.placed = "1 pause of 45000 ms on an app server placed anywhere";
  c.schedules = 1204;
  c.exhausted = true;
  return c;
}
}  // namespace

TEST_CASE("an exhausted dfs search with no finding states a proof for its bound and its placed faults") {
  CHECK(locksim::reports::verdict(dfs_claim()) ==
        "No duplicate_rows in any of 1,204 schedules with at most 2 reorderings and 1 pause of 45000 ms on an app server placed "
        "anywhere (exhaustive).");
}

TEST_CASE("a reduced dfs verdict says that reorderings of independent steps were skipped") {
  auto c = dfs_claim();
  c.reduction = "reorderings that only swap independent steps skipped";
  CHECK_THAT(locksim::reports::verdict(c), Catch::EndsWith("(exhaustive). Reorderings that only swap independent steps were skipped."));
  c.bound = 0;  // nothing reordered, nothing skipped
  CHECK_THAT(locksim::reports::verdict(c), Catch::EndsWith("(exhaustive)."));
}

TEST_CASE("a search cut short by its budget, or a random one, says it proves nothing") {
  auto cut = dfs_claim();
  cut.exhausted = false;
  CHECK_THAT(locksim::reports::verdict(cut), Catch::EndsWith("the budget ran out before the space was covered, so this is no proof."));
  auto random = dfs_claim();
  random.mode = "random";
  random.schedules = 1;
  CHECK(locksim::reports::verdict(random) == "No duplicate_rows in 1 run of a random search (a seed a run): a sample, not a proof.");
}

TEST_CASE("a dfs search that counted every finding says in how many schedules the property fired") {
  auto c = dfs_claim();
  c.found = true;
  c.counted_all = true;
  c.firing = 48;
  c.schedules = 1080;
  c.fired = {"duplicate_rows 1"};
  c.token = "locksim:1:x";
  CHECK_THAT(locksim::reports::verdict(c), Catch::StartsWith("duplicate_rows fires in 48 of 1,080 schedules with at most 2 reorderings"));
  const auto j = nlohmann::json::parse(locksim::reports::to_json(c));
  CHECK(j.at("firing") == 48);
  CHECK(j.at("exhausted") == true);
  CHECK(j.at("bound").at("reorderings") == 2);
  CHECK(j.at("token") == "locksim:1:x");
  CHECK(j.at("verdict") == locksim::reports::verdict(c));
}

TEST_CASE("the search report folder holds search.json and a page with the verdict") {
  const auto folder = std::filesystem::temp_directory_path() / ("locksim-search-" + std::to_string(::getpid())) / "x" / "explore";
  std::filesystem::create_directories(folder.parent_path());
  locksim::reports::write_search_report(dfs_claim(), folder.string());
  std::ifstream page(folder / "report.html");
  std::stringstream text;
  text << page.rdbuf();
  CHECK(text.str().find("No duplicate_rows in any of 1,204 schedules") != std::string::npos);
  CHECK(nlohmann::json::parse(std::ifstream(folder / "search.json")).at("schedules") == 1204);
  std::filesystem::remove_all(folder.parent_path().parent_path());
}
