// A fuzz test of how the `locksim` command takes its input: every catalogue scenario file,
// mutated on the parsed JSON and on the bytes, mutated flag sets and replay tokens, and
// strategies written in Lua (strategies/*.lua mutated, and files made up whole), each case run
// as a child process under a time and a memory limit.
//
// The command's contract for bad input is one line on stderr, exit status 2 and nothing
// written. Otherwise it exits 0 (ran), 1 (an expectation of the scenario not met) or 3 (a
// checker fired). Anything else is a failure: a signal, another exit status (70, an internal
// error, included), a rejection of several lines or of none, files left by a rejection, files
// written outside reports/out/, a case over its time limit.
//
// The cases are a function of the seed: case i draws from a generator of its own, so a failing
// case reruns alone with `--seed S --case i`, and each failure is saved with a script that
// reproduces it.
//
//   locksim_fuzz LOCKSIM SCENARIO_DIR [--seed S] [--cases N] [--case I] [--time-s T]
//                [--case-time-s T] [--failures DIR] [--log FILE] [--family TEXT]
//
// --family TEXT draws only from the families whose name holds TEXT ("lua": the Lua scripts);
// a case found so reruns alone with the same --family.
//
// LOCKSIM_FUZZ_SEED, LOCKSIM_FUZZ_CASES and LOCKSIM_FUZZ_TIME_S give --seed, --cases and
// --time-s when the flags do not.

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------
// Limits and options

