#include "app/workbench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <semaphore>
#include <set>

#include "app/search/explore.hpp"
#include "app/input.hpp"
#include "app/metrics.hpp"
#include "app/runner.hpp"
#include "app/scenario.hpp"
#include "app/schema.hpp"
#include "models/faults/placement.hpp"
#include "reports/explain.hpp"
#include "reports/focus.hpp"
#include "reports/timeline_json.hpp"

namespace locksim::workbench {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

[[noreturn]] void refuse(const std::string& why) { throw BadRequest(why); }

// A string field of the request, bounded; `fallback` when it is left out.
std::string text_field(const json& request, const char* key, const std::string& fallback = "") {
  if (!request.contains(key)) return fallback;
  const json& v = request.at(key);
  if (!v.is_string()) refuse(fmt::format("/{}: expected a string", key));
  const std::string& s = v.get_ref<const std::string&>();
  try {
    check_length(std::string("/") + key, s);
  } catch (const InputError& e) {
    refuse(e.what());
  }
  return s;
}

std::uint64_t number_field(const json& request, const char* key, std::uint64_t fallback, std::uint64_t most) {
  if (!request.contains(key)) return fallback;
  const json& v = request.at(key);
  if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0) || v.get<std::uint64_t>() > most)
    refuse(fmt::format("/{}: expected a whole number from 0 to {}", key, most));
  return v.get<std::uint64_t>();
}

// A file name the folders may hold: at most 100 letters, digits, '.', '-', '_', not starting
// with '.' or '-', ending in `extension`.
bool plain_file_name(const std::string& name, const std::string& extension) {
  const auto allowed = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'; };
  return name.size() > extension.size() && name.size() <= 100 && name.front() != '.' && name.front() != '-' &&
         std::all_of(name.begin(), name.end(), allowed) && name.ends_with(extension);
}

// A script's error as the loader words it, "path/x.lua:12: message" (first line): its line
// and its message; nullopt where it names no line.
std::optional<std::pair<int, std::string>> lua_error_line(const std::string& what) {
  const std::string first = what.substr(0, what.find('\n'));
  for (std::size_t at = first.find(".lua:"); at != std::string::npos; at = first.find(".lua:", at + 1)) {
    std::size_t end = at + 5;
    while (end < first.size() && std::isdigit(static_cast<unsigned char>(first[end]))) ++end;
    if (end == at + 5 || end - at - 5 > 9 || end >= first.size() || first[end] != ':') continue;
    const int line = std::stoi(first.substr(at + 5, end - at - 5));
    const std::size_t text = first.find_first_not_of(" \t", end + 1);
    return std::pair{line, text == std::string::npos ? std::string() : first.substr(text)};
  }
  return std::nullopt;
}

// Whether `path` is a file directly inside `folder` (both as they are on disk, links followed).
bool inside(const std::string& path, const std::string& folder) {
  if (folder.empty()) return false;
  std::error_code ec;
  const fs::path file = fs::canonical(path, ec);
  if (ec) return false;
  const fs::path dir = fs::canonical(folder, ec);
  return !ec && file.parent_path() == dir && fs::is_regular_file(file, ec);
}

// What a choice a run asked was about, in words.
std::string choice_words(const std::string& stream) {
  if (stream == "sim.ties") return "which of the events ready at this instant runs first";
  if (stream == models::kPlacementStream) return "whether the search places a fault here (faults.explore): 0 is none";
  return fmt::format("which value of a declared set ({}) is drawn", stream);
}

json choices_of(const std::vector<Asked>& asked) {
  json out = json::array();
  for (std::size_t i = 0; i < asked.size(); ++i)
    out.push_back({{"index", i},
                   {"stream", asked[i].stream},
                   {"at_s", asked[i].at_s},
                   {"options", asked[i].options},
                   {"took", asked[i].option},
                   {"labels", asked[i].labels},
                   {"what", choice_words(asked[i].stream)}});
  return out;
}

