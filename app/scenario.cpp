#include "app/scenario.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include <sys/resource.h>

#include "app/database_input.hpp"
#include "app/fault_kind.hpp"
#include "app/metrics.hpp"
#include "app/workload_kind.hpp"
#include "app/reader.hpp"
#include "app/scenario_parts.hpp"
#include "models/workloads/rollout/rollout.hpp"
#include "models/strategies/script.hpp"

namespace locksim {

using namespace std::chrono_literals;

models::ErrorKind read_error_kind(const Reader& r, const std::string& name, const std::string& key) {
  if (auto kind = locksim::error_kind(name)) return *kind;
  r.fail("an error kind (timeout, rejected, 1062, 1213, 1205, 1467, lock_busy, dropped, fenced, internal, session_expired), "
         "another server error's code (1690, 40001) or a strategy's own answer (seat_taken), got " + quote_value(name), key);
}

// Another server error's code (MariaDB's number, PostgreSQL's SQLSTATE) or the name of an answer
// a strategy declares in its `outcomes`: what errors.<code> counts.
bool answer_code(const std::string& name) {
  const auto all = [&](auto pred) { return std::all_of(name.begin(), name.end(), [&](char c) { return pred(static_cast<unsigned char>(c)); }); };
  const bool number = !name.empty() && name.size() <= 5 && all([](unsigned char c) { return std::isdigit(c) != 0; });
  const bool sqlstate = name.size() == 5 && all([](unsigned char c) { return std::isdigit(c) != 0 || std::isupper(c) != 0; });
  const bool answer = !name.empty() && name.size() <= 32 && std::islower(static_cast<unsigned char>(name[0])) &&
                      all([](unsigned char c) { return std::islower(c) != 0 || std::isdigit(c) != 0 || c == '_'; });
  return number || sqlstate || answer;
}

namespace {

// What parse_expectation() reads, as a pattern for the schema.
constexpr const char* kComparison = R"(^\s*(>=|<=|>|=|<)\s*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?(\s+in every trial)?\s*$)";

Expectation parse_expectation(const Reader& r, const std::string& strategy, const std::string& metric) {
  const json& v = r.raw().at(metric);
  if (!is_metric(metric))
    r.fail("a metric name (duplicate_rows, duplicate_rows.per_million, errors.1062, latency_ms.p99, steps.3.error, ...), got " +
               quote_value(metric),
           metric);
  if (!v.is_string()) r.fail("a comparison such as \"> 0\" or \"= 0\"", metric);
  std::istringstream in(v.get<std::string>());
  Expectation e{strategy, metric, "", 0};
  in >> e.op >> e.value;
  std::string rest, word;
  while (in >> word) rest += (rest.empty() ? "" : " ") + word;
  if (in.bad() || !(e.op == ">" || e.op == ">=" || e.op == "=" || e.op == "<=" || e.op == "<") || !std::isfinite(e.value) ||
      !(rest.empty() || rest == "in every trial"))
    r.fail("a comparison such as \"> 0\", \"= 0\" or \"= 1 in every trial\", got " + quote_value(v.get<std::string>()), metric);
  e.every_trial = !rest.empty() || metric_info(metric)->aggregate == models::checkers::Aggregate::each;
  if (!rest.empty() && !metric_form(metric).form.empty())
    r.fail(fmt::format("a comparison over the run: {} is not a value of one trial (drop \"in every trial\")", metric), metric);
  return e;
}

const models::strategies::ParamInfo* param_info(const models::strategies::Entry& entry, const std::string& name) {
  for (const auto& p : entry.info.params)
    if (p.name == name) return &p;
  return nullptr;
}

std::string param_names(const models::strategies::Entry& entry) {
  if (entry.info.params.empty()) return "it has none";
  std::string names;
  for (const auto& p : entry.info.params) names += (names.empty() ? "" : ", ") + p.name;
  return names;
}

// A parameter's values, by its kind.
// An index parameter's value by name, as a file writes it: "none", "plain" or "unique".
std::optional<double> index_named(const json& v) {
  if (!v.is_string()) return std::nullopt;
  const std::string name = v.get<std::string>();
  if (name == "none") return 0;
  if (name == "plain") return 1;
  if (name == "unique") return 2;
  return std::nullopt;
}

// A parameter's number: an index may be named.
double param_value(const models::strategies::ParamInfo& info, const json& v) {
  if (info.kind == models::strategies::ParamKind::index)
    if (auto named = index_named(v)) return *named;
  if (info.kind == models::strategies::ParamKind::flag && v.is_boolean()) return v.get<bool>() ? 1 : 0;
  return v.get<double>();
}

bool param_value_ok(const models::strategies::ParamInfo& info, const json& v) {
  if (info.kind == models::strategies::ParamKind::index && index_named(v)) return true;
  if (info.kind == models::strategies::ParamKind::flag && v.is_boolean()) return true;
  if (!v.is_number()) return false;
  const double x = v.get<double>();
  if ((info.at_least && x < *info.at_least) || (info.at_most && x > *info.at_most)) return false;
  switch (info.kind) {
    case models::strategies::ParamKind::duration_ms: return x >= 0 && x <= limits::max_ms;
    case models::strategies::ParamKind::count: return x >= 0 && x <= 1e6 && x == std::floor(x);
    case models::strategies::ParamKind::flag: return x == 0 || x == 1;
    case models::strategies::ParamKind::index: return x == 0 || x == 1 || x == 2;
  }
  return false;
}

std::string expected_value(const models::strategies::ParamInfo& info) {
  if (info.kind == models::strategies::ParamKind::duration_ms && (info.at_least || info.at_most))
    return fmt::format("a duration in ms from {} to {}", info.at_least.value_or(0), info.at_most.value_or(limits::max_ms));
  switch (info.kind) {
    case models::strategies::ParamKind::duration_ms: return fmt::format("a duration in ms from 0 to {}", limits::max_ms);
    case models::strategies::ParamKind::count: return "a whole number from 0 to 1000000";
    case models::strategies::ParamKind::flag: return "true or false (or 1, 0)";
    case models::strategies::ParamKind::index: return "\"none\", \"plain\" or \"unique\" (or 0, 1, 2)";
  }
  return "a number";
}

}  // namespace


// A strategy's parameters: the object `params` (at `at` under `owner`) over `entry`'s defaults.
models::strategies::Params params_over_defaults(const Reader& owner, const std::string& at, const models::strategies::Entry& entry,
                                                const std::string& name, const json& params) {
  models::strategies::Params out;
  for (const auto& p : entry.info.params) out[p.name] = p.value;
  if (!params.is_object()) owner.fail("an object of parameters", at);
  for (const auto& [key, value] : params.items()) {
    const models::strategies::ParamInfo* info = param_info(entry, key);
    if (info == nullptr) owner.fail(fmt::format("a parameter of {}: {} (unknown parameter)", name, param_names(entry)), at + "/" + key);
    if (!param_value_ok(*info, value)) owner.fail(expected_value(*info), at + "/" + key);
    out[key] = param_value(*info, value);
  }
  return out;
}

namespace {

// The keys a scenario file has at its top level: its values, its sections, and the keys a
// workload kind owns there (the sessions' "steps", a rollout).
const std::vector<std::string>& top_level_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out = {"$schema"};
    for (const std::string& key : top_key_names()) out.push_back(key);
    for (const char* section : {"workload", "topology", "database", "redis", "zookeeper", "etcd", "clients", "faults", "strategies", "expect"})
      out.push_back(section);
    for (const WorkloadKind* kind : workload_kinds())
      for (const std::string& key : kind->top_level_keys()) out.push_back(key);
    return out;
  }();
  return keys;
}