struct Options {
  std::string locksim;
  fs::path scenario_dir;
  std::uint64_t seed = 1;
  // 800: case i mutates catalogue file i mod N, so each of the 34 files is the source of about
  // 23 cases, and the families are drawn by weight (kFamilies, 129 in all): the rarest, weight
  // 1 to 3, come up about 6, 12 and 19 times. Fewer cases would leave some file or family barely
  // tried; the test runs in the normal build only (not under the sanitizers, see the Makefile).
  int cases = 800;
  std::optional<int> only_case;
  double total_s = 240;  // no case starts after this; the CTest timeout is well above it
  double case_s = 30;    // a case still running after this is a hang
  // A case's address space: a runaway allocation fails in the child rather than swapping the
  // machine that other builds share.
  std::uint64_t memory_bytes = std::uint64_t{4} << 30;
  fs::path failures = "fuzz-failures";
  std::optional<fs::path> log;  // a line for every case: what it was and how it ended
  std::string family;           // only the families whose name holds this ("lua"), when set
  std::size_t failures_shown_max = 25;  // printed in full; all are saved
  std::size_t failures_saved_max = 200;
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// ---------------------------------------------------------------------------------------------
// The generator. Its own, since the standard distributions differ between libraries and the
// cases must not.

std::uint64_t mix64(std::uint64_t z) {  // SplitMix64's finalizer
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

class Rng {
 public:
  Rng(std::uint64_t seed, std::uint64_t stream) : state_(mix64(seed ^ mix64(stream + 0x9e3779b97f4a7c15ull))) {}
  std::uint64_t next() { return mix64(state_ += 0x9e3779b97f4a7c15ull); }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
  bool one_in(std::size_t n) { return below(n) == 0; }
  template <class T>
  const T& pick(const std::vector<T>& items) {
    return items[below(items.size())];
  }

 private:
  std::uint64_t state_;
};

// ---------------------------------------------------------------------------------------------
// Cases

/// One invocation of locksim, in a fresh folder holding `files` and `folders`.
struct Case {
  std::string family;  // the mutation family: "extreme number", "--set", ...
  std::string what;    // the mutation, without where it was made: "1e400 as text"
  std::string where;   // where: "/clients/count", "account-bind.json", ...
  std::vector<std::string> args;
  std::map<std::string, std::string> files;
  std::vector<std::string> folders;
  std::string names_file{};  // a mutated file: a rejection names it, unless it names a flag
};

/// A catalogue scenario, the seed of every mutation.
struct Source {
  std::string file_name;  // account-bind.json
  std::string name;       // account-bind: how the catalogue names it
  std::string bytes;
  json doc;
  std::string strategy;  // one the file runs, for `explore --strategy`
};

/// A strategy written in Lua, from the project's strategies/ (the scenario folder's sibling).
struct Script {
  std::string file_name;  // redlock.lua
  std::string bytes;
};

struct Context {
  std::vector<Source> sources;
  std::vector<std::string> strategies;  // every strategy the catalogue names
  std::string token;                    // a replay token that replays
  std::string scenario_dir;
  std::vector<Script> scripts;          // strategies/*.lua, the seeds of the script families
  std::size_t script_scenario = 0;      // of sources: a small account-bind scenario the scripts run in
};

std::string hex(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

// Bytes as a reader can see them: non-printable ones escaped, long ones cut.
std::string printable(const std::string& text, std::size_t max = 160) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && out.size() < max; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') out += "\\n";
    else if (c < 0x20 || c >= 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  if (out.size() >= max && text.size() > max) out += fmt::format("... ({} bytes)", text.size());
  return out;
}

// A shell word for `text`, exactly: bash's $'...' for anything beyond the plain characters.
std::string shell_word(const std::string& text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_./=:,+-@%", c) != nullptr;
  });
  if (plain) return text;
  std::string out = "$'";
  for (unsigned char c : text) {
    if (c == '\'' || c == '\\') out += fmt::format("\\{}", static_cast<char>(c));
    else if (c < 0x20 || c >= 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  return out + "'";
}

// ---------------------------------------------------------------------------------------------
// Tables of hostile values

// Numbers as JSON text: the extremes of each type the validator converts to, and text no JSON
// number can be (1e400 overflows a double; NaN is not JSON).
const std::vector<std::string> kNumbers = {
    "0", "-1", "-1e308", "1e308", "1e13", "9.3e12", "1e-300", "9223372036854775808" /* 2^63 */,
    "18446744073709551616" /* 2^64 */, "18446744073709551615", "9223372036854775807", "-9223372036854775808",
    "-9223372036854775809", "2147483648", "-2147483649", "4294967296", "0.5", "1.5", "1e12", "1e7", "10000000",
    std::string(400, '9'), "0." + std::string(400, '0') + "1", "1e400", "-1e400", "1e-400", "-0", "-0.0", "NaN",
    "Infinity", "-Infinity", "0x10", "1e", "01", "+1", ".5"};

// Strings as JSON text: long, not UTF-8, escapes a line-based message must not pass through,
// path-like names (a scenario's name becomes a folder under reports/out/).
std::vector<std::string> odd_strings() {
  return {"\"" + std::string(100 * 1024, 'a') + "\"",
          "\"" + std::string(300, 'n') + "\"",
          "\"\xff\xfe\"",
          "\"a\xc3\x28z\"",
          "\"\xc0\xaf\"",
          "\"\xed\xa0\x80\"",
          "\"\\ud800\"",
          "\"line\\nbreak\"",
          "\"carriage\\rreturn\"",
          "\"nul\\u0000byte\"",
          "\"../../x\"",
          "\"a/b\"",
          "\"..\"",
          "\".\"",
          "\"/\"",
          "\"\"",
          "\" \"",
          "\"{}{:>999999999}%s%n\"",
          "\"all\"",
          "\"h\xc3\xa9llo \xe2\x9c\x93\""};
}

// Values of each JSON type, for a value of another type.
const std::vector<std::string> kTypedValues = {"\"fuzz\"", "true", "false", "null", "[]", "{}", "[1, \"a\"]",
                                               "{\"a\": 1}", "{\"fixed_ms\": 1}", "0", "1.5", "-7"};

// ---------------------------------------------------------------------------------------------
// Structural mutations: a node of the parsed document, chosen at random, changed.

// Text that no JSON value holds (bytes that are not UTF-8, `1e400`, 100,000 brackets) enters
// the document as this marker, replaced by the raw text after it is written out.
const std::string kMarker = "@@locksim-fuzz-raw@@";

std::string dump_with(const json& doc, const std::string& raw) {
  std::string text = doc.dump(2);
  const std::string quoted = "\"" + kMarker + "\"";
  if (const auto at = text.find(quoted); at != std::string::npos) text.replace(at, quoted.size(), raw);
  return text;
}

// Every node but the root, by JSON pointer, and whether its parent is an object.
struct Node {
  json::json_pointer at;
  bool in_object;
};
std::vector<Node> nodes(const json& doc) {
  std::vector<Node> out;
  std::function<void(const json&, const json::json_pointer&)> walk = [&](const json& j, const json::json_pointer& at) {
    if (j.is_object()) {
      for (const auto& [key, value] : j.items()) {
        out.push_back({at / key, true});
        walk(value, at / key);
      }
    } else if (j.is_array()) {
      for (std::size_t i = 0; i < j.size(); ++i) {
        out.push_back({at / i, false});
        walk(j[i], at / i);
      }
    }
  };
  walk(doc, json::json_pointer());
  return out;
}

// A node that `keep` accepts, or any node when none does.
Node pick_node(Rng& rng, const json& doc, const std::function<bool(const json&)>& keep) {
  const auto all = nodes(doc);
  std::vector<Node> kept;
  for (const auto& n : all)
    if (keep(doc.at(n.at))) kept.push_back(n);
  return rng.pick(kept.empty() ? all : kept);
}

struct Mutant {
  std::string what, where, bytes;
};

Mutant delete_key(Rng& rng, const Source& s) {
  json doc = s.doc;
  std::vector<Node> members;
  for (const auto& n : nodes(doc))
    if (n.in_object) members.push_back(n);
  const Node n = rng.pick(members);
  doc.at(n.at.parent_pointer()).erase(n.at.back());
  return {"key deleted", n.at.to_string(), doc.dump(2)};
}

Mutant add_unknown_key(Rng& rng, const Source& s) {
  json doc = s.doc;
  std::vector<json::json_pointer> objects{json::json_pointer()};
  for (const auto& n : nodes(doc))
    if (doc.at(n.at).is_object()) objects.push_back(n.at);
  const auto at = rng.pick(objects);
  // Raw keys: a key that is not UTF-8 only exists as text.
  const std::vector<std::string> keys = {"\"fuzz\"", "\"\"", "\"\xff\xfe\"", "\"" + std::string(300, 'k') + "\"",
                                         "\"Name\"", "\"name \"", "\"line\\nbreak\"", "\"__proto__\""};
  const std::string key = rng.pick(keys);
  doc.at(at)[kMarker] = 1;
  std::string text = doc.dump(2);
  text.replace(text.find("\"" + kMarker + "\""), kMarker.size() + 2, key);
  return {"unknown key " + printable(key, 40), at.to_string(), text};
}

Mutant retype_value(Rng& rng, const Source& s) {
  json doc = s.doc;
  const Node n = pick_node(rng, doc, [](const json&) { return true; });
  std::string value;
  do value = rng.pick(kTypedValues);
  while (json::parse(value).type() == doc.at(n.at).type() && !doc.at(n.at).is_number());
  doc.at(n.at) = kMarker;
  return {"value of another type: " + value, n.at.to_string(), dump_with(doc, value)};
}

Mutant extreme_number(Rng& rng, const Source& s) {
  json doc = s.doc;
  const Node n = pick_node(rng, doc, [](const json& j) { return j.is_number(); });
  const std::string number = rng.pick(kNumbers);
  doc.at(n.at) = kMarker;
  return {"number " + printable(number, 40), n.at.to_string(), dump_with(doc, number)};
}

// A number scaled within reason (0, a thousandth, a thousand times): most pass the validator,
// so the run meets a world the catalogue never built (a latency past every timeout, say).
Mutant scale_number(Rng& rng, const Source& s) {
  json doc = s.doc;
  const Node n = pick_node(rng, doc, [](const json& j) { return j.is_number(); });
  json& v = doc.at(n.at);
  const double factor = rng.pick(std::vector<double>{0, 0.001, 0.1, 10, 1000, 1e6});
  if (!v.is_number()) v = 1;
  const double scaled = v.get<double>() * factor;
  if (v.is_number_float()) v = scaled;
  else v = static_cast<std::int64_t>(std::max(-1e15, std::min(1e15, scaled)));
  return {fmt::format("number times {:g}", factor), n.at.to_string(), doc.dump(2)};
}

Mutant odd_string(Rng& rng, const Source& s) {
  json doc = s.doc;
  Node n = pick_node(rng, doc, [](const json& j) { return j.is_string(); });
  if (doc.contains("name") && rng.one_in(4)) n = {json::json_pointer("/name"), true};  // reports/out/<name>/ is a path
  std::string value = rng.pick(odd_strings());
  std::string what = "string " + printable(value, 40);
  if (rng.one_in(4)) {  // another string of the file: a value that looks right in the wrong place
    const Node other = pick_node(rng, doc, [](const json& j) { return j.is_string(); });
    value = doc.at(other.at).dump();
    what = "string from elsewhere in the file";
  }
  doc.at(n.at) = kMarker;
  return {what, n.at.to_string(), dump_with(doc, value)};
}

Mutant resize_array(Rng& rng, const Source& s) {
  json doc = s.doc;
  const Node n = pick_node(rng, doc, [](const json& j) { return j.is_array(); });
  json& a = doc.at(n.at);
  if (!a.is_array()) a = json::array({a});
  const json original = a;
  std::string what;
  switch (rng.below(5)) {
    case 0:
      a = json::array();
      what = "array emptied";
      break;
    case 1:
      if (!a.empty()) a.erase(a.size() - 1);
      what = "array less its last item";
      break;
    case 2:
      a.push_back(original.empty() ? json(1) : original[rng.below(original.size())]);
      what = "array with an item copied";
      break;
    default: {
      const std::size_t size = rng.pick(std::vector<std::size_t>{17, 100, 1000});
      for (std::size_t i = a.size(); i < size; ++i) a.push_back(original.empty() ? json(i) : original[i % original.size()]);
      what = fmt::format("array grown to {} items", size);
    }
  }
  return {what, n.at.to_string(), doc.dump(2)};
}

Mutant deep_nesting(Rng& rng, const Source& s) {
  const std::size_t depth = rng.pick(std::vector<std::size_t>{1000, 100'000});
  std::string open, close, what;
  switch (rng.below(3)) {
    case 0:
      open = std::string(depth, '[');
      close = std::string(depth, ']');
      what = fmt::format("{} nested arrays", depth);
      break;
    case 1:
      for (std::size_t i = 0; i < depth; ++i) open += "{\"a\":";
      open += "1";
      close = std::string(depth, '}');
      what = fmt::format("{} nested objects", depth);
      break;
    default:
      open = std::string(depth, '[');
      what = fmt::format("{} unclosed [", depth);
  }
  if (rng.one_in(4)) return {what + " around the document", "/", open + s.bytes + close};
  json doc = s.doc;
  const Node n = pick_node(rng, doc, [](const json&) { return true; });
  doc.at(n.at) = kMarker;
  return {what, n.at.to_string(), dump_with(doc, open + close)};
}

// Two or three of the mutations above on one file: each alone is often rejected at once;
// together they reach what none does alone (a key deleted and an extreme number beside it).
Mutant stacked(Rng& rng, const Source& s) {
  using Mutate = Mutant (*)(Rng&, const Source&);
  const std::vector<Mutate> mutations = {delete_key, retype_value, extreme_number, odd_string, resize_array};
  Source current = s;
  Mutant m{"", "", s.bytes};
  std::string what, where;
  for (std::size_t i = 0, n = 2 + rng.below(2); i < n; ++i) {
    m = rng.pick(mutations)(rng, current);
    what += (what.empty() ? "" : " + ") + m.what;
    where += (where.empty() ? "" : " + ") + m.where;
    try {
      current.doc = json::parse(m.bytes);
    } catch (const json::exception&) {
      break;  // text no JSON document holds: the next mutation has nothing to work on
    }
  }
  return {what, where, m.bytes};
}

// ---------------------------------------------------------------------------------------------
// Textual mutations: the file's bytes.

Mutant truncate(Rng& rng, const Source& s) {
  const std::size_t at = rng.below(s.bytes.size());
  return {"file cut short", fmt::format("at byte {}", at), s.bytes.substr(0, at)};
}

Mutant flip_bytes(Rng& rng, const Source& s) {
  std::string bytes = s.bytes;
  const std::size_t flips = 1 + rng.below(4);
  std::string where;
  for (std::size_t i = 0; i < flips; ++i) {
    const std::size_t at = rng.below(bytes.size());
    if (rng.one_in(2)) bytes[at] = static_cast<char>(bytes[at] ^ (1 << rng.below(8)));
    else bytes[at] = static_cast<char>(rng.below(256));
    where += fmt::format("{}{}", where.empty() ? "bytes " : ", ", at);
  }
  return {"bytes changed", where, bytes};
}

// A mutated file, run by one of the commands that read a scenario file.
std::vector<std::string> command_on(Rng& rng, const std::string& scenario, const Source& s) {
  switch (rng.below(10)) {
    case 0: return {"sweep", scenario, "--vary", "clients.timeout_ms=100:200:100", "--trials", "2", "--jobs", "1"};
    case 1: return {"explore", scenario, "--strategy", s.strategy, "--budget", "5", "--time", "5", "--no-shrink"};
    case 2: return {"rows", scenario};
    default: return {"run", scenario, "--trials", "2", "--jobs", "1"};
  }
}

template <Mutant (*mutate)(Rng&, const Source&)>
Case on_file(Rng& rng, const Source& s, const Context&) {
  const Mutant m = mutate(rng, s);
  Case c{"", m.what, s.file_name + " " + m.where, command_on(rng, s.file_name, s), {}, {}};
  c.files[s.file_name] = m.bytes;
  c.names_file = s.file_name;
  return c;
}

// The scaled file, each trial held to fewer events so that a world made a thousand times larger
// still ends within the case's time limit (reaching the budget is reported, not a failure), and
// to a smaller memory budget: seeded rows scaled a thousand times (four million legacy rows take
// seconds to make and check, more on a busy machine) are refused at about a million. 100,000
// events a trial, since one case may run many trials: a sweep of vivo-rollout's four strategies
// over two points, two trials each, is 16 (2,000,000 events each took 164 s, 100,000 take 7 s).
Case on_file_bounded(Rng& rng, const Source& s, const Context& ctx) {
  Case c = on_file<scale_number>(rng, s, ctx);
  c.args.insert(c.args.end(), {"--set", "event_budget=100000", "--set", "memory_budget_mb=512"});
  return c;
}

// ---------------------------------------------------------------------------------------------
// Flag mutations: the catalogue scenario, named, with hostile flags.

std::vector<std::string> run_args(const Source& s, std::vector<std::string> extra) {
  std::vector<std::string> args{"run", s.name};
  args.insert(args.end(), extra.begin(), extra.end());
  for (const char* flag : {"--trials", "--jobs"})
    if (std::find(extra.begin(), extra.end(), flag) == extra.end()) args.insert(args.end(), {flag, flag[2] == 't' ? "2" : "1"});
  return args;
}

// The dotted --set path of a JSON pointer: /faults/pauses/0/length_ms -> faults.pauses.0.length_ms
std::string dotted(const json::json_pointer& at) {
  std::string path = at.to_string().substr(1);
  std::replace(path.begin(), path.end(), '/', '.');
  return path;
}

Case set_flag(Rng& rng, const Source& s, const Context&) {
  const std::vector<std::string> fixed = {
      "x.99999999=1", "strategies.99999999=1", "clients.count=10000000", "topology.accept_queue=0",
      "clients.backoff.cap_ms=0", "clients.count=\xff", "\xff=1", "clients.\xff\xfe=1", "clients.count=1e400",
      "clients.count=-1", "seed=-1", "seed=18446744073709551615", "trials=0", "clients.count.x=1", "=1", "clients",
      "clients=", ".=1", "..=1", "a~b=1", "~2=1", "strategies.-=\"unique-index\"", "strategies.0=" + std::string(60'000, '[') + std::string(60'000, ']'),
      "name=../../x", "name=line\nbreak", "name=" + std::string(300, 'n'), "description=" + std::string(100 * 1024, 'd'),
      "faults.pauses.0.length_ms=1e308", "clients.timeout_ms=1e-300", "topology.workers=100000",
      "database.pool_size=100000", "time_budget_s=1", "event_budget=1000", "clients.arrival.kind=listed",
      "workload.kind=batch-scheduler", "redis.instances=99", "expect={}", "strategies=all", "strategies=[]",
      "redlock.ttl_ms=1e400", "redlock.retry_count=-1", "redlock.retry_count=1e9", "redis-retry-lock.transactional=0.5",
      "redlock.=1", "redlock..ttl_ms=1", "redlock.ttl_ms.x=1", "unique-index.ttl_ms=1", "publish-then-mark.reaper=1",
      "faults.latency_spikes=[{\"at_ms\": 0, \"length_ms\": 1e12, \"factor\": 1e6, \"node\": \"clients\"}]",
      "faults.latency_spikes=[{\"at_ms\": 0, \"length_ms\": 10, \"between\": [\"app-1\"]}]"};
  std::string assignment, what;
  if (rng.one_in(2)) {
    assignment = what = rng.pick(fixed);
  } else {  // a path of this file, an extreme or odd value
    const Node n = pick_node(rng, s.doc, [](const json& j) { return j.is_number(); });
    std::string value = rng.one_in(4) ? rng.pick(odd_strings()) : rng.pick(kNumbers);
    if (value.front() == '"' && rng.one_in(2)) value = value.substr(1, value.size() - 2);  // unquoted: a string anyway
    assignment = dotted(n.at) + "=" + value;
    what = "path of the file=" + value;
  }
  Case c{"", "--set " + printable(what, 60), s.name, {}, {}, {}};
  switch (rng.below(6)) {
    case 0:
      c.args = {"sweep", s.name, "--set", assignment, "--vary", "clients.timeout_ms=100:200:100", "--trials", "2", "--jobs", "1"};
      break;
    case 1:
      c.args = {"explore", s.name, "--strategy", s.strategy, "--set", assignment, "--budget", "5", "--time", "5", "--no-shrink"};
      break;
    default: c.args = run_args(s, {"--set", assignment});
  }
  return c;
}

Case count_flag(Rng& rng, const Source& s, const Context&) {
  const std::map<std::string, std::vector<std::string>> values = {
      {"--trials", {"0", "-1", "1e9", "nan", "1000000000", "10000001", "", "2x", "0x10", "\xef\xbc\x92", "2 3"}},
      {"--seed", {"-1", "1e400", "nan", "18446744073709551616", "18446744073709551615", "-0", "", "0x1", "1.5", "\xff"}},
      {"--jobs", {"0", "-1", "1025", "1e9", "nan", "", "99999999999999999999"}}};
  auto it = values.begin();
  std::advance(it, static_cast<long>(rng.below(values.size())));
  const std::string& value = rng.pick(it->second);
  Case c{"", it->first + " " + printable(value), s.name, {}, {}, {}};
  if (rng.one_in(4))
    c.args = {"sweep", s.name, "--vary", "clients.timeout_ms=100:200:100", it->first, value};
  else
    c.args = run_args(s, {it->first, value});
  for (const char* flag : {"--trials", "--jobs"})  // bounded, whatever was not fuzzed
    if (std::find(c.args.begin(), c.args.end(), flag) == c.args.end()) c.args.insert(c.args.end(), {flag, flag[2] == 't' ? "2" : "1"});
  return c;
}

Case strategy_flag(Rng& rng, const Source& s, const Context& ctx) {
  const std::vector<std::string> names = {"", "nonexistent", "\xff\xfe", std::string(300, 's'), "line\nbreak",
                                          rng.pick(ctx.strategies), rng.pick(ctx.strategies)};
  const std::string name = rng.pick(names);
  Case c{"", "--strategy " + printable(name, 40), s.name, {}, {}, {}};
  if (rng.one_in(3))
    c.args = {"explore", s.name, "--strategy", name, "--budget", "5", "--time", "5", "--no-shrink"};
  else
    c.args = run_args(s, {"--strategy", name});
  return c;
}

Case vary_flag(Rng& rng, const Source& s, const Context&) {
  const std::vector<std::string> grids = {
      "clients.count=0:1e9:1", "clients.count=0:1:1e-300", "clients.count=-1e308:1e308:1e308",
      "clients.count=1:2:nan", "clients.count=nan:1:1", "clients.count=1:inf:1", "clients.count=-inf:1:1",
      "clients.count=1:3:0", "clients.count=3:1:1", "clients.count=1:2:-1", "clients.count=1e400:1e400:1",
      "x.99999999=1:2:1", "=1:2:1", "clients.count=1:2", "clients.count=1:2:1:1", "clients.count=\xff:1:1",
      "\xff=1:2:1", "name=1:2:1", "clients.count=0:0:1", "clients.count=1:2:1", "clients.timeout_ms=1e-300:2e-300:1e-300",
      "clients.count=9.3e12:9.3e12:1", "clients.count=1:1:1e308", "topology.accept_queue=0:1:1",
      "clients.backoff.cap_ms=0:0:1", "clients.count=" + std::string(300, '1') + ":1:1"};
  std::vector<std::string> args{"sweep", s.name, "--vary", rng.pick(grids)};
  std::string what = "--vary " + printable(args.back(), 60);
  if (rng.one_in(4)) {
    args.insert(args.end(), {"--vary", rng.pick(grids)});
    what += " twice";
  }
  if (rng.one_in(5)) {
    args.insert(args.end(), {"--metric", rng.pick(std::vector<std::string>{"", "nonexistent", "latency_ms.p99", "\xff"})});
    what += " --metric " + printable(args.back(), 20);
  }
  if (rng.one_in(8)) args.push_back("--resume");
  args.insert(args.end(), {"--trials", "2", "--jobs", "1"});
  return {"", what, s.name, args, {}, {}};
}

Case explore_flag(Rng& rng, const Source& s, const Context&) {
  std::map<std::string, std::string> flags = {{"--budget", "5"}, {"--time", "5"}};
  const std::vector<std::pair<std::string, std::vector<std::string>>> values = {
      {"--mode", {"xyz", "", "pct", "dfs", "random", "\xff"}},
      {"--depth", {"0", "-1", "1000000000", "2147483648", "nan"}},
      {"--bound", {"-1", "0", "1000000000", "2147483648"}},
      {"--budget", {"0", "-1", "1e9", "nan", "100000001"}},
      {"--time", {"nan", "-1", "inf", "1e400", "0", "1e-300", "-inf"}},
      {"--property", {"", "nonexistent", "\xff", "duplicate_rows", "latency_ms.p99"}}};
  const auto& [flag, choices] = rng.pick(values);
  const std::string& value = rng.pick(choices);
  flags[flag] = value;
  if (flag == "--depth" || flag == "--bound") flags["--mode"] = flag == "--depth" ? "pct" : "dfs";
  std::vector<std::string> args{"explore", s.name, "--strategy", s.strategy};
  for (const auto& [f, v] : flags) args.insert(args.end(), {f, v});
  if (!rng.one_in(4)) args.push_back("--no-shrink");
  return {"", flag + " " + printable(value), s.name, args, {}, {}};
}

// A replay token's closing check, when it has one: the top 32 bits of FNV-1a over the rest.
std::string token_check(const std::string& body) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : body) h = (h ^ c) * 0x100000001b3ull;
  return fmt::format("{:08x}", h >> 32);
}

// A field of the token (locksim:<engine>:<scenario>:<hash>:<strategy>:<seed>:<overrides>:<schedule>
// [:<check>]) replaced, the token cut short, or a byte of it changed. A token that ends in a
// check is sealed again after most changes, so that they reach the parsing behind the check.
Case token_case(Rng& rng, const Source& s, const Context& ctx) {
  const std::size_t last_colon = ctx.token.rfind(':');
  const bool checked = last_colon != std::string::npos &&
                       ctx.token.substr(last_colon + 1) == token_check(ctx.token.substr(0, last_colon));
  const std::string body = checked ? ctx.token.substr(0, last_colon) : ctx.token;
  const auto seal = [&](const std::string& b) { return checked && !rng.one_in(4) ? b + ":" + token_check(b) : b; };
  std::vector<std::string> fields;
  std::stringstream in(body);
  for (std::string f; std::getline(in, f, ':');) fields.push_back(f);
  while (fields.size() < 8) fields.emplace_back();
  const std::vector<std::vector<std::string>> odd = {
      {"locksim"},
      {"0", "-1", "99999999999", "", "1e400", "2"},
      {"", ".", "../../x", "/", std::string(300, 'n'), ctx.scenario_dir, "\xff", s.name},
      {"", "zz", "ffffffffffffffffff", "-1", "0", "0000000000000000"},
      {"", "nonexistent", rng.pick(ctx.strategies), "\xff"},
      {"-1", "1e400", "18446744073709551616", "", "99999999999999999999", "18446744073709551615"},
      {hex("x.99999999=1"), hex("clients.count=10000000"), "zz", "abc", hex("\xff=1"), hex("topology.accept_queue=0"),
       hex("clients.count=2") + "," + hex("clients.count=3"), ","},
      {"pct.1000000000.1.1.1", "pct.3.1000000000000.1.1", "pct.0.0.0.0", "pct.-1.1.1.1", "pct.3", "pct", "pct.3.x.1.1",
       "pct.18446744073709551615.1.1.1", "pct.3.18446744073709551615.18446744073709551615.1", "pct.3.0.0.0",
       "dfs.99999999999999999999=1", "dfs.0=99999999", "dfs.x", "dfs.1=1.1=2", "dfs.", "dfs..", "dfs.-1=1", "random",
       "dfs.18446744073709551615=18446744073709551615", "dfs", "dfs.0=5", "dfs.1000000000=1", "dfs.0=1.1=1.2=1.3=1"}};
  std::string token, what, where;
  switch (rng.below(8)) {
    case 0:
      token = ctx.token;
      what = "a token as explore printed it";
      break;
    case 1: {
      const std::size_t at = rng.below(ctx.token.size());
      token = rng.one_in(2) ? ctx.token.substr(0, at) : seal(body.substr(0, std::min(at, body.size())));
      what = "token cut short";
      where = fmt::format("at {}", at);
      break;
    }
    case 2: {
      std::string changed = body;
      const std::size_t at = rng.below(changed.size());
      changed[at] = static_cast<char>(rng.below(256));
      token = seal(changed);
      what = "token byte changed";
      where = fmt::format("at {}", at);
      break;
    }
    default: {
      std::size_t field = 1 + rng.below(7);
      if (rng.one_in(2)) field = 7;  // the schedule has the most to parse
      auto changed = fields;
      changed[field] = rng.pick(odd[field]);
      std::string b = changed[0];
      for (std::size_t i = 1; i < changed.size(); ++i) b += ":" + changed[i];
      token = seal(b);
      what = fmt::format("token field {} = {}", field, printable(changed[field], 40));
    }
  }
  std::vector<std::string> args{"replay", token};
  if (rng.one_in(4)) args.push_back("--check-determinism");
  return {"", what, where, args, {}, {}};
}

// Scenario arguments that are not scenario files: a folder, nothing, an empty file, a name too long.
Case scenario_path(Rng& rng, const Source& s, const Context&) {
  Case c{"", "", "", {}, {}, {}};
  const std::vector<std::string> paths = {".", "dir.json", "missing.json", "empty.json", "", std::string(300, 'n') + ".json",
                                          std::string(300, 'n'), "\xff", "/", "a/b/c", s.name + "/", s.name + ".json",
                                          std::string(3000, 'a') + "/" + std::string(3000, 'b'), "/dev/null", ".."};
  const std::string path = rng.pick(paths);
  c.what = "scenario " + printable(path, 40);
  if (path == "dir.json") c.folders.push_back(path);
  if (path == "empty.json") c.files[path] = "";
  switch (rng.below(4)) {
    case 0: c.args = {"sweep", path, "--vary", "clients.count=1:2:1", "--trials", "2", "--jobs", "1"}; break;
    case 1: c.args = {"explore", path, "--strategy", s.strategy, "--budget", "5", "--time", "5", "--no-shrink"}; break;
    default: c.args = {"run", path, "--trials", "2", "--jobs", "1"};
  }
  return c;
}

Case command_line(Rng& rng, const Source& s, const Context&) {
  const std::vector<std::vector<std::string>> lines = {
      {},
      {"list"},
      {"frobnicate"},
      {"run"},
      {"run", s.name, "--trials"},
      {"run", s.name, "--trials", "2", "--jobs", "1", "--json"},
      {"run", s.name, "--trials", "2", "--jobs", "1", "--check-determinism"},
      {"run", s.name, "--trials", "2", "--jobs", "1", "--unknown-flag"},
      {"run", s.name, s.name, "--trials", "2", "--jobs", "1"},
      {"sweep", s.name},
      {"explore", s.name},
      {"replay"},
      {"replay", ""},
      {"rows"},
      {"rows", s.name},
      {"rows", s.name, "--set", "database.legacy.keys=0"},
      {"demo", "--trials", "0"},
      {"demo", "--clients", "100001"},
      {"\xff"},
      {"--", "run", s.name}};
  const auto& args = rng.pick(lines);
  std::string what;
  for (const auto& a : args) what += (what.empty() ? "" : " ") + printable(a, 30);
  return {"", "command line: " + what, "", args, {}, {}};
}

// ---------------------------------------------------------------------------------------------
// Strategies written in Lua: a script of strategies/, mutated on its bytes and on its tokens, or
// a file made up whole, run as `run SCENARIO --strategy-file FILE --strategy FILE` on a small
// account-bind scenario. A script that does not compile or breaks its contract is refused at
// load (one line, exit 2); whatever it does at run time (nil indexed, bad arguments to the
// API, bad SQL, an endless loop, deep recursion, memory) is a script error of the trial (exit 0
// or 1), never a crash. An endless loop ends at the instruction budget (200M per trial), a
// second or two, well within the case's time limit: these families keep the usual one.

// Lua expressions a token of a script becomes: values of each type, the API's functions and
// calls with no or bad arguments, what the sandbox takes away, the limits (time, memory, the C
// stack, the parser's levels).
std::vector<std::string> lua_values() {
  return {"nil", "{}", "-1", "0", "1e308", "-1e308", "0/0", "1/0", "-(0/0)", "math.huge", "math.mininteger",
          "math.maxinteger", "9223372036854775807", "9223372036854775808", "0x7fffffffffffffff", "-0.0", "1.5", "true",
          "false", "\"\"", "\"\\0\"", "\"\\xff\\xfe\"", "\"line\\nbreak\"", "\"%s%n%p%d\"", "\"' OR 1=1 --\"",
          "\"x'); DROP TABLE t_account; --\"", "\"" + std::string(100 * 1024, 'a') + "\"",
          "[[" + std::string(300, 'n') + "]]", "string.rep('x', 65537)", "string.rep('(', 100000)", "...", "_ENV", "_G",
          "req", "params", "bind", "db", "db.query", "db.exec", "db.connect", "db.connect()", "db.begin()",
          "db.query()", "db.query(nil)", "db.query({})", "db.query('SELECT')", "db.query('SELECT * FROM t_account')",
          "db.exec('DELETE FROM t_account')", "db.exec('UPDATE t_account SET wallet = ?', 1.5)",
          "db.query('SELECT id FROM t_account WHERE open_id = ?')",
          "db.query('SELECT id FROM t_account WHERE open_id = ?', {}, 1, 2)", "locks", "locks.redis",
          "locks.redis()", "locks.redis('k', {ttl_ms = -1})", "locks.redis('k', {ttl_ms = 0/0, tries = 1e9})",
          "locks.redis('k', 7)", "locks.redlock('k', {retry_count = -1})", "locks.zookeeper('')",
          "locks.etcd('k', {wait_ms = 1e308})", "locks.table({})", "locks.local_mutex(nil)", "redis",
          "redis.call", "redis.call('SET')", "redis.call('SET', 'k', nil)", "redis.call('FLUSHALL')",
          "redis.call('SET', 'k', 'v', 'NX', 'PX', -1)", "redis.call('INCR', 'k')", "redis.script('x')",
          "redis.script('compare_and_pexpire', 'k', 'v', 0/0)", "hold('k', nil)", "hold", "work()", "work",
          "sleep(-1)", "sleep(0/0)", "sleep(1e308)", "now_ms()", "unique()", "remote.create(nil, -1)",
          "remote.create('x', 1e308)", "error({})", "error()", "error(nil)", "error('line\\nbreak')",
          "error(string.rep('e', 100000))", "error(setmetatable({}, {__tostring = function() return {} end}))",
          "error({code = 1062, message = 'fake'})", "error({code = 'timeout'})",
          "(function() while true do end end)()", "string.rep('x', 1e9)", "('x'):rep(1e8):rep(1e8)",
          "setmetatable({}, {__gc = print})", "setmetatable({}, {__gc = function() end})",
          "(function() local function f() return f() end return f() end)()",
          "(function() local function f() return 1 + f() end return f() end)()",
          "os.exit()", "os", "require('os')", "require", "load('return 1')", "load", "dofile()", "loadfile",
          "coroutine", "coroutine.wrap(function() end)", "collectgarbage()", "collectgarbage('count')",
          "math.randomseed(1)", "math.random(0)", "math.random(1, 0)", "math.random(math.mininteger, math.maxinteger)",
          "debug.getinfo", "debug.getinfo(1)", "io.open('x')", "io.write('x')", "print('x')", "string.dump(bind)",
          "string.format('\\0%p', {})", "string.format('%p', {})", "string.format('%99.99f', 1e308)",
          "string.format('%d', 1.5)", "string.format('%q', 0/0)", "tostring(setmetatable({}, {__tostring = tostring}))",
          "tostring(setmetatable({}, {__name = 'x'}))", "setmetatable({}, {__index = function(t, k) return t[k] end}).x",
          "setmetatable({}, {__tostring = function(s) return tostring(s) end})",
          "setmetatable(_G, {__index = function() return nil end})", "getmetatable('').__index",
          "next({}, 'nope')", "pairs(nil)", "ipairs(setmetatable({}, {__index = function(t, i) return i end}))",
          "select(-1)", "select('#')", "table.unpack({}, 1, 1e7)", "table.concat({{}})", "table.insert(nil)",
          "table.sort({3, 1, 2}, function() return true end)", "table.move({}, 1, math.maxinteger, 2)",
          "utf8.char(0x7fffffff)", "utf8.len('\\xff')", "string.pack('i16', 1)", "string.unpack('s8', '')",
          "('x'):find(('x?'):rep(100000) .. ('x'):rep(100000))", "string.gsub('x', '.', string.rep('%1', 1e5))",
          "1 // 0", "math.mininteger // -1", "math.tointeger(1e308)", "#req", "-req", "req .. req", "req()",
          "string.rep('(', 300) .. string.rep(')', 300)"};
}

// Lua statements put into bind or at the top level.
std::vector<std::string> lua_statements() {
  return {"while true do end", "repeat until false", "for i = 1, math.maxinteger do end", "goto nowhere",
          "::again:: goto again", "local function f() return f() end f()", "local function f() return 1 + f() end f()",
          "local function f(n) local t = {n} return f(n + 1) + 1 end f(1)", "os.exit()", "os.exit(70)",
          "require('os')", "load('return 1')()", "error({})", "error()", "error('line\\nbreak')",
          "error('', 0)", "error(error)", "error(setmetatable({}, {__index = function() error('x') end}))",
          "local s = string.rep('x', 1e9)", "local s = 'x' while true do s = s .. s end",
          "local a, b = ('x'):rep(2^23), ('x'):rep(2^23) while true do local e = a == b end",
          "local a = ('x'):rep(2^23) while true do pcall(math.floor, a) end",
          "local t = {} for i = 1, 1e8 do t[i] = i end", "local t = {} while true do t = {t} end",
          "local t = {} for i = 1, 1e6 do t[#t + 1] = tostring(i) end",
          "setmetatable({}, {__gc = print})", "collectgarbage()", "math.randomseed(1)", "print(string.rep('x', 1e6))",
          "io.open('x', 'w')", "debug.sethook()", "coroutine.yield()",
          "local x <close> = setmetatable({}, {__close = function() error('closing') end})",
          "local x <close> = setmetatable({}, {__close = function() while true do end end})",
          "local x <close> = 1", "local x <const> = 1 x = 2",
          "while true do pcall(function() while true do end end) end",
          "while true do pcall(error, {}) end",
          "while true do pcall(function() local x <close> = setmetatable({}, {__close = function() error('e') end}) "
          "while true do end end) end",
          "while true do xpcall(function() while true do end end, function(e) return e end) end",
          "local function f(s) return (string.gsub(s, '.', f)) end f('x')",
          "local t = setmetatable({}, {__index = function(t, k) return t[k] end}) local _ = t.x",
          "local t t = setmetatable({}, {__tostring = function(s) return string.format('%s', s) end}) tostring(t)",
          "local t t = setmetatable({}, {__concat = function(a, b) return a .. b end}) local _ = t .. t",
          "local t t = setmetatable({}, {__eq = function(a, b) return a == b end}) local _ = t == setmetatable({}, "
          "getmetatable(t))",
          "local t = setmetatable({}, {__index = function(t, k) db.query('SELECT id FROM t_account') return t[k] end}) "
          "local _ = t.x",
          "string.gsub('xx', '.', function() db.query('SELECT id FROM t_account') end)",
          "table.sort({3, 2, 1}, function(a, b) sleep(1) return a < b end)",
          "xpcall(error, function() return db.query('SELECT id FROM t_account') end)",
          "tostring(setmetatable({}, {__tostring = function() work() return 'x' end}))",
          "for k, v in pairs(setmetatable({}, {__pairs = function() return function() sleep(1) return nil end end})) do end",
          "pcall(bind, req)", "bind(req)", "do return bind(req) end",
          "db.begin() db.begin()", "db.commit()", "db.rollback() db.rollback()", "db.close() db.close()",
          "db.close() db.query('SELECT id FROM t_account')",
          "local c = db.connect() c:close() c:close()", "local c = db.connect() c:close() c:query('SELECT 1 FROM t_account')",
          "local c = db.connect() c.query('SELECT 1 FROM t_account')", "local c = db.connect() getmetatable(c).__index = nil",
          "for i = 1, 100 do db.connect() end", "for i = 1, 1000 do db.connect():begin() end",
          "db.begin() db.exec('INSERT INTO t_account (open_id, device) VALUES (?, ?)', req.open_id, req.device) sleep(1e7)",
          "db.exec('INSERT INTO t_account (open_id) VALUES (?)', string.rep('x', 100000))",
          "db.exec('INSERT INTO t_account (open_id) VALUES (?)', 1e308)",
          "db.exec('INSERT INTO t_account (open_id) VALUES (?)', 0/0)",
          "db.exec('INSERT INTO t_account (open_id) VALUES (?)', math.mininteger)",
          "db.exec('INSERT INTO t_account (id, open_id) VALUES (?, ?)', math.maxinteger, 'x') "
          "db.exec('INSERT INTO t_account (open_id) VALUES (?)', 'y')",
          "db.exec('INSERT INTO t_account (open_id, device) VALUES (?, ?)', req.key, req.value)",
          "db.exec('INSERT INTO t_account (open_id, device) VALUES (?, ?)', '\\xff', req.device)",
          "db.query('SELECT id FROM t_nope')", "db.query('SELECT nope FROM t_account WHERE nope = 1')",
          "db.exec('INSERT INTO t_account (nope) VALUES (1)')", "pcall(db.query, 'SELECT id FROM t_nope')",
          "pcall(db.exec, 'UPDATE t_account SET nope = 1')", "error('\\xff')", "do return '\\xff' end",
          "db.exec('CREATE TABLE t_x (id BIGINT AUTO_INCREMENT PRIMARY KEY)')", "db.exec('DROP TABLE t_account')",
          "db.exec('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED')", "db.exec('BEGIN') db.exec('BEGIN')",
          "db.query('SELECT id FROM t_account WHERE ' .. string.rep('id = 1 AND ', 2000) .. 'id = 1')",
          "db.query('SELECT id FROM t_account' .. string.rep(' ', 70000))",
          "db.query('SELECT ' .. string.rep('id, ', 1500) .. 'id FROM t_account')",
          "db.query('SELECT id FROM t_account WHERE open_id = ?', "
          "table.unpack((function() local t = {} for i = 1, 1200 do t[i] = i end return t end)()))",
          "db.query('SELECT id FROM t_account WHERE open_id = ?', req)",
          "db.query('SELECT id FROM t_account WHERE open_id = ?', db.connect())",
          "local l = locks.redis('k', {ttl_ms = 1000}) if l then l:release() l:release() end",
          "local l = locks.redis('k') if l then l.release() end",
          "local l = locks.redis('k') if l then l:rejected() l:rejected() end",
          "local l = locks.local_mutex('k') local m = locks.local_mutex('k')",
          "local l = locks.table('k') local m = locks.table('k')", "locks.table('k', 1)",
          "local l = locks.redlock('k', {ttl_ms = 0, node_timeout_ms = 1e12, retry_count = 1e9})",
          "local l = locks.redisson('k', {lease_ms = 0, wait_ms = 1e12, pause_ms = 0})",
          "local l = locks.redisson('k', {lease_ms = 1}) sleep(1e6)",
          "local l = locks.zookeeper('/a/../b', {wait_ms = -1, herd = 'yes'})", "locks.zookeeper('no-slash')",
          "local l = locks.etcd('', {wait_ms = 0/0})",
          "local l = locks.redis('k', {ttl_ms = 1e12, wait_ms = 1e12, pause_ms = 0})",
          "for i = 1, 10000 do locks.redis('k' .. i, {ttl_ms = 1}) end",
          "local h = hold('k', 'v') h.release() h.release()", "hold({}, {})", "hold(string.rep('k', 1e6), 'v')",
          "redis.call('SET', 'k', 'v', 'NX', 'PX', 0/0)", "redis.call('SET', 'k', {}, 'EX')",
          "redis.call('PEXPIRE', 'k', 1e308)", "redis.call('EVAL', 'return 1', 0)", "redis.call(string.rep('G', 1e6))",
          "redis.script('compare_and_delete')", "redis.script('compare_and_delete', nil, nil)",
          "for i = 1, 1e6 do redis.call('INCR', 'n') end", "for i = 1, 1e5 do db.query('SELECT id FROM t_account') end",
          "while true do sleep(0) end", "while true do now_ms() end", "while true do unique() end", "sleep(1e12)",
          "sleep(9.3e12)", "sleep(-1e308)", "work(-1)", "for i = 1, 1e6 do work() end", "remote.create(req.open_id, 0)",
          "remote.create(req.open_id, -1e308)", "remote.create({}, {})", "req.open_id = nil",
          "req = nil", "params = nil", "_ENV = nil", "_G.db = nil", "db = nil", "db.query = nil", "locks = {}",
          "setmetatable(_G, {__newindex = function() error('x') end}) y = 1", "math.random = nil",
          "string.rep = nil local x = ('x'):rep(2)", "getmetatable('').__index = function() error('x') end local _ = ('x'):len()",
          "bind = nil", "bind = 1", "bind = print", "bind = error", "bind = db.query", "bind = work", "bind = pcall",
          "bind = coroutine", "bind = setmetatable({}, {__call = function() end})",
          "description = nil", "description = 1", "description = 'line\\nbreak'", "description = 'd\\xff'",
          "description = string.rep('d', 1e6)",
          "params = {x = 0/0}", "params = {ttl_ms = -1}", "params = {ttl_ms = 1e13}", "params = {n = 1.5}",
          "params = {n = 1e7}", "params = {1, 2}", "params = {['a b'] = 1}", "params = {[''] = 1}", "params = {x = 'y'}",
          "params = {x = {}}", "params = 'x'", "params = setmetatable({}, {__index = function() return 1 end})",
          "tables = 1", "tables = {1}", "tables = {''}", "tables = {'DROP TABLE t_account'}",
          "tables = {'CREATE TABLE t_account (id BIGINT AUTO_INCREMENT PRIMARY KEY)'}",
          "tables = {'CREATE TABLE t_account (id BIGINT AUTO_INCREMENT PRIMARY KEY, open_id VARCHAR(64), "
          "device VARCHAR(64), UNIQUE KEY (device))'}",
          "tables = {'CREATE TABLE t_x (id BIGINT AUTO_INCREMENT PRIMARY KEY)', "
          "'CREATE TABLE t_x (id BIGINT AUTO_INCREMENT PRIMARY KEY)'}",
          "tables = {'CREATE TABLE t_lock (id BIGINT AUTO_INCREMENT PRIMARY KEY)'} uses = {'lock_table'}",
          "tables = {'CREATE TABLE t_fence (id BIGINT AUTO_INCREMENT PRIMARY KEY)'} uses = {'fences'}",
          "tables = {'CREATE TABLE t_account (id BIGINT AUTO_INCREMENT PRIMARY KEY, open_id VARCHAR(64), ' .. "
          "string.rep('c', 60000) .. ' BIGINT)'}",
          "tables = {(function() local s = 'CREATE TABLE t_w (id BIGINT AUTO_INCREMENT PRIMARY KEY' for i = 1, 1100 do "
          "s = s .. ', c' .. i .. ' BIGINT' end return s .. ')' end)()}",
          "uses = 1", "uses = {'bogus'}", "uses = {1}", "uses = {'redis', 'redlock', 'zookeeper', 'etcd', 'remote', "
          "'lock_table', 'fences'}", "uses = {'redlock', 'redlock'}", "source = {}", "risks = string.rep('r', 1e6)"};
}

// Something 300 (or 100,000) levels deep: the parser's limit on nesting, met at load.
std::string lua_nesting(Rng& rng, std::string& what) {
  const std::size_t depth = rng.pick(std::vector<std::size_t>{300, 300, 100'000});
  const bool closed = !rng.one_in(4);
  std::string text;
  switch (rng.below(4)) {
    case 0:
      text = std::string(depth, '(') + "1" + (closed ? std::string(depth, ')') : "");
      what = fmt::format("{} nested (", depth);
      break;
    case 1:
      text = std::string(depth, '{') + (closed ? std::string(depth, '}') : "");
      what = fmt::format("{} nested {{", depth);
      break;
    case 2: {
      for (std::size_t i = 0; i < depth; ++i) text += "(function() return ";
      text += "1";
      if (closed)
        for (std::size_t i = 0; i < depth; ++i) text += " end)()";
      what = fmt::format("{} nested functions", depth);
      break;
    }
    default:
      text = std::string(depth, '~') + "1";  // unary ~ (bitwise not), depth times
      what = fmt::format("{} nested unary operators", depth);
  }
  if (!closed) what += ", unclosed";
  return text;
}

// A script's tokens, roughly as Lua's lexer sees them: names, keywords, strings (short and long),
// numbers and the rest one character each; comments skipped.
struct LuaToken {
  std::size_t at, size;
  char kind;  // 'n' name, 'k' keyword, 's' string, '0' number, 'p' punctuation
};

std::vector<LuaToken> lua_tokens(const std::string& t) {
  static const std::vector<std::string> keywords = {"and",   "break", "do",  "else", "elseif", "end",    "false",
                                                    "for",   "function", "goto", "if", "in",  "local",  "nil",
                                                    "not",   "or",    "repeat", "return", "then", "true", "until", "while"};
  const std::size_t n = t.size();
  const auto alnum = [&](std::size_t i) { return std::isalnum(static_cast<unsigned char>(t[i])) || t[i] == '_'; };
  // The level of a long bracket `[==[` at `at`, plus one; 0 when there is none.
  const auto long_bracket = [&](std::size_t at) -> std::size_t {
    if (at >= n || t[at] != '[') return 0;
    std::size_t j = at + 1;
    while (j < n && t[j] == '=') ++j;
    return j < n && t[j] == '[' ? j - at : 0;
  };
  const auto past_long = [&](std::size_t at, std::size_t level) {
    const std::string close = "]" + std::string(level - 1, '=') + "]";
    const std::size_t end = t.find(close, at + level + 1);
    return end == std::string::npos ? n : end + close.size();
  };
  std::vector<LuaToken> out;
  for (std::size_t i = 0; i < n;) {
    const auto c = static_cast<unsigned char>(t[i]);
    if (std::isspace(c)) {
      ++i;
      continue;
    }
    if (c == '-' && i + 1 < n && t[i + 1] == '-') {
      if (const std::size_t level = long_bracket(i + 2)) {
        i = past_long(i + 2, level);
      } else {
        const std::size_t end = t.find('\n', i);
        i = end == std::string::npos ? n : end;
      }
      continue;
    }
    const std::size_t start = i;
    char kind = 'p';
    if (std::isalpha(c) || c == '_') {
      while (i < n && alnum(i)) ++i;
      kind = std::find(keywords.begin(), keywords.end(), t.substr(start, i - start)) != keywords.end() ? 'k' : 'n';
    } else if (std::isdigit(c) || (c == '.' && i + 1 < n && std::isdigit(static_cast<unsigned char>(t[i + 1])))) {
      ++i;
      while (i < n && (alnum(i) || t[i] == '.' ||
                       ((t[i] == '+' || t[i] == '-') && std::strchr("eEpP", t[i - 1]) != nullptr)))
        ++i;
      kind = '0';
    } else if (c == '"' || c == '\'') {
      ++i;
      while (i < n && t[i] != static_cast<char>(c) && t[i] != '\n') i += t[i] == '\\' ? 2 : 1;
      i = std::min(n, i + 1);
      kind = 's';
    } else if (const std::size_t level = long_bracket(i)) {
      i = past_long(i, level);
      kind = 's';
    } else {
      ++i;
    }
    out.push_back({start, i - start, kind});
  }
  return out;
}

// The line numbers (1-based) of `text`'s lines, as offsets of their starts.
std::vector<std::size_t> line_starts(const std::string& text) {
  std::vector<std::size_t> starts{0};
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') starts.push_back(i + 1);
  return starts;
}

std::size_t line_of(const std::vector<std::size_t>& starts, std::size_t at) {
  return static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), at) - starts.begin());
}

// Byte mutations: a byte or a run of them deleted, duplicated or changed, the file cut short,
// or spliced with another script (or itself) at random points.
Mutant lua_bytes(Rng& rng, const std::string& text, const Context& ctx) {
  std::string bytes = text;
  if (bytes.empty()) bytes = " ";
  const std::size_t at = rng.below(bytes.size());
  const std::size_t run = std::min(bytes.size() - at, 1 + (rng.one_in(2) ? 0 : rng.below(40)));
  const auto lines = line_starts(bytes);
  const std::string where = fmt::format("at byte {} (line {})", at, line_of(lines, at));
  switch (rng.below(7)) {
    case 0: return {fmt::format("{} bytes deleted", run), where, bytes.erase(at, run)};
    case 1: return {fmt::format("{} bytes duplicated", run), where, bytes.insert(at, bytes.substr(at, run))};
    case 2: {
      const std::size_t flips = 1 + rng.below(4);
      for (std::size_t i = 0; i < flips; ++i) {
        const std::size_t b = rng.below(bytes.size());
        bytes[b] = static_cast<char>(bytes[b] ^ (1 << rng.below(8)));
      }
      return {fmt::format("{} bits flipped", flips), where, bytes};
    }
    case 3: {
      const std::size_t changes = 1 + rng.below(4);
      const std::string odd = std::string(1, '\0') + "\xff\n\r\"'[]=-(){}\\.;:~#%";
      for (std::size_t i = 0; i < changes; ++i)
        bytes[rng.below(bytes.size())] = rng.one_in(2) ? odd[rng.below(odd.size())] : static_cast<char>(rng.below(256));
      return {fmt::format("{} bytes changed", changes), where, bytes};
    }
    case 4: return {"file cut short", where, bytes.substr(0, at)};
    case 5: {  // the head of this script and the tail of another (or of itself, elsewhere)
      const std::string& other = ctx.scripts.empty() ? text : rng.pick(ctx.scripts).bytes;
      const std::size_t from = other.empty() ? 0 : rng.below(other.size());
      return {"spliced with another script", fmt::format("{}, its tail from byte {}", where, from),
              bytes.substr(0, at) + other.substr(from)};
    }
    default: {
      std::string noise;
      for (std::size_t i = 0, k = 1 + rng.below(16); i < k; ++i) noise += static_cast<char>(rng.below(256));
      return {fmt::format("{} random bytes inserted", noise.size()), where, bytes.insert(at, noise)};
    }
  }
}

// A name, string or number of the script (a keyword or a symbol now and then) replaced by one of
// the expressions above, by a 300-deep nesting, or by another token of the script.
Mutant lua_token(Rng& rng, const std::string& text, const Context&) {
  const auto tokens = lua_tokens(text);
  std::vector<LuaToken> kept;
  const bool any = rng.one_in(6);
  for (const auto& t : tokens)
    if (any || t.kind == 'n' || t.kind == 's' || t.kind == '0') kept.push_back(t);
  if (kept.empty()) return {"no token to replace: the script as it is", "", text};
  const LuaToken t = rng.pick(kept);
  std::string value, what;
  switch (rng.below(10)) {
    case 0: value = lua_nesting(rng, what); break;
    case 1: {
      const LuaToken other = rng.pick(kept);
      value = text.substr(other.at, other.size);
      what = "another token of the script: " + printable(value, 40);
      break;
    }
    default:
      value = rng.pick(lua_values());
      what = printable(value, 60);
  }
  std::string bytes = text;
  bytes.replace(t.at, t.size, value);
  const auto lines = line_starts(text);
  return {"token replaced by " + what,
          fmt::format("{} at line {}", printable(text.substr(t.at, t.size), 30), line_of(lines, t.at)), bytes};
}

// A statement put where it runs: first in bind, after bind's body (bind wrapped, so the script
// stays valid), at the end of the top level (it runs at load), or at the start of a line.
Mutant lua_statement(Rng& rng, const std::string& text, const Context&) {
  std::string statement, what;
  if (rng.one_in(10)) statement = "local x = " + lua_nesting(rng, what);
  else if (rng.one_in(4)) statement = "local x = " + (what = rng.pick(lua_values()));
  else statement = what = rng.pick(lua_statements());
  what = printable(what, 70);
  std::string bytes = text;
  const std::size_t bind = text.find("function bind(");
  switch (rng.below(5)) {
    case 0:
    case 1:
      bytes += "\nlocal fuzz_bind = bind\nfunction bind(req)\n  " + statement + "\n  return fuzz_bind(req)\nend\n";
      return {"statement first in bind: " + what, "bind wrapped", bytes};
    case 2:
      bytes += "\nlocal fuzz_bind = bind\nfunction bind(req)\n  local fuzz_result = fuzz_bind(req)\n  " + statement +
               "\n  return fuzz_result\nend\n";
      return {"statement after bind's body: " + what, "bind wrapped", bytes};
    case 3: return {"statement at the top level's end: " + what, "end of file", bytes + "\n" + statement + "\n"};
    default: {
      const auto lines = line_starts(text);
      std::size_t line = rng.below(lines.size());
      if (bind != std::string::npos && !rng.one_in(3)) {  // a line in bind, past its header
        const std::size_t first = line_of(lines, bind);
        line = std::min(lines.size() - 1, first + rng.below(std::max<std::size_t>(1, lines.size() - first)));
      }
      bytes.insert(lines[line], statement + "\n");
      return {"statement at a line's start: " + what, fmt::format("line {}", line + 1), bytes};
    }
  }
}

// Two or three of the above, one after the other.
Mutant lua_stacked(Rng& rng, const std::string& text, const Context& ctx) {
  using Mutate = Mutant (*)(Rng&, const std::string&, const Context&);
  const std::vector<Mutate> mutations = {lua_bytes, lua_token, lua_token, lua_statement, lua_statement};
  Mutant m{"", "", text};
  std::string what, where;
  for (std::size_t i = 0, n = 2 + rng.below(2); i < n; ++i) {
    m = rng.pick(mutations)(rng, m.bytes, ctx);
    what += (what.empty() ? "" : " + ") + m.what;
    where += (where.empty() ? "" : " + ") + m.where;
  }
  return {what, where, m.bytes};
}

// The command a script case runs: mostly `run` on one trial, sometimes two trials on two
// threads, `--check-determinism`, `explore`, or the script named in a scenario file's
// strategies ({"script": FILE}) instead of by --strategy-file.
void lua_command(Rng& rng, const Context& ctx, const std::string& path, Case& c) {
  const Source& s = ctx.sources[ctx.script_scenario];
  const std::string label = path;  // the file name as given
  switch (rng.below(20)) {
    case 0:
    case 1: {
      json doc = s.doc;
      json entry = {{"script", path}};
      if (rng.one_in(3)) entry["as"] = "fuzz-script";
      doc["strategies"] = json::array({entry});
      doc.erase("expect");
      const std::string file = "lua-" + s.file_name;
      c.files[file] = doc.dump(2);
      c.args = {"run", file, "--trials", "1", "--jobs", "1"};
      c.where += " (listed in " + file + ")";
      return;
    }
    case 2:
      c.args = {"run", s.name, "--strategy-file", path, "--strategy", label, "--trials", "2", "--jobs", "2"};
      return;
    case 3:
      c.args = {"run", s.name, "--strategy-file", path, "--strategy", label, "--trials", "1", "--jobs", "1",
                "--check-determinism"};
      return;
    case 4:
      c.args = {"explore", s.name, "--strategy-file", path, "--strategy", label, "--budget", "3", "--time", "5", "--no-shrink"};
      return;
    default: c.args = {"run", s.name, "--strategy-file", path, "--strategy", label, "--trials", "1", "--jobs", "1"};
  }
}

// A script of strategies/ mutated (or, with none found, a minimal one).
Case lua_script(Rng& rng, const Source&, const Context& ctx) {
  static const Script fallback{"check-then-insert.lua",
                               "description = \"check then insert\"\n\nfunction bind(req)\n  if #db.query(\"SELECT id FROM "
                               "t_account WHERE open_id = ?\", req.open_id) == 0 then\n    work()\n    db.exec(\"INSERT INTO "
                               "t_account (open_id, device) VALUES (?, ?)\", req.open_id, req.device)\n  end\nend\n"};
  const Script& script = ctx.scripts.empty() ? fallback : rng.pick(ctx.scripts);
  using Mutate = Mutant (*)(Rng&, const std::string&, const Context&);
  const std::vector<std::pair<Mutate, int>> mutations = {{lua_bytes, 3}, {lua_token, 4}, {lua_statement, 5}, {lua_stacked, 2}};
  int draw = static_cast<int>(rng.below(14));
  Mutate mutate = lua_bytes;
  for (const auto& [m, weight] : mutations)
    if ((draw -= weight) < 0) {
      mutate = m;
      break;
    }
  const Mutant m = mutate(rng, script.bytes, ctx);
  const std::string path = "fuzz-" + script.file_name;  // never a catalogue name: no fallback to strategies/
  Case c{"", m.what, path + " " + m.where, {}, {}, {}};
  c.files[path] = m.bytes;
  c.names_file = path;
  lua_command(rng, ctx, path, c);
  return c;
}

// A file made up whole: empty, binary, a compiled chunk, over the size limit, not a file, none,
// oddly named.
Case lua_generated(Rng& rng, const Source&, const Context& ctx) {
  const std::string valid = ctx.scripts.empty() ? "description = \"d\"\nfunction bind(req) end\n" : rng.pick(ctx.scripts).bytes;
  std::string path = "fuzz.lua", what, bytes;
  bool folder = false, absent = false;
  switch (rng.below(16)) {
    case 0: what = "empty file"; break;
    case 1:
      for (std::size_t i = 0, n = 1 + rng.below(4096); i < n; ++i) bytes += static_cast<char>(rng.below(256));
      what = fmt::format("{} random bytes", bytes.size());
      break;
    case 2:
      bytes = std::string("\x1bLua", 4);
      if (rng.one_in(2)) bytes += std::string("T\x00\x19\x93\r\n\x1a\n\x04\x08\x08", 11);  // 5.4's header
      for (std::size_t i = 0, n = rng.below(200); i < n; ++i) bytes += static_cast<char>(rng.below(256));
      what = "a compiled chunk (\\x1bLua...)";
      break;
    case 3:
      bytes = std::string(5 << 20, ' ') + valid;
      what = "5 MiB (over the size limit)";
      break;
    case 4:  // at the limit exactly, valid: a long comment and the script
      bytes = "--[[" + std::string((4 << 20) - valid.size() - 7, 'c') + "]]\n" + valid;
      what = fmt::format("{} bytes, a long comment then a script", bytes.size());
      break;
    case 5: folder = true, what = "a folder"; break;
    case 6: absent = true, what = "no such file"; break;
    case 7:
      bytes = "\xef\xbb\xbf" + valid;
      what = "a byte-order mark, then a script";
      break;
    case 8:
      bytes = "#!/usr/bin/env lua\n" + valid;
      what = "a #! line, then a script";
      break;
    case 9: {
      std::string nested;
      bytes = "description = \"d\"\nfunction bind(req)\n  local x = " + lua_nesting(rng, nested) + "\nend\n";
      what = "bind holding " + nested;
      break;
    }
    case 10: {  // names: the label is the file name, and it reaches messages and report paths
      const std::vector<std::string> names = {"x y.lua", "line\nbreak.lua", "h\xc3\xa9.lua", "\xff\xfe.lua", "x.lua.lua", ".lua",
                                              "-x.lua", "--x.lua", std::string(240, 'n') + ".lua", "x.txt", "x",
                                              "unique-index", "fencing-token", "unique-index.lua", "all", "%s{}.lua", "..lua"};
      path = rng.pick(names);
      bytes = valid;
      what = "a script named " + printable(path, 40);
      break;
    }
    case 11: {
      for (int i = 0; i < 250; ++i) bytes += fmt::format("local v{} = {}\n", i, i);
      bytes += valid;
      what = "250 locals at the top level (the limit is 200)";
      break;
    }
    case 12: {
      bytes = "description = \"d\"\nlocal t = {";
      for (int i = 0; i < 200'000; ++i) bytes += fmt::format("{},", i);
      bytes += "}\nfunction bind(req) local n = 0 for _ in pairs(t) do n = n + 1 end end\n";
      what = "a table of 200,000 constants, iterated in bind";
      break;
    }
    case 13: {
      bytes = valid;
      bytes.insert(rng.below(bytes.size() + 1), std::string("\0", 1));
      what = "a NUL byte inside the script";
      break;
    }
    case 14:
      bytes = "description = \"d\"\nfunction bind(req)\n" + std::string(1 << 20, ';') + "\nend\n";
      what = "a line of 1 MiB";
      break;
    default:
      bytes = valid + "\n" + valid;
      what = "the script twice";
  }
  Case c{"", what, path, {}, {}, {}};
  if (folder) c.folders.push_back(path);
  else if (!absent) c.files[path] = bytes;
  c.names_file = path;
  lua_command(rng, ctx, path, c);
  return c;
}

// ---------------------------------------------------------------------------------------------
// The families, and how often each is drawn. Most reach the validator; some run.

struct Family {
  const char* name;
  int weight;
  Case (*make)(Rng&, const Source&, const Context&);
};

const std::vector<Family> kFamilies = {
    {"delete a key", 10, on_file<delete_key>},
    {"add an unknown key", 6, on_file<add_unknown_key>},
    {"value of another type", 11, on_file<retype_value>},
    {"extreme number", 13, on_file<extreme_number>},
    {"number scaled", 8, on_file_bounded},
    {"odd string", 10, on_file<odd_string>},
    {"array emptied or grown", 7, on_file<resize_array>},
    {"deep nesting", 3, on_file<deep_nesting>},
    {"stacked mutations", 8, on_file<stacked>},
    {"file cut short", 4, on_file<truncate>},
    {"bytes changed", 5, on_file<flip_bytes>},
    {"--set", 9, set_flag},
    {"--trials/--seed/--jobs", 4, count_flag},
    {"--strategy", 2, strategy_flag},
    {"sweep --vary", 4, vary_flag},
    {"explore flags", 4, explore_flag},
    {"replay token", 5, token_case},
    {"scenario path", 2, scenario_path},
    {"command line", 1, command_line},
    {"lua script mutated", 10, lua_script},
    {"lua script made up", 3, lua_generated},
};

// `only`, when not empty, keeps the families whose name holds it (the draws then differ from a
// run of every family: rerun a case with the same --family).
bool drawn(const Family& f, const std::string& only) {
  return only.empty() || std::string_view(f.name).find(only) != std::string_view::npos;
}

Case make_case(std::uint64_t seed, int index, const Context& ctx, const std::string& only = "") {
  Rng rng(seed, static_cast<std::uint64_t>(index));
  const Source& s = ctx.sources[static_cast<std::size_t>(index) % ctx.sources.size()];
  int total = 0;
  for (const auto& f : kFamilies)
    if (drawn(f, only)) total += f.weight;
  if (total == 0) throw std::invalid_argument("--family " + only + ": no family's name holds it");
  int draw = static_cast<int>(rng.below(static_cast<std::size_t>(total)));
  for (const auto& f : kFamilies) {
    if (!drawn(f, only) || (draw -= f.weight) >= 0) continue;
    Case c = f.make(rng, s, ctx);
    c.family = f.name;
    return c;
  }
  std::abort();  // the draw is below the total
}

// ---------------------------------------------------------------------------------------------
// Running a case

struct Outcome {
  bool timed_out = false;
  int signal = 0;  // it died of this signal
  int exit_code = -1;
  std::string err;  // what it wrote on stderr (the first MiB)
  double wall_s = 0;
};

volatile sig_atomic_t running_group = 0;  // the child's process group, ended if the driver is stopped

void stop_on_signal(int sig) {
  if (running_group != 0) ::kill(-running_group, SIGKILL);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

std::string read_head(const fs::path& file, std::size_t max_bytes) {
  std::ifstream in(file, std::ios::binary);
  std::string bytes(max_bytes, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(max_bytes));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  return bytes;
}

// Runs locksim in `cwd`, in a process group of its own (it may start gnuplot), stdin empty,
// stdout to `out_file`, stderr to `err_file`, and ends the group after `limit_s`.
Outcome run_child(const Options& o, const std::vector<std::string>& args, const fs::path& cwd, const fs::path& out_file,
                  const fs::path& err_file, double limit_s) {
  std::vector<std::string> words{o.locksim};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const std::string cwd_text = cwd.string(), out_text = out_file.string(), err_text = err_file.string();

  const auto started = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {  // only async-signal-safe calls from here to exec
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    if (::chdir(cwd_text.c_str()) != 0) ::_exit(126);
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(out_text.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_text.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    const rlimit memory{o.memory_bytes, o.memory_bytes}, no_core{0, 0};
    ::setrlimit(RLIMIT_AS, &memory);
    ::setrlimit(RLIMIT_CORE, &no_core);
    ::execv(argv[0], argv.data());
    const char failed[] = "locksim_fuzz: exec failed\n";
    [[maybe_unused]] const auto written = ::write(2, failed, sizeof failed - 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // here too, so the group exists before any kill
  running_group = pid;

  Outcome r;
  sigset_t child;
  sigemptyset(&child);
  sigaddset(&child, SIGCHLD);
  const auto deadline = started + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit_s));
  for (;;) {
    // WNOWAIT leaves the child a zombie, so its group id cannot be reused before the kill below.
    siginfo_t info{};
    ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (info.si_pid == pid) break;
    const auto now = Clock::now();
    if (now >= deadline) {
      r.timed_out = true;
      break;
    }
    const auto wait_ns = std::min<std::int64_t>(std::chrono::nanoseconds(deadline - now).count(), 50'000'000);
    const timespec wait{0, static_cast<long>(wait_ns)};
    ::sigtimedwait(&child, nullptr, &wait);
  }
  ::kill(-pid, SIGKILL);  // on a timeout the child and its own; otherwise what it left behind
  int status = 0;
  ::waitpid(pid, &status, 0);
  running_group = 0;
  r.wall_s = seconds_since(started);
  if (WIFSIGNALED(status) && !r.timed_out) r.signal = WTERMSIG(status);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.err = read_head(err_file, 1 << 20);
  // Not a finding about locksim: the binary under test is gone (being rebuilt, say).
  if (r.exit_code == 127 && r.err.starts_with("locksim_fuzz: exec failed"))
    throw std::runtime_error(fmt::format("cannot start {} (being rebuilt?); no verdict", o.locksim));
  return r;
}

// ---------------------------------------------------------------------------------------------
// Judging a case

enum class Kind { ran, rejected, crashed, hung, multi_line, silent, unnamed, half_written, stray_files, internal, other_exit };

bool is_failure(Kind k) { return k != Kind::ran && k != Kind::rejected; }

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::ran: return "ran";
    case Kind::rejected: return "rejected";
    case Kind::crashed: return "crashed";
    case Kind::hung: return "hung";
    case Kind::multi_line: return "multi-line rejection";
    case Kind::silent: return "rejection without a message";
    case Kind::unnamed: return "rejection not naming the file";
    case Kind::half_written: return "rejection that wrote files";
    case Kind::stray_files: return "wrote outside reports/out";
    case Kind::internal: return "internal error";
    case Kind::other_exit: return "other exit status";
  }
  return "?";
}

// What a case left in its folder besides its inputs, as paths relative to the folder.
std::vector<std::string> left_behind(const fs::path& dir, const Case& c) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string rel = it->path().lexically_relative(dir).string();
    const std::string top = rel.substr(0, rel.find('/'));
    if (c.files.count(top) || std::find(c.folders.begin(), c.folders.end(), top) != c.folders.end()) continue;
    out.push_back(rel);
  }
  return out;
}

struct Judged {
  Kind kind;
  std::string status;  // "exit 2", "SIGSEGV", "over 30 s"
  std::string note;    // what was wrong, for a failure
};

Judged judge(const Case& c, const Outcome& r, const std::vector<std::string>& left, double limit_s) {
  if (r.timed_out) return {Kind::hung, fmt::format("over {:g} s", limit_s), "still running at the case's time limit"};
  if (r.signal != 0) {
    const char* abbrev = ::sigabbrev_np(r.signal);
    return {Kind::crashed, abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", r.signal), "killed by a signal"};
  }
  const std::string status = fmt::format("exit {}", r.exit_code);
  const auto newlines = static_cast<std::size_t>(std::count(r.err.begin(), r.err.end(), '\n'));
  const bool one_line = !r.err.empty() && (newlines == 0 || (newlines == 1 && r.err.back() == '\n'));
  switch (r.exit_code) {
    case 0:
    case 1:
    case 3:
      for (const auto& path : left)
        if (path != "reports" && path != "reports/out" && !path.starts_with("reports/out/"))
          return {Kind::stray_files, status, "wrote " + printable(path, 100)};
      return {Kind::ran, status, ""};
    case 2:
      if (r.err.empty()) return {Kind::silent, status, "nothing on stderr"};
      if (!one_line) return {Kind::multi_line, status, fmt::format("{} lines on stderr", newlines + (r.err.back() != '\n'))};
      if (!c.names_file.empty() && r.err.find(c.names_file) == std::string::npos && !r.err.starts_with("locksim: --"))
        return {Kind::unnamed, status, "the message names neither " + c.names_file + " nor a flag"};
      if (!left.empty()) return {Kind::half_written, status, "left " + printable(left.front(), 100)};
      return {Kind::rejected, status, ""};
    case 70: return {Kind::internal, status, one_line ? "an internal error" : "an internal error, not on one line"};
    default: return {Kind::other_exit, status, "an exit status outside 0, 1, 2, 3"};
  }
}

// The first line of stderr (for an uncaught exception, its type and what()), with numbers and
// quoted text made alike, so that failures of one cause group together.
std::string signature(const std::string& err) {
  std::string line = err.substr(0, err.find('\n'));
  const std::string uncaught = "terminate called after throwing an instance of '";
  if (line.starts_with(uncaught)) {
    const std::string rest = err.size() > line.size() ? err.substr(line.size() + 1) : "";
    std::string what = rest.substr(0, rest.find('\n'));
    what.erase(0, what.find_first_not_of(' '));
    if (what.starts_with("what():")) what.erase(0, what.find_first_not_of(' ', 7));
    line = "uncaught " + line.substr(uncaught.size(), line.size() - uncaught.size() - 1) + ": " + what;
  }
  std::string out;
  bool quoted = false;
  for (char c : line.substr(0, 400)) {
    if (c == '"' || (quoted && c == '\'')) {
      quoted = !quoted;
      if (quoted) out += "\"...\"";
      continue;
    }
    if (quoted) continue;
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (out.empty() || out.back() != '#') out += '#';
      continue;
    }
    out += c;
  }
  return printable(out, 200);
}

// ---------------------------------------------------------------------------------------------
// Setting up: the catalogue and a replay token

Context load_catalogue(const Options& o) {
  Context ctx;
  ctx.scenario_dir = o.scenario_dir.string();
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(o.scenario_dir))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    Source s;
    s.file_name = file.filename().string();
    s.name = file.stem().string();
    s.bytes = read_head(file, 16 << 20);
    s.doc = json::parse(s.bytes);
    // The first strategy the file lists, as `explore --strategy` names it; "all" lists none.
    s.strategy = "unique-index";
    const json list = s.doc.value("strategies", json());
    for (const auto& item : list.is_array() ? list : json::array()) {
      const std::string name = item.is_string() ? item.get<std::string>() : item.value("name", "");
      if (!name.empty()) ctx.strategies.push_back(name);
    }
    if (list.is_array() && !list.empty()) {
      const json& first = list.front();
      s.strategy = first.is_string() ? first.get<std::string>() : first.value("as", first.value("name", s.strategy));
    }
    ctx.sources.push_back(std::move(s));
  }
  // The scripts run in two-clients-pause (small and fast), else in the first account-bind scenario.
  for (std::size_t i = ctx.sources.size(); i-- > 0;) {
    const json workload = ctx.sources[i].doc.value("workload", json::object());
    if (ctx.sources[i].name == "two-clients-pause") {
      ctx.script_scenario = i;
      break;
    }
    if (workload.is_object() && workload.value("kind", "account-bind") == "account-bind") ctx.script_scenario = i;
  }
  // The Lua strategies: strategies/ beside the scenario folder; the script families make up a
  // minimal one when there are none.
  std::vector<fs::path> scripts;
  std::error_code ec;
  const fs::path strategies = o.scenario_dir / ".." / "strategies";
  for (auto it = fs::directory_iterator(strategies, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (it->path().extension() == ".lua") scripts.push_back(it->path());
  std::sort(scripts.begin(), scripts.end());
  for (const auto& file : scripts) ctx.scripts.push_back({file.filename().string(), read_head(file, 1 << 20)});
  std::sort(ctx.strategies.begin(), ctx.strategies.end());
  ctx.strategies.erase(std::unique(ctx.strategies.begin(), ctx.strategies.end()), ctx.strategies.end());
  if (ctx.strategies.empty()) ctx.strategies.push_back("unique-index");
  return ctx;
}

// A token that replays, from `explore` on a scenario where it finds a violation at once; a
// made-up one (still worth mutating) when that fails.
std::string find_token(const Options& o, const Context& ctx, const fs::path& work) {
  const fs::path folder = work / "token";
  fs::create_directories(folder);
  const Outcome r = run_child(o,
                              {"explore", "gc-pause-longer-than-lease", "--strategy", "redis-set-nx-ex-drop", "--budget", "20",
                               "--time", "20", "--no-shrink"},
                              folder, work / "token.out", work / "token.err", o.case_s);
  std::istringstream out(read_head(work / "token.out", 1 << 20));
  for (std::string line; std::getline(out, line);)
    if (line.starts_with("token: ")) return line.substr(7);
  const Source& s = ctx.sources.front();
  fmt::print("fuzz: explore found no token ({}); replay cases mutate a made-up one\n",
             r.signal ? "it crashed" : fmt::format("exit {}", r.exit_code));
  return fmt::format("locksim:1:{}:0000000000000000:{}:1::", s.name, s.strategy);
}

// ---------------------------------------------------------------------------------------------
// Reporting

std::string family_flag(const Options& o) { return o.family.empty() ? "" : " --family " + shell_word(o.family); }

std::string command_text(const Case& c, std::size_t max_arg = 80) {
  std::string text = "locksim";
  for (const auto& a : c.args) text += " " + (a.size() > max_arg ? printable(a, 40) : shell_word(a));
  return text;
}

// The case's inputs, what it wrote on stderr and a script that reruns it, in `folder`.
void save_failure(const Options& o, const Case& c, const Outcome& r, const Judged& j, int index, const fs::path& folder) {
  fs::create_directories(folder);
  for (const auto& [name, bytes] : c.files) std::ofstream(folder / name, std::ios::binary) << bytes;
  for (const auto& name : c.folders) fs::create_directories(folder / name);
  std::ofstream(folder / "stderr.txt", std::ios::binary) << r.err;
  std::ofstream script(folder / "reproduce.sh", std::ios::binary);
  script << "#!/bin/bash\n"
         << fmt::format("# locksim_fuzz --seed {} --case {}{}: {}: {} {}\n", o.seed, index, family_flag(o), c.family,
                        printable(c.what, 100), printable(c.where, 100))
         << fmt::format("# found: {} ({}): {}\n", kind_name(j.kind), j.status, j.note)
         << "# Runs in a copy of this folder, removed after, so the reports it writes do not stay.\n"
         << "set -e\nhere=\"$(cd \"$(dirname \"$0\")\" && pwd)\"\nwork=\"$(mktemp -d)\"\ntrap 'rm -rf \"$work\"' EXIT\n"
         << "cp -r \"$here\"/. \"$work\"/ && rm -f \"$work\"/reproduce.sh \"$work\"/stderr.txt && cd \"$work\"\n"
         << shell_word(o.locksim);
  for (const auto& a : c.args) script << " " << shell_word(a);
  script << "\n";
  script.close();
  fs::permissions(folder / "reproduce.sh", fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::add);
}

void print_failure(const Options& o, int index, const Case& c, const Outcome& r, const Judged& j, const fs::path& saved) {
  fmt::print("FAIL case {} ({}, {}): {}: {} {}\n", index, kind_name(j.kind), j.status, c.family, printable(c.what, 100),
             printable(c.where, 100));
  fmt::print("  command: {}\n", command_text(c));
  const std::string err_head = r.err.substr(0, r.err.find('\n'));
  fmt::print("  {}; stderr: {}\n", j.note, err_head.empty() ? "(nothing)" : printable(err_head, 200));
  fmt::print("  saved:   {}/reproduce.sh; alone: locksim_fuzz ... --seed {} --case {}{}\n", saved.string(), o.seed, index,
             family_flag(o));
}

// How the cases ended: by kind and by family, and the failures grouped in classes of one
// kind, family and signature, each likely one cause.
class Tally {
 public:
  void add(int index, const Case& c, const Outcome& r, const Judged& j) {
    ++cases_;
    ++kinds_[j.kind];
    auto& [family_cases, family_kinds] = families_[c.family];
    ++family_cases;
    ++family_kinds[j.kind];
    if (r.wall_s > slowest_s_) slowest_s_ = r.wall_s, slowest_ = index;
    if (!is_failure(j.kind)) return;
    ++failures_;
    const std::string key = fmt::format("{} ({}) | {} | {}", kind_name(j.kind), j.status, c.family, signature(r.err));
    Class& k = classes_.try_emplace(key, Class{0, index, {}}).first->second;
    ++k.cases;
    const std::string example = printable(c.what, 60);
    if (k.examples.size() < 3 && std::find(k.examples.begin(), k.examples.end(), example) == k.examples.end())
      k.examples.push_back(example);
  }
  int cases() const { return cases_; }
  int failures() const { return failures_; }

  void print(std::uint64_t seed) const {
    fmt::print("\nby family: cases: how they ended\n");
    for (const auto& [family, tally] : families_) {
      std::string ends;
      for (const auto& [kind, n] : tally.second) ends += fmt::format("{}{} {}", ends.empty() ? "" : ", ", n, kind_name(kind));
      fmt::print("  {:<24} {:>4}: {}\n", family, tally.first, ends);
    }
    if (!classes_.empty()) {
      fmt::print("\nfailure classes (kind (status) | family | stderr, numbers as # and quotes as \"...\"):\n");
      for (const auto& [key, k] : classes_)
        fmt::print("  {}\n      {} cases, first {}; e.g. {}\n", key, k.cases, k.first, fmt::join(k.examples, "; "));
    }
    const auto n = [&](Kind k) { return kinds_.count(k) ? kinds_.at(k) : 0; };
    const int others = n(Kind::silent) + n(Kind::unnamed) + n(Kind::half_written) + n(Kind::stray_files) + n(Kind::internal) +
                       n(Kind::other_exit);
    fmt::print("\nfuzz: {} cases (seed {}): {} rejected, {} ran, {} crashed, {} hung, {} multi-line rejections, {} other failures "
               "({} silent rejections, {} not naming the file, {} rejections that wrote files, {} runs that wrote outside "
               "reports/out, {} internal errors, {} other exit statuses)\n",
               cases_, seed, n(Kind::rejected), n(Kind::ran), n(Kind::crashed), n(Kind::hung), n(Kind::multi_line), others,
               n(Kind::silent), n(Kind::unnamed), n(Kind::half_written), n(Kind::stray_files), n(Kind::internal),
               n(Kind::other_exit));
    fmt::print("fuzz: slowest case {} ({:.1f} s)\n", slowest_, slowest_s_);
  }

 private:
  struct Class {
    int cases = 0;
    int first = 0;
    std::vector<std::string> examples;  // distinct mutations, a few
  };
  int cases_ = 0, failures_ = 0, slowest_ = -1;
  double slowest_s_ = 0;
  std::map<Kind, int> kinds_;
  std::map<std::string, std::pair<int, std::map<Kind, int>>> families_;
  std::map<std::string, Class> classes_;
};

// ---------------------------------------------------------------------------------------------

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::optional<std::string>(v) : std::nullopt;
}

Options parse_options(int argc, char** argv) {
  Options o;
  if (auto v = env("LOCKSIM_FUZZ_SEED")) o.seed = std::stoull(*v);
  if (auto v = env("LOCKSIM_FUZZ_CASES")) o.cases = std::stoi(*v);
  if (auto v = env("LOCKSIM_FUZZ_TIME_S")) o.total_s = std::stod(*v);
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--seed") o.seed = std::stoull(value());
    else if (a == "--cases") o.cases = std::stoi(value());
    else if (a == "--case") o.only_case = std::stoi(value());
    else if (a == "--time-s") o.total_s = std::stod(value());
    else if (a == "--case-time-s") o.case_s = std::stod(value());
    else if (a == "--failures") o.failures = value();
    else if (a == "--log") o.log = value();
    else if (a == "--family") o.family = value();
    else if (a.starts_with("--")) throw std::invalid_argument("unknown flag " + a);
    else positional.push_back(a);
  }
  if (positional.size() != 2) throw std::invalid_argument("expected LOCKSIM and SCENARIO_DIR");
  o.locksim = fs::absolute(positional[0]).string();
  o.scenario_dir = fs::absolute(positional[1]);
  if (::access(o.locksim.c_str(), X_OK) != 0) throw std::invalid_argument(o.locksim + ": not an executable");
  if (o.cases < 1) throw std::invalid_argument("--cases: expected at least 1");
  return o;
}