std::vector<std::string> string_list(const json& request, const char* key) {
  std::vector<std::string> out;
  if (!request.contains(key)) return out;
  const json& v = request.at(key);
  if (!v.is_array() || v.size() > 64) refuse(fmt::format("/{}: expected a list of at most 64 strings", key));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) refuse(fmt::format("/{}/{}: expected a string", key, i));
    out.push_back(v[i].get<std::string>());
    try {
      check_length(fmt::format("/{}/{}", key, i), out.back());
    } catch (const InputError& e) {
      refuse(e.what());
    }
  }
  return out;
}

}  // namespace

// --- Runs in the background ------------------------------------------------

struct Workbench::Job {
  std::atomic<bool> cancel{false};
  std::atomic<bool> finished{false};
  std::atomic<std::size_t> done{0}, total{0};
  std::mutex mutex;  // guards what follows
  Clock::time_point asked = Clock::now();
  std::string state = "queued";  // queued, running, done, failed, cancelled
  std::string result;            // run --json's text
  std::string error;
};

namespace {
// The slots runs take, shared by every workbench of the process (a test makes several).
std::counting_semaphore<Workbench::kRunsAtOnce>& run_slots() {
  static std::counting_semaphore<Workbench::kRunsAtOnce> slots(Workbench::kRunsAtOnce);
  return slots;
}
}  // namespace

Workbench::Workbench(Folders folders) : folders_(std::move(folders)) {
  // Every scenario loaded once before any trial runs: a Lua workload declares its metrics then,
  // so that a later load changes nothing a running trial reads (the server then freezes them).
  scenarios();
}

Workbench::~Workbench() {
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, job] : jobs_) job->cancel = true;
  }
  while (running_.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

json Workbench::call(const std::string& name, const json& request) {
  if (!request.is_object()) refuse("expected a JSON object as the request");
  reap();
  try {
    if (name == "scenarios") return scenarios();
    if (name == "scenario") return scenario(request);
    if (name == "run") return run(request);
    if (name == "job") return job(request);
    if (name == "cancel") return cancel(request);
    if (name == "trial") return trial(request);
    if (name == "branch") return branch(request);
    if (name == "hint") return hint(request);
    if (name == "lua") return lua(request);
    if (name == "save") return save(request);
    if (name == "scripts") return scripts();
    if (name == "script") return script(request);
  } catch (const InputError& e) {
    throw BadRequest(e.what());
  } catch (const json::exception& e) {
    throw BadRequest(std::string("a field of the wrong type: ") + e.what());
  }
  refuse(fmt::format("no call {}: expected scenarios, scenario, run, job, cancel, trial, branch, hint, lua, save, scripts or script",
                     quote_value(name)));
}

std::string Workbench::scenario_file(const std::string& id) const {
  if (id.starts_with("dir/")) {
    const std::string name = id.substr(4);
    if (folders_.dir.empty()) refuse(fmt::format("scenario {}: the server was started without --dir", quote_value(id)));
    if (!plain_file_name(name, ".json")) refuse(fmt::format("scenario {}: expected dir/NAME.json, a file of --dir", quote_value(id)));
    const std::string path = (fs::path(folders_.dir) / name).string();
    if (!inside(path, folders_.dir)) refuse(fmt::format("scenario {}: no such file in --dir", quote_value(id)));
    return path;
  }
  const std::string path = std::string(LOCKSIM_SCENARIO_DIR) + "/" + id + ".json";
  if (!plain_file_name(id + ".json", ".json") || !inside(path, LOCKSIM_SCENARIO_DIR))
    refuse(fmt::format("scenario {}: expected a catalogue scenario's name or dir/NAME.json", quote_value(id)));
  return fs::proximate(path).string();  // as `locksim run NAME` names it, in results too
}

std::vector<std::string> Workbench::overrides(const json& request) const {
  std::vector<std::string> sets = string_list(request, "set");
  for (const std::string& s : sets) {
    const std::string key = s.substr(0, s.find('='));
    // Keys that name files, and values that could: the loader would read what they name.
    if (s.find('=') == std::string::npos || s.starts_with("+") || key.starts_with("workload") || key.starts_with("strategies") ||
        s.find("script") != std::string::npos)
      refuse(fmt::format("/set: {}: expected path=value for a key of the scenario that names no file", quote_value(s)));
  }
  const std::string lua = text_field(request, "strategy_file");
  if (!lua.empty()) {
    std::string path;
    if (lua.starts_with("draft:") && plain_file_name(lua.substr(6), ".lua")) path = folders_.drafts + "/" + lua.substr(6);
    else if (lua.starts_with("dir:") && plain_file_name(lua.substr(4), ".lua")) path = folders_.dir + "/" + lua.substr(4);
    else if (plain_file_name(lua, ".lua")) path = std::string(LOCKSIM_STRATEGY_DIR) + "/" + lua;
    if (path.empty() || !(inside(path, folders_.drafts) || inside(path, folders_.dir) || inside(path, LOCKSIM_STRATEGY_DIR)))
      refuse(fmt::format("/strategy_file {}: expected draft:NAME.lua, dir:NAME.lua or a file of strategies/", quote_value(lua)));
    sets.push_back(std::string(kScriptOverride) + fs::canonical(path).string());
  }
  return sets;
}

json Workbench::scenarios() const {
  json out = json::array();
  const auto add = [&](const std::string& id, const std::string& path) {
    json entry = {{"id", id}};
    try {
      const Scenario s = load_scenario(path);
      entry["name"] = s.name;
      entry["description"] = s.description;
      entry["lesson"] = s.lesson;
      entry["workload"] = s.workload;
      entry["strategies"] = json::array();
      for (const auto& c : s.strategies) entry["strategies"].push_back(c.shown());
    } catch (const InputError& e) {
      entry["error"] = e.what();
    }
    out.push_back(std::move(entry));
  };
  for (const std::string& path : catalogue()) add(fs::path(path).stem().string(), path);
  if (!folders_.dir.empty()) {
    std::vector<std::string> own;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(folders_.dir, ec))
      if (e.path().extension() == ".json" && plain_file_name(e.path().filename().string(), ".json")) own.push_back(e.path().string());
    std::sort(own.begin(), own.end());
    for (const std::string& path : own) add("dir/" + fs::path(path).filename().string(), path);
  }
  return out;
}