// The document's strategies as a list: "all" (or none given) spelled out as the names of its
// workload's strategies, so that one can carry a parameter or a script can join them.
json& spelled_out_strategies(json& doc) {
  const std::string workload =
      doc.contains("workload") && doc["workload"].is_object() && doc["workload"].value("kind", json()).is_string()
          ? doc["workload"]["kind"].get<std::string>()
          : workload_kinds().front()->name();
  json& list = doc["strategies"];
  if (list.is_null() || list == "all") {
    list = json::array();
    for (const auto& e : models::strategies::registry())
      if (e.workload == workload) list.push_back(e.info.name);
  }
  return list;
}

// A script's label unless the scenario gives one: its file's name ("strategies/my.lua" or
// "my": "my.lua"), as found; the name as written when it is found nowhere (loading says so).
std::string script_label(const std::string& path) {
  try {
    return std::filesystem::path(script_path(path)).filename().string();
  } catch (const InputError&) {
    return std::filesystem::path(path).filename().string();
  }
}

// Appends the script `path` (`--strategy-file`) to the document's strategies, spelling "all"
// out first. Returns its label.
std::string add_script(json& doc, const std::string& path) {
  if (!doc.is_object()) return script_label(path);  // the loader says what is wrong with it
  json& list = spelled_out_strategies(doc);
  if (list.is_array()) list.push_back(json{{"script", path}});
  return script_label(path);
}