int fuzz(const Options& o) {
  const auto started = Clock::now();
  std::string pattern = (fs::temp_directory_path() / "locksim-fuzz-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error(fmt::format("mkdtemp: {}", std::strerror(errno)));
  const fs::path work = pattern;
  struct RemovedAtEnd {  // also when the driver stops on an error
    fs::path path;
    ~RemovedAtEnd() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } removed_at_end{work};

  const Context loaded = load_catalogue(o);
  if (loaded.sources.empty()) throw std::invalid_argument(o.scenario_dir.string() + ": no scenario files");
  Context ctx = loaded;
  ctx.token = find_token(o, ctx, work);

  const int first = o.only_case.value_or(0);
  const int last = o.only_case ? *o.only_case + 1 : o.cases;
  fmt::print("fuzz: seed {} (LOCKSIM_FUZZ_SEED or --seed), {} cases (LOCKSIM_FUZZ_CASES or --cases) over {} scenario files\n",
             o.seed, last - first, ctx.sources.size());
  fmt::print("fuzz: at most {:g} s in all (LOCKSIM_FUZZ_TIME_S or --time-s), {:g} s and {} GiB a case; locksim: {}\n",
             o.total_s, o.case_s, o.memory_bytes >> 30, o.locksim);
  fmt::print("fuzz: replay cases mutate {}\n", printable(ctx.token, 200));
  fmt::print("fuzz: script cases mutate {} scripts of strategies/ and run them in {}{}\n", ctx.scripts.size(),
             ctx.sources[ctx.script_scenario].name, o.family.empty() ? "" : "; families: those named *" + o.family + "*");
  std::fflush(stdout);
  if (!o.only_case && fs::is_directory(o.failures))  // the last run's failures, not anything else there
    for (const auto& e : fs::directory_iterator(o.failures))
      if (e.path().filename().string().starts_with("case-")) fs::remove_all(e.path());

  Tally tally;
  std::ofstream log;
  if (o.log) log.open(*o.log);
  for (int i = first; i < last && seconds_since(started) <= o.total_s; ++i) {
    const Case c = make_case(o.seed, i, ctx, o.family);
    const fs::path folder = work / "case";
    fs::remove_all(folder);
    fs::create_directories(folder);
    for (const auto& [name, bytes] : c.files) std::ofstream(folder / name, std::ios::binary) << bytes;
    for (const auto& name : c.folders) fs::create_directories(folder / name);

    const Outcome r = run_child(o, c.args, folder, "/dev/null", work / "stderr", o.case_s);
    const Judged j = judge(c, r, left_behind(folder, c), o.case_s);
    tally.add(i, c, r, j);
    if (log)
      log << fmt::format("{}\t{}\t{}\t{}\t{:.2f}\t{}\t{}\t{}\n", i, kind_name(j.kind), j.status, c.family, r.wall_s,
                         printable(c.what, 80), printable(command_text(c), 200), printable(r.err, 300));
    if (o.only_case)
      fmt::print("case {}: {}: {} {}\n  command: {}\n  {} ({}), {:.2f} s; stderr:\n{}\n", i, c.family, printable(c.what, 100),
                 printable(c.where, 100), command_text(c), kind_name(j.kind), j.status, r.wall_s, printable(r.err, 2000));
    if (is_failure(j.kind)) {
      const auto failures = static_cast<std::size_t>(tally.failures());
      const fs::path saved = o.failures / fmt::format("case-{}", i);
      if (failures <= o.failures_saved_max) save_failure(o, c, r, j, i, saved);
      if (failures <= o.failures_shown_max) print_failure(o, i, c, r, j, saved);
    }
    if (!o.only_case && (i + 1) % 100 == 0) fmt::print("fuzz: {} cases, {:.0f} s\n", i + 1, seconds_since(started));
    std::fflush(stdout);
  }

  const auto failures = static_cast<std::size_t>(tally.failures());
  if (failures > o.failures_shown_max)
    fmt::print("... {} more failures, the first {} saved under {}\n", failures - o.failures_shown_max, o.failures_saved_max,
               o.failures.string());
  tally.print(o.seed);
  fmt::print("fuzz: {:.1f} s in all{}\n", seconds_since(started),
             tally.cases() < last - first
                 ? fmt::format("; stopped at the time limit: {} of {} cases ran", tally.cases(), last - first)
                 : "");
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // SIGCHLD stays pending for sigtimedwait, which wakes the wait for a child at once.
  sigset_t child;
  sigemptyset(&child);
  sigaddset(&child, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &child, nullptr);
  ::signal(SIGINT, stop_on_signal);
  ::signal(SIGTERM, stop_on_signal);
  try {
    return fuzz(parse_options(argc, argv));
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr,
               "locksim_fuzz: {}\nusage: locksim_fuzz LOCKSIM SCENARIO_DIR [--seed S] [--cases N] [--case I] [--time-s T] "
               "[--case-time-s T] [--failures DIR] [--log FILE] [--family TEXT]\n",
               e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "locksim_fuzz: {}\n", e.what());
    return 2;
  }
}