json Workbench::scenario(const json& request) const {
  const std::string id = text_field(request, "scenario");
  const Scenario s = load_scenario(scenario_file(id), overrides(request));
  json strategies = json::array();
  for (const auto& c : s.strategies) {
    json params = json::object();
    for (const auto& [name, value] : c.params) params[name] = value;
    strategies.push_back({{"name", c.shown()}, {"params", params}, {"lua", c.script != nullptr}});
  }
  json properties = json::array();
  for (const MetricInfo* m : findings()) properties.push_back({{"name", m->name}, {"meaning", m->meaning}});
  json keys = json::array();  // what an override may set, as docs/scenario.md gives each key
  for (const DocumentedRow& row : documented_rows(scenario_page()))
    keys.push_back({{"key", row.key}, {"type", row.type}, {"default", row.default_text}, {"meaning", row.meaning}});
  return {{"id", id},           {"name", s.name},
          {"description", s.description}, {"lesson", s.lesson},
          {"source", s.source}, {"trials", s.trials},
          {"seed", s.seed},     {"strategies", strategies},
          {"properties", properties},     {"config", effective_config(s)}, {"keys", keys},
          {"hash", fmt::format("{:016x}", s.hash)}};
}

// --- Runs ------------------------------------------------------------------

json Workbench::run(const json& request) {
  const std::string id = text_field(request, "scenario");
  Scenario s = load_scenario(scenario_file(id), overrides(request), string_list(request, "strategy"));
  if (request.contains("trials")) s.trials = static_cast<int>(number_field(request, "trials", 0, 100'000));
  if (s.trials < 1) refuse("/trials: expected at least 1");
  if (request.contains("seed")) s.seed = number_field(request, "seed", 0, UINT64_MAX);
  auto job = std::make_shared<Job>();
  std::uint64_t number = 0;
  {
    std::lock_guard lock(mutex_);
    if (jobs_.size() >= 16) refuse("16 runs are kept already: cancel one, or wait until a finished one is forgotten");
    number = next_job_++;
    jobs_[number] = job;
  }
  ++running_;
  // The thread lets go of everything it holds before it counts itself out: once running_ is
  // 0, the workbench may be gone and the process may end.
  std::thread([job, scenario = std::make_shared<const Scenario>(std::move(s)), running = &running_]() mutable {
    {
      run_slots().acquire();
      const RunControl control{.jobs = 1,
                               .stop = [job, deadline = Clock::now() + std::chrono::seconds(static_cast<int>(kRunSeconds))] {
                                 return job->cancel.load() || Clock::now() >= deadline;
                               },
                               .progress = [job](std::size_t done, std::size_t total) {
                                 job->done = done;
                                 job->total = total;
                               }};
      std::string result, error;
      if (!job->cancel.load()) {
        {
          std::lock_guard lock(job->mutex);
          job->state = "running";
        }
        try {
          result = reports::to_json(run_scenario(*scenario, control));
        } catch (const std::exception& e) {
          error = e.what();
        }
      }
      run_slots().release();
      std::lock_guard lock(job->mutex);
      job->result = std::move(result);
      job->error = std::move(error);
      job->state = job->cancel.load() ? "cancelled" : job->error.empty() ? "done" : "failed";
      job->finished = true;
    }
    scenario.reset();
    job.reset();
    --*running;
  }).detach();
  return {{"job", number}};
}

json Workbench::job(const json& request) {
  const std::uint64_t number = number_field(request, "job", 0, UINT64_MAX);
  std::shared_ptr<Job> j;
  {
    std::lock_guard lock(mutex_);
    const auto it = jobs_.find(number);
    if (it == jobs_.end()) refuse(fmt::format("/job {}: no such run (finished ones are forgotten after a minute)", number));
    j = it->second;
  }
  std::lock_guard lock(j->mutex);
  j->asked = Clock::now();
  json out = {{"job", number}, {"state", j->state}, {"done", j->done.load()}, {"total", j->total.load()}};
  if (j->state == "done") out["results"] = json::parse(j->result);
  if (j->state == "failed") out["error"] = j->error;
  return out;
}

json Workbench::cancel(const json& request) {
  const std::uint64_t number = number_field(request, "job", 0, UINT64_MAX);
  std::lock_guard lock(mutex_);
  const auto it = jobs_.find(number);
  if (it == jobs_.end()) refuse(fmt::format("/job {}: no such run", number));
  it->second->cancel = true;
  return {{"job", number}, {"cancelled", true}};
}

void Workbench::reap() {
  std::lock_guard lock(mutex_);
  const auto now = Clock::now();
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    Job& j = *it->second;
    std::lock_guard job_lock(j.mutex);
    const double idle = std::chrono::duration<double>(now - j.asked).count();
    if (!j.finished && idle > kForgottenAfterS) j.cancel = true;  // its page is gone
    if (j.finished && idle > 60) {
      it = jobs_.erase(it);
      continue;
    }
    ++it;
  }
}

// --- Trials ----------------------------------------------------------------

namespace {

// Refuses a token whose scenario or scripts lie outside the server's folders, before anything
// of it is read: a catalogue scenario by its name, the user's by its path in --dir; scripts
// from the drafts, --dir or strategies/.
void check_token(const Token& t, const Folders& folders) {
  const std::string& named = t.scenario;
  std::error_code ec;
  const bool catalogued = plain_file_name(named + ".json", ".json") && !fs::exists(named, ec) &&
                          inside(std::string(LOCKSIM_SCENARIO_DIR) + "/" + named + ".json", LOCKSIM_SCENARIO_DIR);
  if (!catalogued && !(fs::path(named).is_absolute() && inside(named, folders.dir)))
    refuse(fmt::format("token: its scenario {} is neither in the catalogue nor in --dir", quote_value(named)));
  const auto script_allowed = [&](const std::string& path) {
    return fs::path(path).is_absolute() &&
           (inside(path, folders.drafts) || inside(path, folders.dir) || inside(path, LOCKSIM_STRATEGY_DIR));
  };
  for (const std::string& s : t.sets)
    if ((s.starts_with(kScriptOverride) && !script_allowed(s.substr(kScriptOverride.size()))) || s.starts_with(kWorkloadOverride) ||
        (!s.starts_with("+") && s.find("script") != std::string::npos))
      refuse(fmt::format("token: its override {} names a file outside the server's folders", quote_value(s)));
}

}  // namespace

json Workbench::trial(const json& request) const {
  Token t;
  if (request.contains("token")) {
    const std::string text = text_field(request, "token");
    t = parse_token(text);  // loads its scenario: checked below before its trial runs
  } else {
    const std::string id = text_field(request, "scenario");
    const std::string file = scenario_file(id);
    const std::vector<std::string> sets = overrides(request);
    const std::string strategy = text_field(request, "strategy");
    const Scenario s = load_scenario(file, sets, strategy.empty() ? std::vector<std::string>{} : std::vector<std::string>{strategy});
    t.engine = LOCKSIM_ENGINE_VERSION;
    t.scenario = id.starts_with("dir/") ? fs::canonical(file).string() : id;
    t.scenario_hash = s.hash;
    t.sets = sets;
    t.strategy = strategy.empty() ? s.strategies.front().shown() : strategy;
    strategy_named(s, t.strategy);
    t.seed = number_field(request, "seed", s.seed, UINT64_MAX);
    const Schedule schedule = Schedule::parse(text_field(request, "schedule", "dfs"));
    if (schedule.kind == Schedule::Kind::pct) refuse("/schedule: expected \"dfs\" (with its choices) or \"\" (the seed's order)");
    t.schedule = schedule.text();
  }
  check_token(t, folders_);
  const auto started = Clock::now();
  const Replay r = replay(t);
  const double wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  std::string centre;
  const std::string first = r.fired.empty() ? std::string() : r.fired.front().substr(0, r.fired.front().find(' '));
  if (workload_finding(first)) centre = first;
  const reports::Focus story = reports::focus(r.outcome.timeline, r.fired, centre);
  std::map<std::string, std::string> meanings;
  for (const auto& m : metrics()) meanings[m.name] = m.meaning;
  json fired = json::array();
  for (const std::string& f : r.fired) {
    const std::string name = f.substr(0, f.find(' '));
    const MetricInfo* m = metric_info(name);
    fired.push_back({{"metric", name}, {"value", std::stod(f.substr(f.find(' ') + 1))}, {"meaning", m ? m->meaning : ""}});
  }
  json out = {{"token", t.text()},
              {"replay", "locksim replay " + t.text()},
              {"scenario", r.scenario.name},
              {"lesson", r.scenario.lesson},
              {"strategy", r.strategy.shown()},
              {"seed", t.seed},
              {"schedule", t.schedule},
              {"schedule_words", r.outcome.timeline.schedule},
              {"fired", fired},
              {"story", {{"about", story.about}, {"left_out", story.left_out}, {"lines", reports::narrate(story.told)}}},
              {"explain", r.fired.empty() ? std::vector<std::string>{reports::safe_story(r.outcome.timeline)}
                                          : reports::explain(r.outcome.timeline, r.fired, meanings)},
              {"timeline", r.outcome.timeline},
              {"choices", choices_of(r.asked)},
              {"events", r.outcome.events},
              {"trace_hash", fmt::format("{:016x}", r.outcome.trace_hash)},
              {"wall_ms", wall_ms}};
  return out;
}

json Workbench::branch(const json& request) const {
  Token t = parse_token(text_field(request, "token"));
  Schedule schedule = Schedule::parse(t.schedule);
  if (schedule.kind == Schedule::Kind::pct) refuse("/token: a pct schedule cannot be branched; open its scenario in the scheduler's seat");
  const std::uint64_t choice = number_field(request, "choice", 0, 10'000'000);
  const std::uint64_t option = number_field(request, "option", 0, 1'000'000);
  Deviations kept;  // the choices before this one stay as they were; the later ones take their defaults
  for (const auto& [i, v] : schedule.deviations)
    if (i < choice) kept[i] = v;
  if (option != 0) kept[choice] = option;
  t.schedule = Schedule::dfs(std::move(kept)).text();
  return trial({{"token", t.text()}});
}

json Workbench::hint(const json& request) const {
  const Token t = parse_token(text_field(request, "token"));
  check_token(t, folders_);
  ExploreOptions o;
  o.scenario = t.scenario;
  o.sets = t.sets;
  o.strategy = t.strategy;
  o.property = text_field(request, "property", "any");
  o.mode = "dfs";
  o.bound = static_cast<int>(number_field(request, "bound", 2, 3));
  o.shrink = false;
  o.budget = 20'000;
  o.time_s = 10;
  const Finding f = explore(o);
  json out = {{"found", f.found}, {"exhausted", f.exhausted}, {"bound", o.bound}, {"runs", f.runs}, {"property", o.property}};
  if (!f.found) return out;
  out["token"] = f.token.text();
  out["fired"] = f.fired;
  const Schedule theirs = Schedule::parse(f.token.schedule);
  const Schedule mine = Schedule::parse(t.schedule);
  json steps = json::array();
  for (const auto& [i, v] : theirs.deviations) steps.push_back({{"choice", i}, {"option", v}});
  out["choices"] = steps;
  // The next step: the first choice where the counterexample leaves the learner's schedule.
  std::set<std::uint64_t> indices;
  for (const auto& [i, v] : theirs.deviations) indices.insert(i);
  for (const auto& [i, v] : mine.deviations) indices.insert(i);
  for (const std::uint64_t i : indices) {
    const auto a = theirs.deviations.find(i), b = mine.deviations.find(i);
    const std::uint64_t want = a == theirs.deviations.end() ? 0 : a->second, have = b == mine.deviations.end() ? 0 : b->second;
    if (want != have) {
      out["next"] = {{"choice", i}, {"option", want}};
      break;
    }
  }
  return out;
}

// --- Lua text edited in the page ---------------------------------------------

json Workbench::lua(const json& request) const {
  const std::string name = text_field(request, "name");
  const std::string text = text_field(request, "text");
  if (!plain_file_name(name, ".lua")) refuse(fmt::format("/name {}: expected a file name ending in .lua", quote_value(name)));
  if (folders_.drafts.empty()) refuse("this server keeps no drafts");
  const std::string path = folders_.drafts + "/" + name;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) refuse(fmt::format("{}: the draft could not be written", name));
  }
  try {
    const StrategyChoice c = load_script_file(fs::canonical(path).string());
    json params = json::object();
    for (const auto& [p, v] : c.params) params[p] = v;
    return {{"ok", true}, {"draft", "draft:" + name}, {"description", c.script->info.description}, {"params", params}};
  } catch (const InputError& e) {
    // "path:line: message", as the command line prints a script's error.
    json error = {{"message", e.what()}};
    if (const auto at = lua_error_line(e.what())) {
      error["line"] = at->first;
      error["message"] = at->second;
    }
    return {{"ok", false}, {"draft", "draft:" + name}, {"error", error}};
  }
}

