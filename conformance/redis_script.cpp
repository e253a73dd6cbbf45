// locksim_redis_script: runs a conformance script of Redis commands on the Redis model and
// prints what each step got, for conformance/conformance.py to compare with a real Redis.
//
//   locksim_redis_script SCRIPT.json
//
// A script: {"name": ..., "redis": {"appendfsync": "none" | "everysec" | "always"}, "steps": [...]}
// with each step one of
//   {"session": "c1", "redis": ["SET", "k", "v", "NX", "PX", "300"]}   a command on a client
//   {"sleep_ms": 400}                                                  time passes
//   {"kill": true}                                                     kill -9 of the Redis process
//   {"restart": true}                                                  the process starts again
// Commands: GET, SET key value [NX] [XX] [PX ms], DEL, PEXPIRE key ms and EXPIRE key s (0 or less deletes), PTTL, INCR, and the lock
// scripts CAS_DEL key value (compare-and-delete) and CAS_PEXPIRE key value ms.
// Prints {"steps": [outcome, ...], "keys": "<the live keys and values as sorted JSON>"}; an
// outcome is "OK", "nil", "(integer) N", a JSON string, or "error". Bad input: one line, exit 2.

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/net/network.hpp"
#include "models/node/node.hpp"
#include "models/redis/client.hpp"
#include "models/redis/server.hpp"
#include "sim/sim.hpp"