// `NAME.param=value`, where NAME is a strategy the scenario runs (its name, or its "as"
// label) or one `only` adds: written into the document as that strategy's parameter, so the
// scenario hash and replay tokens carry it. Returns false for any other path.
bool set_strategy_param(json& doc, const std::string& assignment, const std::vector<std::string>& only) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos) return false;
  const std::string path = assignment.substr(0, eq);
  auto dot = path.find('.');
  if (dot == std::string::npos) return false;
  // A script's label has dots of its own ("my.lua.ttl_ms"): the longest label that prefixes the path.
  if (doc.is_object() && doc.contains("strategies") && doc["strategies"].is_array())
    for (const json& item : doc["strategies"]) {
      const std::string label = !item.is_object()                                        ? std::string()
                                : item.contains("as") && item["as"].is_string()          ? item["as"].get<std::string>()
                                : item.contains("script") && item["script"].is_string() ? script_label(item["script"].get<std::string>())
                                                                                         : std::string();
      if (!label.empty() && path.size() > label.size() + 1 && path.starts_with(label + ".") && label.size() > dot) dot = label.size();
    }
  const std::string name = path.substr(0, dot), param = path.substr(dot + 1);
  const auto& keys = top_level_keys();
  if (std::find(keys.begin(), keys.end(), name) != keys.end()) return false;
  const auto fail = [&](const std::string& expected) {
    throw InputError(fmt::format("--set {}: expected {}", shown(path), expected));
  };
  if (!doc.is_object()) return false;
  json& list = spelled_out_strategies(doc);  // so that one of them can carry a parameter
  if (!list.is_array()) return false;  // the loader says what is wrong with it
  const auto name_of_item = [](const json& item) -> std::string {
    if (item.is_string()) return item.get<std::string>();
    if (item.is_object() && item.contains("name") && item["name"].is_string()) return item["name"].get<std::string>();
    if (item.is_object() && item.contains("script") && item["script"].is_string()) return script_label(item["script"].get<std::string>());
    return "";
  };
  const auto label_of = [&](const json& item) -> std::string {
    if (item.is_object() && item.contains("as") && item["as"].is_string()) return item["as"].get<std::string>();
    return name_of_item(item);
  };
  // A label names one copy; a name names every copy of that strategy.
  std::vector<std::size_t> targets;
  for (std::size_t i = 0; i < list.size(); ++i)
    if (label_of(list[i]) == name) targets.push_back(i);
  if (targets.empty())
    for (std::size_t i = 0; i < list.size(); ++i)
      if (name_of_item(list[i]) == name) targets.push_back(i);
  const models::strategies::Entry* entry = models::strategies::find(name);
  if (targets.empty()) {
    if (entry == nullptr) return false;  // not a strategy either: the loader names the unknown key
    if (std::find(only.begin(), only.end(), name) == only.end())
      fail(fmt::format("a strategy this scenario runs; {} is not one of them (add --strategy {} to run it)", name, name));
    list.push_back(name);
    targets.push_back(list.size() - 1);
  }
  json value;
  try {
    value = json::parse(assignment.substr(eq + 1));
  } catch (const json::exception&) {
    value = assignment.substr(eq + 1);
  }
  for (std::size_t i : targets) {
    json& item = list[i];
    if (item.is_string()) item = json{{"name", item.get<std::string>()}};
    if (item.is_object() && item.contains("script")) {  // its parameters are checked when the script is loaded
      item["params"][param] = value;
      continue;
    }
    const models::strategies::Entry* of = models::strategies::find(name_of_item(item));
    if (of == nullptr) return false;  // the loader names the unknown strategy
    const models::strategies::ParamInfo* info = param_info(*of, param);
    if (info == nullptr) fail(fmt::format("a parameter of {}: {}", of->info.name, param_names(*of)));
    if (!param_value_ok(*info, value)) fail(expected_value(*info) + ", got " + quote_value(assignment.substr(eq + 1)));
    item["params"][param] = value;
  }
  return true;
}

}  // namespace

bool is_file_name(const std::string& name) {
  return !name.empty() && name.size() <= 100 && name.front() != '.' && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '+' ||
           c == '.';
  });
}