json Workbench::scripts() const {
  json out = json::array();
  for (const std::string& path : script_catalogue()) out.push_back(fs::path(path).filename().string());
  return out;
}

json Workbench::script(const json& request) const {
  const std::string name = text_field(request, "name");
  const std::string path = std::string(LOCKSIM_STRATEGY_DIR) + "/" + name;
  if (!plain_file_name(name, ".lua") || !inside(path, LOCKSIM_STRATEGY_DIR))
    refuse(fmt::format("/name {}: expected a Lua file of strategies/", quote_value(name)));
  return {{"name", name}, {"text", read_script(path)}};
}

json Workbench::save(const json& request) const {
  const std::string name = text_field(request, "name");
  const std::string text = text_field(request, "text");
  if (folders_.dir.empty()) refuse("the server was started without --dir: there is no folder of yours to save into");
  if (!plain_file_name(name, ".lua")) refuse(fmt::format("/name {}: expected a file name ending in .lua", quote_value(name)));
  const std::string path = folders_.dir + "/" + name;
  std::error_code ec;
  if (fs::exists(path, ec) && !(request.contains("replace") && request.at("replace") == true))
    refuse(fmt::format("{}: already in --dir; send \"replace\": true to write over it", name));
  const std::string partial = path + ".part";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) refuse(fmt::format("{}: could not be written", name));
  }
  fs::rename(partial, path, ec);  // whole or not at all
  if (ec) refuse(fmt::format("{}: could not be written ({})", name, ec.message()));
  return {{"saved", "dir:" + name}};
}

}  // namespace locksim::workbench