namespace {

using json = nlohmann::json;
using models::redis::Command;
using models::redis::Op;
using models::redis::Reply;

struct BadInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Step {
  enum class Kind { command, sleep, kill, restart } kind = Kind::command;
  std::string session;
  Command command;
  sim::Duration sleep{};
};

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

std::int64_t milliseconds(const std::string& text, const std::string& where) {
  std::size_t used = 0;
  std::int64_t ms = 0;
  try {
    ms = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || ms <= 0 || ms > 1'000'000'000) throw BadInput(fmt::format("{}: expected a positive number of ms, got '{}'", where, text));
  return ms;
}

Command parse_command(const json& words, const std::string& where) {
  if (!words.is_array() || words.empty()) throw BadInput(fmt::format("{}: expected a list of words", where));
  std::vector<std::string> w;
  for (const auto& x : words) {
    if (x.is_string()) w.push_back(x.get<std::string>());
    else if (x.is_number_integer()) w.push_back(std::to_string(x.get<std::int64_t>()));
    else throw BadInput(fmt::format("{}: each word a string or an integer", where));
  }
  const std::string op = upper(w[0]);
  const auto want = [&](std::size_t n) {
    if (w.size() != n) throw BadInput(fmt::format("{}: {} takes {} arguments", where, op, n - 1));
  };
  const auto ms = [&](std::size_t i) { return sim::Duration(std::chrono::milliseconds(milliseconds(w[i], where))); };
  // PEXPIRE and EXPIRE take any integer: 0 or less deletes the key, as on Redis.
  const auto expire_ms = [&](std::size_t i) {
    const std::string text = w[i].starts_with('-') ? w[i].substr(1) : w[i];
    if (text == "0") return sim::Duration::zero();
    const std::int64_t n = milliseconds(text, where);
    return sim::Duration(std::chrono::milliseconds(w[i].starts_with('-') ? -n : n));
  };
  if (op == "GET") return want(2), Command::get(w[1]);
  if (op == "DEL") return want(2), Command::del(w[1]);
  if (op == "PTTL") return want(2), Command::pttl(w[1]);
  if (op == "INCR") return want(2), Command::incr(w[1]);
  if (op == "PEXPIRE") return want(3), Command::pexpire(w[1], expire_ms(2));
  if (op == "EXPIRE") return want(3), Command::pexpire(w[1], expire_ms(2) * 1000);
  if (op == "CAS_DEL") return want(3), Command::cas_del(w[1], w[2]);
  if (op == "CAS_PEXPIRE") return want(4), Command::cas_pexpire(w[1], w[2], ms(3));
  if (op == "SET") {
    if (w.size() < 3) throw BadInput(fmt::format("{}: SET takes a key and a value", where));
    Command c = Command::set(w[1], w[2]);
    for (std::size_t i = 3; i < w.size(); ++i) {
      const std::string flag = upper(w[i]);
      if (flag == "NX") c.nx = true;
      else if (flag == "XX") c.xx = true;
      else if (flag == "PX" && i + 1 < w.size()) c.ttl = ms(++i);
      else throw BadInput(fmt::format("{}: SET option '{}' (supported: NX, XX, PX ms)", where, w[i]));
    }
    return c;
  }
  throw BadInput(fmt::format("{}: command '{}' (supported: GET, SET, DEL, PEXPIRE, EXPIRE, PTTL, INCR, CAS_DEL, CAS_PEXPIRE)", where, w[0]));
}

std::string outcome(const Reply& r) {
  switch (r.kind) {
    case Reply::Kind::ok: return "OK";
    case Reply::Kind::nil: return "nil";
    case Reply::Kind::integer: return fmt::format("(integer) {}", r.integer);
    case Reply::Kind::bulk: return json(r.text).dump();
    case Reply::Kind::error: return "error";
  }
  return "?";
}

int run(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw BadInput(fmt::format("{}: cannot read it", path));
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& e) {
    throw BadInput(fmt::format("{}: not JSON: {}", path, e.what()));
  }
  if (!doc.is_object() || !doc.contains("steps") || !doc["steps"].is_array()) throw BadInput(fmt::format("{}: expected an object with steps", path));

  models::redis::ServerConfig config;
  if (doc.contains("redis")) {
    const json& r = doc["redis"];
    const std::string fsync = r.is_object() && r.contains("appendfsync") && r["appendfsync"].is_string() ? r["appendfsync"].get<std::string>() : "";
    if (fsync == "none") config.persistence = models::redis::Persistence::none;
    else if (fsync == "everysec") config.persistence = models::redis::Persistence::aof_everysec;
    else if (fsync == "always") config.persistence = models::redis::Persistence::aof_always;
    else throw BadInput(fmt::format("{}: /redis/appendfsync: expected \"none\", \"everysec\" or \"always\"", path));
  }

  std::vector<Step> steps;
  std::vector<std::string> sessions;
  for (std::size_t i = 0; i < doc["steps"].size(); ++i) {
    const json& s = doc["steps"][i];
    const std::string where = fmt::format("{}: /steps/{}", path, i);
    Step step;
    if (s.contains("redis")) {
      if (!s.contains("session") || !s["session"].is_string()) throw BadInput(where + ": a command needs its session");
      step.session = s["session"].get<std::string>();
      step.command = parse_command(s["redis"], where + "/redis");
      if (std::find(sessions.begin(), sessions.end(), step.session) == sessions.end()) sessions.push_back(step.session);
    } else if (s.contains("sleep_ms") && s["sleep_ms"].is_number() && s["sleep_ms"].get<double>() >= 0) {
      step.kind = Step::Kind::sleep;
      step.sleep = std::chrono::duration_cast<sim::Duration>(std::chrono::duration<double, std::milli>(s["sleep_ms"].get<double>()));
    } else if (s.contains("kill")) {
      step.kind = Step::Kind::kill;
    } else if (s.contains("restart")) {
      step.kind = Step::Kind::restart;
    } else {
      throw BadInput(where + ": expected redis (with session), sleep_ms, kill or restart");
    }
    steps.push_back(std::move(step));
  }

  sim::Engine engine(sim::EngineConfig{});
  // Loopback: a tenth of a millisecond each way.
  models::Network net(engine, {sim::fixed(std::chrono::microseconds(100)), 0});
  std::deque<models::Node> nodes;
  auto& server_node = nodes.emplace_back(engine, models::NodeConfig{"redis-1", {}});
  models::redis::Server server(net, server_node, config);
  server.start();
  std::map<std::string, std::unique_ptr<models::redis::Client>> clients;
  for (const auto& name : sessions) {
    auto& node = nodes.emplace_back(engine, models::NodeConfig{name, {}});
    clients[name] = std::make_unique<models::redis::Client>(net, node, server);
  }
  auto& driver = nodes.emplace_back(engine, models::NodeConfig{"script", {}});

  std::vector<std::string> outcomes;
  json keys = json::object();
  driver.spawn("script", [&] {
    for (const Step& step : steps) {
      switch (step.kind) {
        case Step::Kind::sleep: sim::sleep_for(step.sleep), outcomes.emplace_back("ok"); break;
        case Step::Kind::kill: server.kill_process(), outcomes.emplace_back("ok"); break;
        case Step::Kind::restart: server_node.restart(), outcomes.emplace_back("ok"); break;
        case Step::Kind::command: {
          try {
            outcomes.push_back(outcome(clients.at(step.session)->run(step.command)));
          } catch (const sim::Timeout&) {
            outcomes.emplace_back("error");
          }
          break;
        }
      }
    }
    const sim::Time now = server_node.clock().now();
    for (const auto& [key, value] : server.keyspace().data())
      if (server.keyspace().find(key, now) != nullptr) keys[key] = value.is_hash ? json("(hash)") : json(value.text);
  });
  if (!engine.run().ok()) throw std::runtime_error("the model's run did not finish");
  engine.shutdown();
  std::cout << json{{"steps", outcomes}, {"keys", keys.dump()}}.dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: locksim_redis_script SCRIPT.json\n";
    return 2;
  }
  try {
    return run(argv[1]);
  } catch (const BadInput& e) {
    std::cerr << "locksim_redis_script: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "locksim_redis_script: " << e.what() << "\n";
    return 1;
  }
}