// A script's text, bounded as a scenario file is.
std::string read_script(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::file_size(path, ec) > limits::max_file_bytes)
    throw InputError(fmt::format("{}: expected a Lua file of at most {} bytes", shown(path), limits::max_file_bytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read the file", shown(path)));
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

namespace {

// Parses JSON text, nested at most limits::max_json_depth deep. Throws InputError for text
// that is not JSON, nests deeper, or holds a number too large for a double.
// How deep the text's arrays and objects nest, brackets inside strings aside: one pass over the
// bytes. (nlohmann's parser with a callback, the other way to bound the depth, looks through a list's
// elements at the end of each object in it: 100,000 steps took 13 s to be refused.)
std::size_t nesting_depth(std::string_view text) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

json parse_bounded(const std::string& text, const std::string& where) {
  if (nesting_depth(text) > static_cast<std::size_t>(limits::max_json_depth))
    throw InputError(fmt::format("{}: expected JSON nested at most {} deep", where, limits::max_json_depth));
  // A key given twice in one object: JSON leaves it to the reader, and nlohmann's keeps the
  // last silently; a scenario's author meant one of them, so neither is taken. A SAX pass
  // before the parse finds it (nlohmann's parser callback costs seconds over 100,000 objects).
  struct KeysOnce : nlohmann::json_sax<json> {
    struct Frame {
      bool object;
      std::set<std::string> keys{};
      std::string key{};
      std::size_t index = 0;
    };
    std::vector<Frame> frames;
    std::string twice;  // the JSON path of the first key given twice
    bool value() {
      if (!frames.empty() && !frames.back().object) ++frames.back().index;
      return true;
    }
    bool null() override { return value(); }
    bool boolean(bool) override { return value(); }
    bool number_integer(number_integer_t) override { return value(); }
    bool number_unsigned(number_unsigned_t) override { return value(); }
    bool number_float(number_float_t, const string_t&) override { return value(); }
    bool string(string_t&) override { return value(); }
    bool binary(binary_t&) override { return value(); }
    bool start_object(std::size_t) override {
      frames.push_back({true});
      return true;
    }
    bool start_array(std::size_t) override {
      frames.push_back({false});
      return true;
    }
    bool end_object() override {
      frames.pop_back();
      return value();
    }
    bool end_array() override {
      frames.pop_back();
      return value();
    }
    bool key(string_t& name) override {
      Frame& top = frames.back();
      top.key = name;
      if (top.keys.insert(name).second) return true;
      for (const Frame& f : frames) twice += "/" + (f.object ? f.key : std::to_string(f.index));
      return false;  // the first is the one told
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
  } keys;
  json::sax_parse(text, &keys);
  if (!keys.twice.empty()) {
    const std::string at = where.ends_with(": /") ? where.substr(0, where.size() - 1) : where + ": ";  // a file's root is "/"
    throw InputError(fmt::format("{}{}: expected each key once in an object, got it twice", at, shown(keys.twice, 200)));
  }
  try {
    return json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e400
    std::string why = e.what();
    if (why.size() > 160) why = why.substr(0, 160) + "...";
    throw InputError(fmt::format("{}: expected JSON ({})", where, shown(why, 200)));
  }
}

// The first string or key in `j` that is not UTF-8, as a JSON path; "" if none.
std::string invalid_text(const json& j, const std::string& path, int depth = 0) {
  if (depth > limits::max_json_depth) return "";
  if (j.is_string()) return valid_utf8(j.get_ref<const std::string&>()) ? "" : (path.empty() ? "/" : path);
  if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i)
      if (auto bad = invalid_text(j[i], path + "/" + std::to_string(i), depth + 1); !bad.empty()) return bad;
  }
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (!valid_utf8(key)) return path + "/" + key;
      if (auto bad = invalid_text(value, path + "/" + key, depth + 1); !bad.empty()) return bad;
    }
  }
  return "";
}

// `a.b.c=value` applied to the JSON document; the value is JSON if it parses, else a string.
// Objects on the way are made as needed; a list is only written within its length (or one
// past it, to append), so no path makes a long list out of nothing.
void override_json(json& doc, const std::string& file, const std::string& assignment) {
  check_length("--set", assignment);
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(fmt::format("--set {}: expected path=value, for example clients.count=50", quote_value(assignment)));
  const std::string path = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  json value;
  try {
    value = parse_bounded(text, "--set " + path);
  } catch (const InputError&) {
    value = text;  // not JSON: the text itself
  }
  const auto refuse = [&](const std::string& why) {
    throw InputError(fmt::format("{}: {}: --set cannot write here ({})", shown(file), shown(path), why));
  };
  json* at = &doc;
  std::size_t from = 0;
  for (;;) {
    const std::size_t dot = path.find('.', from);
    const std::string part = path.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
    if (part.empty()) refuse("an empty name between dots");
    if (at->is_null()) *at = json::object();
    if (at->is_object()) {
      at = &(*at)[part];
    } else if (at->is_array()) {
      const auto index = parse_u64(part);
      if (!index || *index > at->size()) refuse(fmt::format("a list of {} here: an index from 0 to {}", at->size(), at->size()));
      if (*index == at->size()) at->push_back(nullptr);
      at = &(*at)[*index];
    } else {
      refuse("a " + std::string(at->type_name()) + " here, not an object or a list");
    }
    if (dot == std::string::npos) break;
    from = dot + 1;
  }
  *at = std::move(value);
}

}  // namespace

bool Expectation::holds(double m) const {
  if (op == ">") return m > value;
  if (op == ">=") return m >= value;
  if (op == "=") return m == value;
  if (op == "<=") return m <= value;
  return m < value;
}

std::string Expectation::text() const {
  return fmt::format("{} {} {} {}{}", strategy, metric, op, value, every_trial ? " in every trial" : "");
}

void narrow_strategies(Scenario& s, const std::vector<std::string>& names) {
  if (names.empty()) return;
  std::vector<StrategyChoice> chosen;
  std::vector<std::string> own, others;  // the file's strategies; those named that it does not list
  for (const auto& c : s.strategies) own.push_back(c.shown());
  // A script the scenario lists, named by a path to its file (./workloads/jobs/skip-locked.lua).
  const auto same_file = [](const StrategyChoice& c, const std::string& name) {
    if (c.script_file.empty() || name.find('/') == std::string::npos) return false;
    std::error_code ec;
    try {
      return std::filesystem::equivalent(script_path(c.script_file), name, ec);
    } catch (const InputError&) {
      return false;
    }
  };
  for (const auto& name : names) {
    auto it = std::find_if(s.strategies.begin(), s.strategies.end(), [&](const auto& c) { return c.shown() == name; });
    if (it == s.strategies.end())
      it = std::find_if(s.strategies.begin(), s.strategies.end(), [&](const auto& c) { return same_file(c, name); });
    const auto* entry = models::strategies::find(name);
    if (it != s.strategies.end()) {
      chosen.push_back(*it);
    } else if (entry != nullptr && entry->workload == s.workload) {
      others.push_back(name);
      StrategyChoice c{name, {}};
      for (const auto& p : entry->info.params) c.params[p.name] = p.value;
      chosen.push_back(c);
    } else {
      throw InputError(fmt::format("--strategy {}: expected a strategy of the {} workload (see `locksim list`) or a label of "
                                   "the scenario",
                                   quote_value(name), s.workload));
    }
  }
  s.strategies = chosen;
  // The lesson speaks of the file's strategies: a reader of another's results is told so.
  if (!others.empty() && !s.lesson.empty() && !own.empty())
    s.lesson += fmt::format(" (This lesson was written for {}; {} {} not among them.)", fmt::join(own, ", "), fmt::join(others, ", "),
                            others.size() == 1 ? "is" : "are");
}

