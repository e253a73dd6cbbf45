// The fuzz test's cases (fuzz_inputs.cpp runs them): catalogue scenario files mutated on the
// parsed JSON and on the bytes, hostile flags and replay tokens, and the families' weights.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz.hpp"

namespace fuzz {

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

Case make_case(std::uint64_t seed, int index, const Context& ctx, const std::string& only) {
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

}  // namespace fuzz
