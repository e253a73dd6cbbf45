#include "app/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "app/fault_kind.hpp"
#include "app/scenario.hpp"
#include "app/workload_kind.hpp"

namespace locksim {

using json = nlohmann::json;

namespace {

std::vector<std::string> segments(const std::string& path) {
  std::vector<std::string> out;
  std::size_t from = 1;  // past the leading '/'
  while (from <= path.size() && !path.empty() && path != "/") {
    const std::size_t slash = path.find('/', from);
    out.push_back(path.substr(from, slash == std::string::npos ? std::string::npos : slash - from));
    if (slash == std::string::npos) break;
    from = slash + 1;
  }
  return out;
}

bool is_index(const std::string& segment) {
  return !segment.empty() && std::all_of(segment.begin(), segment.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Two reads of one place: types joined, ranges widened, enumerations joined; a default the
// reads disagree on is no default.
void merge(json& into, const json& more, bool& conflicting_defaults) {
  for (const auto& [key, value] : more.items()) {
    if (!into.contains(key)) {
      into[key] = value;
      continue;
    }
    json& had = into[key];
    if (had == value) continue;
    if (key == "type") {
      json types = had.is_array() ? had : json::array({had});
      for (const json& t : value.is_array() ? value : json::array({value}))
        if (std::find(types.begin(), types.end(), t) == types.end()) types.push_back(t);
      had = types;
    } else if (key == "enum") {
      for (const json& v : value)
        if (std::find(had.begin(), had.end(), v) == had.end()) had.push_back(v);
    } else if (key == "minimum") {
      had = std::min(had.get<double>(), value.get<double>());
    } else if (key == "maximum") {
      had = std::max(had.get<double>(), value.get<double>());
    } else if (key == "default") {
      conflicting_defaults = true;
    } else {
      throw std::logic_error(fmt::format("locksim schema: two reads disagree on \"{}\": {} and {}", key, had.dump(), value.dump()));
    }
  }
}

// The forms of a distribution, as Reader::distribution reads them (app/reader.hpp).
json distribution_schema() {
  const json ms = {{"type", "number"}, {"minimum", 0}, {"maximum", limits::max_ms}};
  const json pair = {{"type", "array"}, {"prefixItems", {ms, ms}}, {"minItems", 2}, {"maxItems", 2}};
  const json positive = {{"type", "number"}, {"exclusiveMinimum", 0}, {"maximum", limits::max_ms}};
  const json samples = {{"type", "array"}, {"items", ms}, {"minItems", 1}};
  const json sample_file = {
      {"type", "object"}, {"properties", {{"file", {{"type", "string"}}}}}, {"required", {"file"}}, {"additionalProperties", false}};
  json forms = {
      {"fixed_ms", ms},
      {"uniform_ms", pair},
      {"exponential_ms", positive},
      {"normal_ms", pair},
      {"lognormal_ms",
       {{"type", "object"},
        {"properties", {{"median", positive}, {"sigma", {{"type", "number"}, {"minimum", 0}, {"maximum", 10}}}}},
        {"required", {"median", "sigma"}},
        {"additionalProperties", false}}},
      {"pareto_ms",
       {{"type", "object"},
        {"properties", {{"scale", positive}, {"shape", {{"type", "number"}, {"minimum", 0.01}, {"maximum", 100}}}}},
        {"required", {"scale", "shape"}},
        {"additionalProperties", false}}},
      {"one_of_ms", {{"type", "array"}, {"items", ms}, {"minItems", 1}, {"maxItems", 16}}},
      {"empirical_ms", {{"anyOf", json::array({samples, sample_file})}}},
      {"mixture",
       {{"type", "array"},
        {"minItems", 1},
        {"maxItems", 16},
        {"items",
         {{"type", "array"},
          {"prefixItems", {{{"type", "number"}, {"exclusiveMinimum", 0}, {"maximum", 1}}, {{"$ref", "#/$defs/distribution"}}}},
          {"minItems", 2},
          {"maxItems", 2}}}}}};
  return {{"description",
           "a distribution of durations in ms: exactly one of fixed_ms, uniform_ms [low, high], exponential_ms (mean), normal_ms "
           "[mean, standard deviation], lognormal_ms {median, sigma}, pareto_ms {scale, shape}, one_of_ms [values], "
           "empirical_ms [samples] or {\"file\": ...}, mixture [[probability, distribution], ...] (docs/scenario.md)"},
          {"type", "object"},
          {"properties", forms},
          {"additionalProperties", false},
          {"minProperties", 1},
          {"maxProperties", 1}};
}

// Documents that, read together, reach every key of the format: these, each fault kind's entry
// and each workload kind's scenario (their exemplar()). A key the loader learns to read is reached
// by adding it here or to its kind's; `locksim schema` fails naming any key none reaches.
std::vector<json> exemplars() {
  json every_fault = json::object();
  for (const FaultKind* kind : fault_kinds()) every_fault[kind->key()] = kind->exemplar();
  std::vector<json> out = {
      {{"$schema", "scenario.schema.json"},
       {"name", "account-bind-everything"},
       {"workload", {{"kind", "account-bind"}}},
       {"topology", json::object()},
       {"database",
        {{"tables", {"CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, k VARCHAR(32) NOT NULL)"}},
         {"rows", {{"t", {{{"k", "a"}}}}}},
         {"index_build_us_per_row", 1.5},
         {"legacy",
          {{"table", "t_account"},
           {"column", "open_id"},
           {"keys", 10},
           {"key_prefix", "old:"},
           {"duplicated_share", 0},
           {"max_copies", 3},
           {"span_days", 30},
           {"time_column", "version"}}}}},
       {"clients",
        {{"arrival", {{"kind", "listed"}, {"times_ms", {0}}}}, {"backoff", json::object()}, {"retry_on", {"timeout"}}}},
       {"redis", {{"instances", 1}}},
       {"zookeeper", json::object()},
       {"etcd", json::object()},
       {"faults", every_fault},
       {"strategies", {"check-then-insert", {{"name", "redis-set-nx-ex-drop"}, {"as", "x"}, {"params", {{"ttl_ms", 5000}}}}}},
       {"expect", {{"x", {{"duplicate_rows", "= 0"}}}}}},
      {{"name", "traffic"},
       {"clients",
        {{"traffic",
          {{"rate_per_s", 10},
           {"operations", 10},
           {"keys", {{"kind", "zipf"}, {"count", 10}}},
           {"double_submit", {{"probability", 0.1}}}}}}}},
      {{"name", "traffic-for-a-duration"},
       {"clients", {{"traffic", {{"rate_per_s", 10}, {"duration_s", 1}, {"only", {{0, 2}, {5, 5}}}}}}}},
      {{"name", "traffic-at-listed-times"}, {"clients", {{"traffic", {{"kind", "listed"}, {"times_ms", {0}}}}}}},
      {{"name", "rollout"},
       {"rollout",
        {{"running", "check-then-insert"},
         {"index", "plain"},
         {"index_name", "idx_open_id"},
         {"duration_s", 60},
         {"cleanup", {{"interval_s", 10}, {"keys_per_run", 100}}}}},
       {"strategies",
        {{{"as", "plan"},
          {"rollout",
           {{{"at_s", 0}, {"deploy", "redis-token-cas-unlock"}, {"params", {{"ttl_ms", 5000}}}, {"rolling_s", 5}, {"drain_s", 1}},
            {{"at_s", 10}, {"job", "start"}, {"keys_per_run", 10}, {"interval_s", 1}},
            {{"at_s", 20}, {"sql", "DELETE FROM t_account WHERE open_id = 'x'"}, {"retry_s", 5}},
            {{"at_s", 30}, {"job", "stop"}}}}}}}},
  };
  for (const WorkloadKind* kind : workload_kinds())
    if (json doc = kind->exemplar(); !doc.is_null()) out.push_back(std::move(doc));
  return out;
}

// Whole numbers written as such (1000, not 1000.0): the schema is read by people too.
void tidy(json& j) {
  if (j.is_number_float()) {
    const double v = j.get<double>();
    if (v == std::floor(v) && std::fabs(v) < 9e15) j = static_cast<std::int64_t>(v);
  }
  if (j.is_structured())
    for (auto& item : j) tidy(item);
}

}  // namespace

std::string SchemaRecorder::place_of(const std::string& path) const {
  std::string place;
  for (const std::string& segment : segments(path)) {
    const auto named = placeholders_.find(place);
    place += "/" + (named != placeholders_.end() ? named->second : is_index(segment) ? std::string("[]") : segment);
  }
  return place;
}

void SchemaRecorder::value(const std::string& path, const json& schema) {
  Place& p = at(path);
  merge(p.schema, schema, p.conflicting_defaults);
}

void SchemaRecorder::distribution(const std::string& path, const sim::Distribution& fallback) {
  Place& p = at(path);
  if (p.schema.contains("anyOf")) return;  // declared as a distribution or something else
  merge(p.schema, {{"$ref", "#/$defs/distribution"}, {"default", distribution_json(fallback)}}, p.conflicting_defaults);
}

void SchemaRecorder::keys(const std::string& path, const std::vector<std::string>& known) {
  Place& p = at(path);
  merge(p.schema, {{"type", "object"}}, p.conflicting_defaults);
  p.listed = true;
  for (const std::string& key : known)
    if (std::find(p.keys.begin(), p.keys.end(), key) == p.keys.end()) p.keys.push_back(key);
}

void SchemaRecorder::required(const std::string& path, const std::string& key) { at(path).required.insert(key); }

void SchemaRecorder::names(const std::string& path, const std::string& placeholder) { placeholders_[place_of(path)] = placeholder; }

json SchemaRecorder::build(const std::string& place, const std::map<std::string, std::string>& meanings,
                           std::vector<std::string>& missing) const {
  const auto found = places_.find(place);
  json out = found != places_.end() ? found->second.schema : json::object();
  if (found != places_.end() && found->second.conflicting_defaults) out.erase("default");
  // The places one step below this one, in the order the loader names them.
  std::vector<std::string> below;
  if (found != places_.end()) below = found->second.keys;
  for (const auto& [other, p] : places_)
    if (other.size() > place.size() + 1 && other.starts_with(place + "/")) {
      const std::string key = other.substr(place.size() + 1, other.find('/', place.size() + 1) - place.size() - 1);
      if (std::find(below.begin(), below.end(), key) == below.end()) below.push_back(key);
    }
  if (out.empty()) {  // a place nothing read: an object or a list holding what was read, or a key never reached
    if (below.empty()) missing.push_back(documented_key(place) + " (no exemplar reaches it)");
    else out["type"] = std::find(below.begin(), below.end(), "[]") != below.end() ? "array" : "object";
  }
  // Every value has its row on the page; an object or a list of entries may have a row, or a
  // section of its own ("## topology", "### gc_pauses" under faults).
  const std::string key = documented_key(place);
  if (!place.empty() && !key.ends_with("[]")) {
    auto meaning = meanings.find(key);
    if (meaning == meanings.end() && !below.empty()) {
      meaning = meanings.find("## " + key);
      if (meaning == meanings.end()) meaning = meanings.find("## " + key.substr(key.rfind('.') + 1));
    }
    if (meaning != meanings.end()) out["description"] = meaning->second;
    else if (below.empty()) missing.push_back(key + " (no row in docs/scenario.md)");
  }
  const auto named = placeholders_.find(place);
  for (const std::string& key : below) {
    const std::string child = place + "/" + key;
    if (key == "[]") {
      json items = build(child, meanings, missing);
      if (out.contains("items")) {  // declared by hand, and read item by item: both hold
        bool ignored = false;
        merge(items, out["items"], ignored);
      }
      out["items"] = items;
    } else if (named != placeholders_.end() && named->second == key) {
      out["additionalProperties"] = build(child, meanings, missing);
    } else {
      out["properties"][key] = build(child, meanings, missing);
    }
  }
  if (found != places_.end()) {
    if (found->second.listed) out["additionalProperties"] = false;
    std::vector<std::string> required(found->second.required.begin(), found->second.required.end());
    if (!required.empty()) out["required"] = required;
    for (const std::string& key : required)  // a required key's fallback is never applied
      if (out.contains("properties") && out["properties"].contains(key)) out["properties"][key].erase("default");
  }
  return out;
}

json SchemaRecorder::schema(const std::map<std::string, std::string>& meanings) const {
  std::vector<std::string> missing;
  json body = build("", meanings, missing);
  if (!missing.empty()) throw std::logic_error(fmt::format("locksim schema: {}", fmt::join(missing, "; ")));
  json out = {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
              {"title", "locksim scenario"},
              {"description", "A scenario file of locksim: the world, the workload, the faults, the strategies and what they must "
                              "show (docs/scenario.md). Generated by `locksim schema` from the loader."}};
  for (const auto& [key, value] : body.items()) out[key] = value;
  out["$defs"]["distribution"] = distribution_schema();
  tidy(out);
  return out;
}

std::string documented_key(const std::string& place) {
  std::string key;
  for (const std::string& segment : segments(place))
    key += segment == "[]" ? "[]" : (key.empty() ? "" : ".") + segment;
  return key;
}

std::map<std::string, std::string> documented_meanings() {
  // Each section's first paragraph, unless it begins with the table.
  std::map<std::string, std::string> out;
  std::size_t from = 0;
  const std::string_view page = scenario_page();
  while (from < page.size()) {
    std::size_t end = page.find('\n', from);
    if (end == std::string_view::npos) end = page.size();
    const std::string_view line = page.substr(from, end - from);
    from = end + 1;
    if (!line.starts_with("#")) continue;
    const std::string heading(line.substr(line.find(' ') + 1));
    std::size_t start = from;
    while (start < page.size() && page[start] == '\n') ++start;
    std::size_t stop = page.find("\n\n", start);
    if (stop == std::string_view::npos) stop = page.size();
    std::string paragraph(page.substr(start, stop - start));
    std::replace(paragraph.begin(), paragraph.end(), '\n', ' ');
    if (!paragraph.starts_with('|')) out["## " + heading] = paragraph;
  }
  for (const DocumentedRow& row : documented_rows(page)) {
    std::string meaning = row.meaning;
    if (!row.default_text.starts_with('`') && row.default_text != "none" && row.default_text != "required")
      meaning += " (default: " + row.default_text + ")";
    out[row.key] = meaning;
  }
  return out;
}

std::vector<DocumentedRow> documented_rows(std::string_view page) {
  std::vector<DocumentedRow> out;
  std::size_t from = 0;
  while (from < page.size()) {
    std::size_t end = page.find('\n', from);
    if (end == std::string_view::npos) end = page.size();
    const std::string_view line = page.substr(from, end - from);
    from = end + 1;
    if (!line.starts_with("| `")) continue;
    std::vector<std::string> cells;
    std::string cell;
    for (char c : line.substr(1)) {
      if (c != '|') {
        cell += c;
        continue;
      }
      const auto first = cell.find_first_not_of(' '), last = cell.find_last_not_of(' ');
      cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
      cell.clear();
    }
    if (cells.size() != 4 || cells[0].size() < 3 || !cells[0].ends_with('`'))
      throw std::logic_error(fmt::format("docs/scenario.md: a key row of 4 cells, the key in backticks: {}", line));
    out.push_back({cells[0].substr(1, cells[0].size() - 2), cells[1], cells[2], cells[3]});
  }
  return out;
}

json scenario_schema() {
  SchemaRecorder recorder;
  for (const json& doc : exemplars()) load_document(doc, "(schema exemplar)", {}, &recorder);
  return recorder.schema(documented_meanings());
}

}  // namespace locksim