const models::strategies::Entry& StrategyChoice::entry() const {
  if (script) return *script;
  const models::strategies::Entry* e = models::strategies::find(name);
  if (e == nullptr) throw std::logic_error("locksim::StrategyChoice: no strategy " + name);
  return *e;
}

std::string script_path(const std::string& path) {
  check_length("the script", path);
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) return path;
  const std::filesystem::path p(path);
  for (const std::filesystem::path& candidate :
       {std::filesystem::path(LOCKSIM_STRATEGY_DIR).parent_path() / p, std::filesystem::path(LOCKSIM_STRATEGY_DIR) / p,
        std::filesystem::path(LOCKSIM_STRATEGY_DIR) / (path + ".lua")})
    if (!path.empty() && p.is_relative() && std::filesystem::is_regular_file(candidate, ec))
      return std::filesystem::proximate(candidate).string();
  throw InputError(fmt::format("{}: no such script file, and none of that name in {}", shown(path), LOCKSIM_STRATEGY_DIR));
}

namespace {
StrategyChoice load_script_file(const std::string& path, std::string* text) {
  StrategyChoice choice;
  choice.script_file = script_path(path);
  choice.name = std::filesystem::path(choice.script_file).filename().string();  // "x.lua" also when named as x
  *text = read_script(choice.script_file);
  try {
    choice.script = models::strategies::load_script(choice.name, choice.script_file, *text);
  } catch (const models::strategies::ScriptError& e) {
    throw InputError(e.what());
  }
  for (const auto& p : choice.script->info.params) choice.params[p.name] = p.value;
  return choice;
}
}  // namespace

StrategyChoice load_script_file(const std::string& path) {
  std::string text;
  return load_script_file(path, &text);
}

std::vector<std::string> script_catalogue() {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(LOCKSIM_STRATEGY_DIR, ec))
    if (entry.path().extension() == ".lua") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::string scenario_path(const std::string& name_or_path) {
  check_length("the scenario", name_or_path);
  std::error_code ec;
  if (std::filesystem::exists(name_or_path, ec)) return name_or_path;
  const std::string in_catalogue = std::string(LOCKSIM_SCENARIO_DIR) + "/" + name_or_path + ".json";
  if (is_file_name(name_or_path) && std::filesystem::exists(in_catalogue, ec)) return std::filesystem::proximate(in_catalogue).string();
  throw InputError(fmt::format("{}: no such scenario file, and no {}.json in {}", shown(name_or_path), shown(name_or_path),
                               LOCKSIM_SCENARIO_DIR));
}

