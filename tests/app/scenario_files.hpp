#pragma once
// Scenario files written for one test, and what the loader says of a bad one.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

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

}  // namespace test
