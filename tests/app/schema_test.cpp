// `locksim schema`: written by the loader as it reads its exemplars, complete, in step with
// docs/scenario.md and with the copy in docs/ that editors point at. tests/schema/ checks the
// catalogue against it with a validator of its own.

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "app/schema.hpp"

namespace {

using nlohmann::json;

// Every place of the schema, as docs/scenario.md writes its key.
void places(const json& node, const std::string& key, std::map<std::string, json>& out) {
  if (!key.empty() && !key.ends_with("[]")) out[key] = node;
  if (node.contains("properties"))
    for (const auto& [name, below] : node["properties"].items()) places(below, key.empty() ? name : key + "." + name, out);
  if (node.contains("items") && node["items"].is_object()) places(node["items"], key + "[]", out);
  if (node.contains("additionalProperties") && node["additionalProperties"].is_object()) {
    // The placeholder is the page's: the description of the place says which it is.
    static const std::map<std::string, std::string> placeholders = {
        {"expect", "<strategy>"}, {"expect.<strategy>", "<metric>"}, {"database.rows", "<table>"},
        {"database.rows.<table>[]", "<column>"}, {"strategies[].params", "<param>"}, {"workload.params", "<param>"},
        {"strategies[].rollout[].params", "<param>"}};
    const auto p = placeholders.find(key);
    REQUIRE(p != placeholders.end());
    places(node["additionalProperties"], key + "." + p->second, out);
  }
}

// The rows of the page's key tables, as the file is now: key -> the default cell.
std::map<std::string, std::string> documented_defaults() {
  std::ifstream in(std::string(LOCKSIM_SOURCE_DIR) + "/docs/scenario.md");
  REQUIRE(in);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::map<std::string, std::string> out;
  for (const locksim::DocumentedRow& row : locksim::documented_rows(page)) out[row.key] = row.default_text;
  REQUIRE(out.size() > 100);
  return out;
}

}  // namespace

TEST_CASE("the schema holds every key the loader allows, each value with its meaning from docs/scenario.md") {
  const json schema = locksim::scenario_schema();  // throws naming a key no exemplar reaches or the page lacks
  CHECK(schema["$schema"] == "https://json-schema.org/draft/2020-12/schema");
  std::map<std::string, json> found;
  places(schema, "", found);
  CHECK(found.size() > 100);
  CHECK(found.at("clients.traffic.keys.kind")["enum"] == json({"fresh", "uniform", "zipf"}));
  CHECK(found.at("topology.workers")["minimum"] == 1);
  CHECK(found.at("topology.workers")["maximum"] == 100'000);
  CHECK(found.at("faults.pauses[].node")["type"] == "string");
  CHECK(found.at("topology.client_latency")["$ref"] == "#/$defs/distribution");
  CHECK(schema["properties"]["clients"]["additionalProperties"] == false);
  CHECK(schema["required"] == json({"name"}));
}

TEST_CASE("every key docs/scenario.md lists is in the schema, with the default the page gives") {
  std::map<std::string, json> found;
  places(locksim::scenario_schema(), "", found);
  for (const auto& [key, default_cell] : documented_defaults()) {
    INFO("documented: " << key << " (default " << default_cell << ")");
    REQUIRE(found.count(key) == 1);
    const json& place = found.at(key);
    const bool json_default = default_cell.size() > 2 && default_cell.front() == '`' && default_cell.back() == '`' &&
                              default_cell.find('`', 1) == default_cell.size() - 1;
    if (json_default) {
      REQUIRE(place.contains("default"));
      CHECK(place["default"] == json::parse(default_cell.substr(1, default_cell.size() - 2)));
    } else {
      CHECK_FALSE(place.contains("default"));  // "required", "none", or a rule in words
    }
  }
}

TEST_CASE("docs/scenario.schema.json is what `locksim schema` prints") {
  std::ifstream in(std::string(LOCKSIM_SOURCE_DIR) + "/docs/scenario.schema.json");
  REQUIRE(in);
  INFO("regenerate it: build/app/locksim schema > docs/scenario.schema.json");
  CHECK(json::parse(in) == locksim::scenario_schema());
}

TEST_CASE("the recorder makes one place of every list item and every chosen name") {
  locksim::SchemaRecorder r;
  r.keys("/faults/pauses/0", {"node"});
  r.value("/faults/pauses/0/node", {{"type", "string"}});
  r.value("/faults/pauses/1/node", {{"type", "string"}, {"default", "app-1"}});
  r.names("/expect", "<strategy>");
  r.value("/expect/unique-index", {{"type", "string"}});
  r.value("/expect/redlock", {{"type", "object"}});
  const json s = r.schema({{"faults.pauses[].node", "the node"}, {"expect.<strategy>", "a comparison"}});
  const json& node = s["properties"]["faults"]["properties"]["pauses"]["items"]["properties"]["node"];
  CHECK(node == json({{"type", "string"}, {"default", "app-1"}, {"description", "the node"}}));
  CHECK(s["properties"]["expect"]["additionalProperties"]["type"] == json({"string", "object"}));
}

TEST_CASE("the recorder widens ranges, joins choices and drops a default two reads disagree on") {
  locksim::SchemaRecorder r;
  r.value("/n", {{"type", "integer"}, {"minimum", 1}, {"maximum", 10}, {"default", 2}});
  r.value("/n", {{"type", "integer"}, {"minimum", 0}, {"maximum", 5}, {"default", 3}});
  r.value("/k", {{"type", "string"}, {"enum", {"a"}}});
  r.value("/k", {{"type", "string"}, {"enum", {"b"}}});
  const json s = r.schema({{"n", "a count"}, {"k", "a kind"}});
  CHECK(s["properties"]["n"] == json({{"type", "integer"}, {"minimum", 0}, {"maximum", 10}, {"description", "a count"}}));
  CHECK(s["properties"]["k"]["enum"] == json({"a", "b"}));
}

TEST_CASE("a key an object allows that nothing read, or a value the page does not list, is named") {
  locksim::SchemaRecorder r;
  r.keys("/clients", {"count", "burst"});
  r.value("/clients/count", {{"type", "integer"}});
  r.value("/clients/unlisted", {{"type", "integer"}});
  try {
    (void)r.schema({{"clients.count", "clients"}});
    FAIL("expected an error");
  } catch (const std::logic_error& e) {
    CHECK_THAT(e.what(), Catch::Contains("clients.burst (no exemplar reaches it)"));
    CHECK_THAT(e.what(), Catch::Contains("clients.unlisted (no row in docs/scenario.md)"));
  }
}