std::vector<std::string> catalogue() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(LOCKSIM_SCENARIO_DIR))
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides, const std::vector<std::string>& only) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError(fmt::format("{}: expected a scenario file (a JSON file)", shown(path)));
  if (std::filesystem::file_size(path, ec) > limits::max_file_bytes)
    throw InputError(fmt::format("{}: expected a scenario file of at most {} bytes", shown(path), limits::max_file_bytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read the file", shown(path)));
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  json doc = parse_bounded(bytes, shown(path) + ": /");
  // "workload": "sessions" is short for {"kind": "sessions"}.
  if (doc.is_object() && doc.contains("workload") && doc["workload"].is_string())
    doc["workload"] = json{{"kind", doc["workload"]}};
  std::vector<std::string> narrowed = only;  // the scripts of --strategy-file stay in a narrowed run
  for (const auto& o : overrides)
    if (o.starts_with(kWorkloadOverride) && doc.is_object()) {
      check_length("--workload-file", o);
      doc["workload"] = json{{"script", o.substr(kWorkloadOverride.size())}};
      doc["strategies"] = json::array();
      doc.erase("expect");
      doc.erase("lesson");  // the scenario's lesson is about its own workload
    }
  for (const auto& o : overrides)
    if (o.starts_with(kScriptOverride)) {
      check_length("--strategy-file", o);
      const std::string label = add_script(doc, o.substr(kScriptOverride.size()));
      if (!is_file_name(label))
        throw InputError(fmt::format("--strategy-file {}: the file's name labels its results: expected {}",
                                     quote_value(o.substr(kScriptOverride.size())), kFileName));
      if (!only.empty() && std::find(narrowed.begin(), narrowed.end(), label) == narrowed.end()) narrowed.push_back(label);
    }
  for (const auto& o : overrides) {
    if (o.starts_with(kScriptOverride) || o.starts_with(kWorkloadOverride)) continue;
    check_length("--set", o);
    if (!set_strategy_param(doc, o, only)) override_json(doc, path, o);
  }
  return load_document(std::move(doc), path, narrowed);
}

namespace {

// Clients whose arrival is at_start start every operation as a process at once, each with its
// stack: 16 KiB for a C++ strategy, 1 MiB for a Lua one (models/strategies/script.hpp). Stacks
// are address space before they are memory, and a run whose first trial cannot map them all
// under this process's ceiling (ulimit -v, or the one main sets) is refused here, before any
// trial, rather than running the other strategies first and ending out of memory.
void check_stacks(const Reader& top, const Scenario& s) {
  const models::ClientsConfig& clients = s.deployment.clients;
  if (clients.traffic || clients.arrival.kind != models::ArrivalKind::at_start) return;
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
  const bool script = std::any_of(s.strategies.begin(), s.strategies.end(), [](const StrategyChoice& c) { return !c.entry().script.empty(); });
  const std::uint64_t stack = script ? models::strategies::kScriptStackBytes : sim::EngineConfig{}.stack_bytes;
  const std::uint64_t processes = static_cast<std::uint64_t>(clients.clients) * static_cast<std::uint64_t>(clients.operations_per_client);
  const std::uint64_t needed = processes * stack;
  if (needed <= limit.rlim_cur) return;
  constexpr double kGiB = 1 << 30;
  top.fail(fmt::format("clients whose stacks fit this process's address space: {} x {} operations arriving at_start start {} processes "
                       "at once, whose {} stacks ({}) need {:.1f} GiB, more than the {:.1f} GiB it may map (ulimit -v; fewer "
                       "clients or operations, or another clients.arrival.kind{}; docs/limits.md, \"Memory\")",
                       clients.clients, clients.operations_per_client, processes, script ? "1 MiB" : "16 KiB",
                       script ? "a Lua strategy's" : "a C++ strategy's", static_cast<double>(needed) / kGiB,
                       static_cast<double>(limit.rlim_cur) / kGiB, script ? ", or C++ strategies only" : ""),
           "clients");
}

}  // namespace

namespace {

// Fails on a key of `r` that another workload kind than `kind` owns (`owned`: a kind's keys),
// naming that kind (`message`: "{} only for the {} workload", the key and the kind).
template <class Owned>
void refuse_others_keys(const Reader& r, const WorkloadKind* kind, Owned&& owned, const char* message) {
  const std::vector<std::string> own = owned(kind);
  for (const auto& [key, value] : r.raw().items()) {
    if (std::find(own.begin(), own.end(), key) != own.end()) continue;
    for (const WorkloadKind* other : workload_kinds()) {
      const std::vector<std::string> theirs = owned(other);
      if (std::find(theirs.begin(), theirs.end(), key) != theirs.end())
        r.fail(fmt::format(fmt::runtime(message), key, other->name()), key);
    }
  }
}

}  // namespace

Scenario load_document(json doc, const std::string& path, const std::vector<std::string>& narrowed, SchemaRecorder* recorder) {
  if (const std::string bad = invalid_text(doc, ""); !bad.empty())
    throw InputError(fmt::format("{}: {}: expected text in UTF-8", shown(path), shown(bad)));

  Scenario s;
  const models::db::sql::PinWhileLoading pinning(*s.pins);
  s.file = path;
  s.resolved = doc.dump();
  s.hash = fnv1a(s.resolved);
  const Reader top(doc, path, "", recorder);
  if (!top.raw().is_object()) top.fail("an object");
  top.declare_keys(top_level_keys());
  top.declare("$schema", {{"type", "string"}});  // for editors: where the schema of this file is
  for (const auto& [key, value] : top.raw().items())
    if (std::find(top_level_keys().begin(), top_level_keys().end(), key) == top_level_keys().end())
      top.fail(fmt::format("one of the keys {} (unknown key; or a strategy's parameter as NAME.param, for a strategy the "
                           "scenario runs)",
                           fmt::join(top_level_keys(), ", ")),
               key);
  read_top_keys(top, s);

  // The workload: its kind reads its keys (app/workloads/).
  const json none;
  const json& workload = top.has("workload") ? top.raw().at("workload") : none;
  const auto& kinds = workload_kinds();
  const auto claimed = std::find_if(kinds.begin(), kinds.end(), [&](const WorkloadKind* k) { return k->claims(workload); });
  if (!top.has("workload")) {
    s.kind = kinds.front();
    s.kind->load(nullptr, top, s);
  } else if (claimed != kinds.end() && (*claimed)->name() == std::string("script")) {
    s.kind = *claimed;
    const Reader w = top.child("workload");
    s.kind->load(&w, top, s);
  } else {
    const Reader w = top.child("workload");
    const std::vector<std::string> names = workload_kind_names();
    top.declare("workload", {{"type", {"object", "string"}}, {"if", {{"type", "string"}}}, {"then", {{"enum", names}}}});
    // Every kind's keys; a key of another kind than the one named is refused naming its kind.
    std::vector<std::string> known = {"kind"};
    for (const WorkloadKind* k : kinds)
      for (const std::string& key : key_names(k->keys()))
        if (std::find(known.begin(), known.end(), key) == known.end()) known.push_back(key);
    w.only(known);
    s.workload = w.choice("kind", names.front(), names);
    s.kind = *std::find_if(kinds.begin(), kinds.end(), [&](const WorkloadKind* k) { return k->name() == s.workload; });
    refuse_others_keys(w, s.kind, [](const WorkloadKind* k) { return key_names(k->keys()); }, "{} only for the {} workload");
    read_keys(w, s.kind->keys(), s);
    s.kind->load(&w, top, s);
  }
  refuse_others_keys(top, s.kind, [](const WorkloadKind* k) { return k->top_level_keys(); }, "\"{}\" only with the {} workload");
  load_sections(top, s);
  models::DeploymentConfig& d = s.deployment;
  top.declare("faults", {{"type", "object"}, {"default", json::object()}});
  if (top.has("faults")) {
    const Reader f = top.child("faults");
    if (!f.raw().is_object()) f.fail("an object");
    std::vector<std::string> kinds;
    for (const FaultKind* k : fault_kinds()) kinds.push_back(k->key());
    f.declare_keys(kinds);
    for (const auto& [key, value] : f.raw().items())
      if (std::none_of(fault_kinds().begin(), fault_kinds().end(), [&](const FaultKind* k) { return key == k->key(); })) {
        std::string list;
        for (const FaultKind* k : fault_kinds()) list += (list.empty() ? "" : ", ") + std::string(k->key());
        f.fail("one of the keys " + list + " (unknown key)", key);
      }
    const NodeNames nodes{d.app_servers, s.kind->node_names(s)};
    for (const FaultKind* kind : fault_kinds())
      if (f.has(kind->key())) s.faults.push_back({kind, kind->load(f.child(kind->key()), nodes)});
  }

  // A rollout's plans are strategies of their own, over the scenario's "rollout".
  std::optional<models::rollout::Plan> rollout;
  if (top.has("rollout")) {
    // A plan's SQL steps are MariaDB's online ALTER TABLE, which the PostgreSQL engine does not run.
    if (d.database.server.database.engine != models::db::Engine::mariadb)
      top.fail("\"rollout\" only on the MariaDB engine (its steps are MariaDB's online ALTER TABLE)", "rollout");
    rollout = rollout_base(top, s.time_budget);
    s.rollout = std::make_shared<const models::rollout::Plan>(*rollout);
  }
  // Strategies: "all", names, {"name": ..., "as": "a label", "params": {...}}, or a plan
  // {"as": "a label", "rollout": [steps]}.
  std::vector<json> chosen;
  top.declare("strategies", {{"type", {"string", "array"}}, {"minItems", 1}, {"if", {{"type", "string"}}}, {"then", {{"const", "all"}}}});
  if (s.lua_workload && (!top.has("strategies") || !top.raw().at("strategies").is_array() || top.raw().at("strategies").empty()))
    top.fail(fmt::format("a list of the {} workload's strategies, each {{\"script\": \"a file.lua\"}} with handle(req)", s.workload),
             "strategies");
  if (!top.has("strategies") || top.raw().at("strategies") == "all") {
    for (const auto& e : models::strategies::registry())
      if (e.workload == s.workload) chosen.push_back(e.info.name);
  } else {
    const json& list = top.raw().at("strategies");
    if (!list.is_array() || list.empty()) top.fail("\"all\" or a non-empty list of strategies", "strategies");
    chosen.assign(list.begin(), list.end());
  }
  std::uint64_t scripts_hash = 0;  // the scripts' contents: a token pins them
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const std::string at = "strategies/" + std::to_string(i);
    const json& item = chosen[i];
    std::string name, label, script;
    json params = json::object();
    if (item.is_string()) {
      name = item.get<std::string>();
    } else if (item.is_object()) {
      const Reader r = top.child("strategies").item(i);
      top.declare(at, {{"type", {"string", "object"}}});
      r.only({"name", "script", "as", "params", "rollout"});
      r.declare("params", {{"type", "object"}});
      r.declare_names("params", "<param>");
      r.declare("params/<param>", {{"type", {"number", "boolean"}}});
      if (r.has("rollout")) {
        if (!top.has("rollout")) r.fail("a scenario \"rollout\" (its table, code and duration) for a plan's steps", "rollout");
        if (r.has("name") || r.has("script") || r.has("params")) r.fail("only \"as\" with a plan's \"rollout\" steps");
        if (!r.has("as")) r.fail("\"as\": the plan's name");
        label = r.string("as", "");
        if (!is_file_name(label)) r.fail(std::string(kFileName) + " (it names report files), got " + quote_value(label), "as");
        for (const auto& earlier : s.strategies)
          if (earlier.shown() == label) r.fail("each plan once (" + quote_value(label) + " twice)", "as");
        StrategyChoice plan{"rollout", {}, label};
        plan.rollout = load_plan(r, *rollout);
        plan.script = plan_entry(plan.rollout);
        s.strategies.push_back(std::move(plan));
        continue;
      }
      if (r.has("name") == r.has("script")) r.fail("either \"name\" (a strategy of `locksim list`), \"script\" (a Lua file) or \"rollout\" (a plan's steps)");
      name = r.string("name", "");
      script = r.string("script", "");
      label = r.string("as", "");
      if (r.has("as") && !is_file_name(label)) r.fail(std::string(kFileName) + " (it names report files), got " + quote_value(label), "as");
      if (r.has("params")) params = item.at("params");
    } else {
      top.fail("a strategy name, {\"name\": ..., \"params\": {...}} or {\"script\": \"a file.lua\"}", at);
    }
    StrategyChoice choice{name, {}, label};
    if (!script.empty()) {
      try {
        script_path(script);
      } catch (const InputError&) {
        top.fail("a Lua strategy file (the path, or one under the project's folder or strategies/), got " + quote_value(script),
                 at + "/script");
      }
      std::string text;
      choice = load_script_file(script, &text);
      choice.label = label;
      if (label.empty() && !is_file_name(choice.name))
        top.fail(std::string(kFileName) + " as the script's file name, or an \"as\" label", at + "/script");
      // Its content, not where it was found from: a token replays from any folder.
      scripts_hash = fnv1a(fmt::format("{:016x} {} {}", scripts_hash, choice.shown(), text));
      name = choice.name;
    }
    const models::strategies::Entry* entry = choice.script ? choice.script.get() : models::strategies::find(name);
    if (entry == nullptr) top.fail("a strategy name (see `locksim list`), got " + quote_value(name), at);
    if (entry->workload != s.workload)
      top.fail(fmt::format("a strategy of the {} workload; {} is one of {}", s.workload, name, entry->workload), at);
    for (const auto& earlier : s.strategies)
      if (earlier.shown() == choice.shown())
        top.fail("each strategy once, or told apart with \"as\": \"a label\" (" + quote_value(choice.shown()) + " twice)", at);
    choice.params = params_over_defaults(top, at + "/params", *entry, name, params);
    s.strategies.push_back(std::move(choice));
  }
  if (s.workload_hash != 0) scripts_hash = fnv1a(fmt::format("{:016x} {:016x}", scripts_hash, s.workload_hash));
  if (scripts_hash != 0) s.hash = fnv1a(fmt::format("{:016x} {:016x}", s.hash, scripts_hash));

  check_rows(top, d.database, s.strategies, s.memory_budget_mb);
  check_stacks(top, s);
  s.kind->check_scenario(top, s);
  if (top.has("expect")) {
    const Reader e = top.child("expect");
    top.declare("expect", {{"type", "object"}});
    if (!e.raw().is_object()) e.fail("an object: strategy -> {metric: comparison}");
    // A strategy's comparisons; those of a workload with steps of its own may stand at the top.
    e.declare_names("", "<strategy>");
    e.declare("<strategy>", {{"type", {"object", "string"}}, {"if", {{"type", "string"}}}, {"then", {{"pattern", kComparison}}}});
    e.declare_names("<strategy>", "<metric>");
    e.declare("<strategy>/<metric>", {{"type", "string"}, {"pattern", kComparison}});
    // A workload that runs steps of its own (the sessions') has one strategy, named as the kind:
    // its expectations may be written without it.
    const bool flat = s.kind->steps(s) != nullptr && !e.raw().contains(s.kind->name());
    if (flat)
      for (const auto& [metric, comparison] : e.raw().items()) s.expect.push_back(parse_expectation(e, s.kind->name(), metric));
    for (const auto& [strategy, metrics] : e.raw().items()) {
      if (flat) break;
      if (std::none_of(s.strategies.begin(), s.strategies.end(), [&](const auto& c) { return c.shown() == strategy; }))
        e.fail("a strategy this scenario runs (its name, or its \"as\" label), got " + quote_value(strategy), strategy);
      const Reader m = e.child(strategy);
      if (!metrics.is_object()) m.fail("an object: metric -> comparison");
      for (const auto& [metric, comparison] : metrics.items()) s.expect.push_back(parse_expectation(m, strategy, metric));
    }
  }
  for (const Expectation& x : s.expect)
    if (x.metric.starts_with("steps.") || x.metric.starts_with("rows.")) {
      const Reader e = top.child("expect");
      const bool flat = s.kind->steps(s) != nullptr && x.strategy == s.kind->name() && !e.raw().contains(x.strategy);
      check_session_metric(flat ? e : e.child(x.strategy), x.metric, s.kind->steps(s), d.database);
    }
  narrow_strategies(s, narrowed);
  return s;
}

}  // namespace locksim
