#pragma once
// Scenario files written for one test, and what the loader says of a bad one.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "app/runner.hpp"
#include "app/scenario.hpp"
#include "support.hpp"

namespace test {

/// A scenario file holding `text`, removed after the test.
struct TempScenario {
  explicit TempScenario(const std::string& text) {
    path = unique_temp_path("locksim-test", ".json").string();
    std::ofstream(path) << text;
  }
  ~TempScenario() { std::filesystem::remove(path); }
  std::string path;
};

/// What the loader says of the scenario `text`, after the file's name; fails the test if it
/// loads.
inline std::string refusal(const std::string& text) {
  TempScenario file(text);
  try {
    locksim::load_scenario(file.path);
  } catch (const locksim::InputError& e) {
    const std::string message = e.what();
    CHECK(message.starts_with(file.path + ": "));
    return message.substr(file.path.size() + 2);
  }
  FAIL("the scenario was accepted");
  return "";
}

/// The scenario `text` run as `locksim run` runs it: every strategy's results.
inline locksim::reports::RunResults run_text(const std::string& text) {
  TempScenario file(text);
  return locksim::run_scenario(locksim::load_scenario(file.path));
}

/// Step `n` (from 1) of a sessions scenario's one strategy.
inline const locksim::reports::StepResult& step_of(const locksim::reports::RunResults& r, std::size_t n) {
  REQUIRE(r.strategies.size() == 1);
  REQUIRE(r.strategies.front().steps.size() >= n);
  return r.strategies.front().steps[n - 1];
}

}  // namespace test
