#pragma once
// The scenario format as a JSON Schema (draft 2020-12), written by the loader itself.
//
// While it reads a document, a Reader given a SchemaRecorder notes every key it looks at,
// present or not: the type and range it accepts, the values a choice allows, the default it
// applies when the key is left out, which keys an object may have and which it must. Keys
// the loader checks by hand are declared where it checks them (Reader::declare).
// `locksim schema` runs the loader over a few exemplar documents that together reach every
// key and prints what was noted, each key with its meaning from docs/scenario.md's key
// tables (compiled in), so the page, the schema and the loader cannot drift apart: a key an
// object allows that no exemplar reached, or one without a row on the page, is an error.

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/distribution.hpp"

namespace locksim {

class SchemaRecorder {
 public:
  /// The value at `path` (a JSON path of the document being read, "/clients/count") may be
  /// what `schema` says; merged with what other reads of the same place said.
  void value(const std::string& path, const nlohmann::json& schema);
  /// A distribution at `path`, `fallback` when it is left out.
  void distribution(const std::string& path, const sim::Distribution& fallback);
  /// The object at `path` may have these keys and no other.
  void keys(const std::string& path, const std::vector<std::string>& known);
  /// The object at `path` must have `key`.
  void required(const std::string& path, const std::string& key);
  /// The keys of the object at `path` are names the document chooses, shown as `placeholder`.
  void names(const std::string& path, const std::string& placeholder);

  /// The schema of everything recorded. `meanings` maps a key as docs/scenario.md writes it
  /// ("faults.pauses[].node") to its meaning. Throws std::logic_error naming every key that
  /// has no recorded type or no meaning.
  nlohmann::json schema(const std::map<std::string, std::string>& meanings) const;

 private:
  struct Place {
    nlohmann::json schema = nlohmann::json::object();
    bool listed = false;  // keys() was told which keys it may have
    std::vector<std::string> keys;
    std::set<std::string> required;
    bool conflicting_defaults = false;
  };
  // A document path as a place of the format: list indices become "[]", chosen names their
  // placeholder: "/faults/pauses/0/node" -> "/faults/pauses/[]/node".
  std::string place_of(const std::string& path) const;
  Place& at(const std::string& path) { return places_[place_of(path)]; }
  nlohmann::json build(const std::string& place, const std::map<std::string, std::string>& meanings,
                       std::vector<std::string>& missing) const;

  std::map<std::string, Place> places_;
  std::map<std::string, std::string> placeholders_;  // place -> the placeholder of its keys
};

/// The scenario format's JSON Schema, as `locksim schema` prints it.
nlohmann::json scenario_schema();

/// A place of the format ("/faults/pauses/[]/node") as docs/scenario.md writes its key
/// ("faults.pauses[].node").
std::string documented_key(const std::string& place);

/// The key tables of docs/scenario.md: each key as the page writes it, with its meaning; and
/// each section ("## topology") with its first paragraph.
std::map<std::string, std::string> documented_meanings();

/// A row of a key table of docs/scenario.md: | `key` | type | default | meaning |.
struct DocumentedRow {
  std::string key;  // as the page writes it, without the backticks: "faults.pauses[].node"
  std::string type, default_text, meaning;
};
/// The key rows of `page` (docs/scenario.md). Throws std::logic_error for a malformed row.
std::vector<DocumentedRow> documented_rows(std::string_view page);

/// docs/scenario.md as it was when locksim was built (scenario_page.cpp, made by CMake).
std::string_view scenario_page();

}  // namespace locksim
