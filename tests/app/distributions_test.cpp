// Distributions as scenario files write them: every example of docs/scenario.md loads; a
// mixture draws each part with its probability; measured samples come inline or from a file
// beside the scenario; and a bad one is one line naming the file, the path or the line.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "scenario_files.hpp"
#include "support.hpp"
#include "app/scenario.hpp"
#include "sim/random.hpp"

namespace {

using nlohmann::json;

json with_app_work(const json& distribution) {
  return {{"name", "x"}, {"topology", {{"app_work", distribution}}}, {"strategies", {"unique-index"}}, {"trials", 1}};
}

sim::Distribution app_work_of(const std::string& scenario_path) { return locksim::load_scenario(scenario_path).app_work; }

// The examples of docs/scenario.md's table of distributions, as JSON.
std::vector<json> documented_distributions() {
  std::ifstream in(std::string(LOCKSIM_SOURCE_DIR) + "/docs/scenario.md");
  std::vector<json> out;
  bool inside = false;
  const std::regex row(R"(^\| [a-z ,]+ \| `(\{.*\})` \|)");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("## ")) inside = line == "## Distributions";
    std::smatch m;
    if (inside && std::regex_search(line, m, row)) out.push_back(json::parse(m[1].str()));
  }
  return out;
}

}  // namespace

TEST_CASE("every distribution docs/scenario.md shows loads as a scenario's delay") {
  const std::vector<json> examples = documented_distributions();
  CHECK(examples.size() >= 10);
  const auto folder = test::unique_temp_path("locksim-dists");
  std::filesystem::create_directories(folder);
  std::ofstream(folder / "pauses.txt") << "# GC pauses, ms\n12\n15.5\n\n31\n2400\n";
  for (const json& example : examples) {
    INFO(example.dump());
    const std::string path = (folder / "x.json").string();
    std::ofstream(path) << with_app_work(example).dump();
    CHECK_NOTHROW(app_work_of(path));
  }
  std::filesystem::remove_all(folder);
}

TEST_CASE("a mixture draws each part with its probability: tens of ms, with rare multi-second ones") {
  test::TempScenario file(with_app_work(json::parse(
      R"({"mixture": [[0.99, {"fixed_ms": 20}], [0.01, {"uniform_ms": [1000, 4000]}]]})")).dump());
  const sim::Distribution d = app_work_of(file.path);
  sim::ChoiceSource source(3);
  auto stream = source.stream("mixture");
  int long_ones = 0, others = 0;
  constexpr int kDraws = 100'000;
  for (int i = 0; i < kDraws; ++i) {
    const auto ms = std::chrono::duration<double, std::milli>(d.sample_duration(stream)).count();
    if (ms >= 1000) ++long_ones;
    else if (ms != 20) ++others;
  }
  CHECK(others == 0);
  CHECK(long_ones == Approx(kDraws * 0.01).margin(kDraws * 0.002));
}

TEST_CASE("measured samples come inline or from a file beside the scenario, and each draw is one of them") {
  const auto folder = test::unique_temp_path("locksim-samples");
  std::filesystem::create_directories(folder);
  std::ofstream(folder / "pauses.txt") << "# from a GC log\n5\n  7.5 \n\n900\n";
  const std::string path = (folder / "x.json").string();
  std::ofstream(path) << with_app_work(json::parse(R"({"empirical_ms": {"file": "pauses.txt"}})")).dump();
  const sim::Distribution d = app_work_of(path);
  sim::ChoiceSource source(5);
  auto stream = source.stream("samples");
  std::set<double> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(std::chrono::duration<double, std::milli>(d.sample_duration(stream)).count());
  CHECK(seen == std::set<double>{5, 7.5, 900});
  // The effective configuration shows it, loadable again.
  const auto s = locksim::load_scenario(path);
  CHECK(locksim::effective_config(s)["topology"]["app_work"] == json::parse(R"({"empirical_ms": [5.0, 7.5, 900.0]})"));
  std::filesystem::remove_all(folder);
}

TEST_CASE("a bad mixture or sample list is one line naming the path, or the sample file's line") {
  CHECK_THAT(test::refusal(with_app_work(json::parse(R"({"mixture": [[0.5, {"fixed_ms": 1}], [0.4, {"fixed_ms": 2}]]})")).dump()),
             Catch::Contains("/topology/app_work/mixture: expected a list of [probability, distribution] pairs") &&
                 Catch::Contains("they add up to 0.9"));
  CHECK_THAT(test::refusal(with_app_work(json::parse(R"({"mixture": [[1, {"weird_ms": 1}]]})")).dump()),
             Catch::Contains("/topology/app_work/mixture/0/1/weird_ms: expected one of the keys"));
  CHECK_THAT(test::refusal(with_app_work(json::parse(R"({"empirical_ms": []})")).dump()),
             Catch::Contains("/topology/app_work/empirical_ms: expected a list of 1 to"));
  CHECK_THAT(test::refusal(with_app_work(json::parse(R"({"empirical_ms": {"file": "no-such-file.txt"}})")).dump()),
             Catch::Contains("/topology/app_work/empirical_ms/file: expected a file of samples"));
  const auto folder = test::unique_temp_path("locksim-bad-samples");
  std::filesystem::create_directories(folder);
  std::ofstream(folder / "pauses.txt") << "5\nten\n";
  const std::string path = (folder / "x.json").string();
  std::ofstream(path) << with_app_work(json::parse(R"({"empirical_ms": {"file": "pauses.txt"}})")).dump();
  CHECK_THROWS_WITH(locksim::load_scenario(path), Catch::Contains("pauses.txt:2: expected a duration in ms") && Catch::Contains("\"ten\""));
  std::filesystem::remove_all(folder);
}
