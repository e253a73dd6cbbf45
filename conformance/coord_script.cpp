// locksim_coord_script: runs a conformance script of ZooKeeper or etcd requests on the models of
// models/coord and prints what each step got, for conformance/coord.py to compare with a real
// ZooKeeper 3.8 or etcd 3.4.
//
//   locksim_coord_script SCRIPT.json
//
// The script's steps and the text of each outcome are described in coord.py. The model side
// differs from the real one only in what the real side must do to share one server between
// scripts: here each script has a server of its own, so the zxids count from 0 and the
// revisions from 1, which is what the real side subtracts.
// Prints {"steps": [outcome, ...], "final": "<the nodes or keys left, as sorted JSON>"}.
// Bad input: one line, exit 2.

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "models/coord/etcd.hpp"
#include "models/coord/zookeeper.hpp"
#include "models/net/network.hpp"
#include "models/node/node.hpp"
#include "sim/sim.hpp"

namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

struct BadInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr auto kTick = 100ms;               // the real server's tickTime (suite/coord_servers.py's zoo.cfg)
constexpr std::int64_t kZkBase = 0;        // a fresh server's zxid before the first session
constexpr std::int64_t kEtcdBase = 1;       // a fresh store's revision
constexpr auto kResumeRetry = 50ms;         // a resumed client's round trips, as the real side's
constexpr int kResumeTries = 200;           // 10 s of them

std::string relative(std::int64_t n, std::int64_t base) { return fmt::format("{:+}", n - base); }

const json& field(const json& doc, const std::string& key, const std::string& where) {
  if (!doc.contains(key)) throw BadInput(fmt::format("{}: expected {}", where, key));
  return doc[key];
}

std::string text_at(const json& words, std::size_t i, const std::string& where) {
  if (i >= words.size() || !words[i].is_string()) throw BadInput(fmt::format("{}/{}: expected a string", where, i));
  return words[i].get<std::string>();
}

std::int64_t integer_at(const json& words, std::size_t i, const std::string& where) {
  if (i >= words.size() || !words[i].is_number_integer()) throw BadInput(fmt::format("{}/{}: expected an integer", where, i));
  return words[i].get<std::int64_t>();
}

/// A step: a request of one session, or time passing, or a session's process stopped or
/// started again.
struct Step {
  enum class Kind { request, sleep, pause, resume } kind = Kind::request;
  std::string session;
  json words;  // the request: its operation and arguments
  sim::Duration sleep{};
  std::string where;
};

struct Script {
  std::string service;  // "zk" or "etcd"
  std::vector<Step> steps;
  std::vector<std::string> sessions;  // in the order they first appear
  sim::Duration session_timeout = 1000ms;
};

Script load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw BadInput(fmt::format("{}: cannot read it", path));
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& e) {
    throw BadInput(fmt::format("{}: not JSON: {}", path, e.what()));
  }
  if (!doc.is_object() || !doc.contains("steps") || !doc["steps"].is_array() || doc["steps"].empty())
    throw BadInput(fmt::format("{}: expected an object with a non-empty list of steps", path));
  Script script;
  if (doc.contains("zookeeper")) {
    const json& zk = doc["zookeeper"];
    const json* ms = zk.is_object() && zk.contains("session_timeout_ms") ? &zk["session_timeout_ms"] : nullptr;
    if (ms == nullptr || !ms->is_number_integer() || *ms < 1 || *ms > 600'000)
      throw BadInput(fmt::format("{}: /zookeeper/session_timeout_ms: expected a number of ms from 1 to 600000", path));
    script.session_timeout = std::chrono::milliseconds(ms->get<std::int64_t>());
  }
  std::map<std::string, bool> paused;  // by session, for those a step pauses or resumes
  for (std::size_t i = 0; i < doc["steps"].size(); ++i) {
    const json& s = doc["steps"][i];
    Step step;
    step.where = fmt::format("{}: /steps/{}", path, i);
    if (!s.is_object()) throw BadInput(step.where + ": expected an object");
    const auto named = [&](const json& name) {
      if (!name.is_string() || name.get<std::string>().empty()) throw BadInput(step.where + ": a session is named by a string");
      step.session = name.get<std::string>();
      if (std::find(script.sessions.begin(), script.sessions.end(), step.session) == script.sessions.end())
        script.sessions.push_back(step.session);
    };
    if (s.contains("zk") || s.contains("etcd")) {
      const std::string service = s.contains("zk") ? "zk" : "etcd";
      if (!script.service.empty() && script.service != service)
        throw BadInput(step.where + ": a script's requests go to ZooKeeper or to etcd, not both");
      script.service = service;
      step.words = s[service];
      if (!step.words.is_array() || step.words.empty() || !step.words[0].is_string())
        throw BadInput(fmt::format("{}/{}: expected a list of an operation and its arguments", step.where, service));
      named(field(s, "session", step.where));
      if (paused.count(step.session) > 0 && paused[step.session]) throw BadInput(fmt::format("{}: session {} is paused", step.where, step.session));
    } else if (s.contains("sleep_ms")) {
      if (!s["sleep_ms"].is_number() || s["sleep_ms"].get<double>() < 0 || s["sleep_ms"].get<double>() > 600'000)
        throw BadInput(step.where + "/sleep_ms: expected a number of ms from 0 to 600000");
      step.kind = Step::Kind::sleep;
      step.sleep = std::chrono::duration_cast<sim::Duration>(std::chrono::duration<double, std::milli>(s["sleep_ms"].get<double>()));
    } else if (s.contains("pause") || s.contains("resume")) {
      step.kind = s.contains("pause") ? Step::Kind::pause : Step::Kind::resume;
      named(s.contains("pause") ? s["pause"] : s["resume"]);
      if (paused[step.session] == (step.kind == Step::Kind::pause))
        throw BadInput(fmt::format("{}: session {} is {}", step.where, step.session, paused[step.session] ? "paused already" : "not paused"));
      paused[step.session] = step.kind == Step::Kind::pause;
    } else {
      throw BadInput(step.where + ": expected zk or etcd (with session), sleep_ms, pause or resume");
    }
    script.steps.push_back(std::move(step));
  }
  if (script.service.empty()) throw BadInput(fmt::format("{}: no zk or etcd request in its steps", path));
  if (script.service == "etcd" && !paused.empty()) throw BadInput(fmt::format("{}: pause and resume are for ZooKeeper sessions", path));
  for (const auto& [session, still] : paused)
    if (still) throw BadInput(fmt::format("{}: session {} is never resumed", path, session));
  return script;
}

/// A pause lasts until its resume step: the time the script sleeps in between (the requests in
/// between take a few ms more, after which the resume step finds the node running again).
sim::Duration pause_length(const Script& script, std::size_t from) {
  sim::Duration length{};
  for (std::size_t i = from + 1; i < script.steps.size(); ++i) {
    const Step& s = script.steps[i];
    if (s.kind == Step::Kind::resume && s.session == script.steps[from].session) break;
    if (s.kind == Step::Kind::sleep) length += s.sleep;
  }
  return std::max(length, sim::Duration{1ms});
}

/// One loopback world: the server's node, a node for each session, and one the script runs on.
struct World {
  sim::Engine engine{sim::EngineConfig{}};
  models::Network net{engine, {sim::fixed(std::chrono::microseconds(100)), 0}};  // loopback: 0.1 ms each way
  std::deque<models::Node> nodes;
  models::Node& node(const std::string& name) { return nodes.emplace_back(engine, models::NodeConfig{name, {}}); }

  /// Runs `script` in a process of `driver` to its end; a step found bad on the way is bad input.
  template <class Body>
  void run(models::Node& driver, Body script) {
    std::optional<std::string> bad;
    driver.spawn("script", [&] {
      try {
        script();
      } catch (const BadInput& e) {
        bad = e.what();
      }
    });
    const bool finished = engine.run().ok();
    if (bad) throw BadInput(*bad);
    if (!finished) throw std::runtime_error("the model's run did not finish");
    engine.shutdown();
  }
};

// --- ZooKeeper ----------------------------------------------------------------

class ZooKeeperRun {
 public:
  explicit ZooKeeperRun(const Script& script) : script_(script) {
    server_.start();
    for (const auto& name : script.sessions) {
      Session& s = sessions_[name];
      s.name = name;
      s.node = &world_.node(name);
      s.client = std::make_unique<models::zk::Client>(world_.net, *s.node, server_, models::zk::ClientConfig{.session_timeout = script.session_timeout});
      s.client->on_state_change([this, &s](models::zk::ConnectionState state) { changed(s, state); });
    }
  }

  json run() {
    std::vector<std::string> outcomes;
    std::string final;
    world_.run(driver_, [&] {
      for (const auto& name : script_.sessions) sessions_[name].client->connect();
      for (std::size_t i = 0; i < script_.steps.size(); ++i) outcomes.push_back(step(i));
      final = tree();
      for (auto& [name, s] : sessions_) s.client->close();
    });
    return json{{"steps", outcomes}, {"final", final}};
  }

 private:
  /// A watch event as the script is told it: its write's zxid orders it, then the server's
  /// order within one write (the node's own watches, then its parent's children watches). The
  /// processes that take two events of one write wake in an order of the engine's choosing.
  struct Event {
    models::zk::Zxid zxid = 0;
    bool parent = false;
    std::string text;
    bool operator<(const Event& o) const { return std::tie(zxid, parent) < std::tie(o.zxid, o.parent); }
  };

  struct Session {
    std::string name;
    models::Node* node = nullptr;
    std::unique_ptr<models::zk::Client> client;
    std::vector<Event> events;        // received since the script last asked
    std::set<std::pair<models::zk::Zxid, std::string>> told;
    bool lost = false;                // LOST since the last pause
    bool closed = false;
    int opened = 0;                   // sessions this client has had
  };

  void changed(Session& s, models::zk::ConnectionState state) {
    using models::zk::ConnectionState;
    if (state == ConnectionState::lost) s.lost = true;
    if ((state == ConnectionState::connected || state == ConnectionState::reconnected) && owners_.count(s.client->session()) == 0)
      owners_[s.client->session()] = ++s.opened == 1 ? s.name : fmt::format("{}#{}", s.name, s.opened);
  }

  std::string stat_text(const models::zk::Stat& st) const {
    std::string owner = "none";
    if (st.ephemeral_owner != 0) {
      const auto it = owners_.find(st.ephemeral_owner);
      owner = it == owners_.end() ? "other" : it->second;
    }
    return fmt::format("czxid={} mzxid={} pzxid={} version={} cversion={} children={} owner={}", relative(st.czxid, kZkBase),
                       relative(st.mzxid, kZkBase), relative(st.pzxid, kZkBase), st.version, st.cversion, st.num_children, owner);
  }

  static const char* event_word(models::zk::WatchEvent::Type type) {
    using T = models::zk::WatchEvent::Type;
    switch (type) {
      case T::node_created: return "created";
      case T::node_deleted: return "deleted";
      case T::node_data_changed: return "changed";
      case T::node_children_changed: return "child";
      case T::session_expired: return nullptr;
    }
    return nullptr;
  }

  /// The watch a request asks for, if it does: taken by `take` once the request has set it.
  models::zk::Watch* watch_for(const json& words, std::size_t at, const std::string& where) {
    if (words.size() <= at) return nullptr;
    if (text_at(words, at, where) != "watch") throw BadInput(fmt::format("{}/{}: expected \"watch\"", where, at));
    return &watches_.emplace_back();
  }

  /// Takes the event of a watch a request set, on the session's node (so not while the node is
  /// paused, as a stopped client takes none), for the script's next `events`. Watches of one
  /// session on one node fire on one notification, which the script is told once (as a client
  /// calls one watcher once).
  void take(Session& s, models::zk::Watch* w) {
    if (w == nullptr) return;
    s.node->spawn(s.name + ".watch", [&s, w] {
      const auto event = w->wait();
      const char* word = event_word(event.type);
      if (word == nullptr) return;
      Event e{event.zxid, event.type == models::zk::WatchEvent::Type::node_children_changed, fmt::format("{} {}", word, event.path)};
      if (s.told.insert({e.zxid, e.text}).second) s.events.push_back(std::move(e));
    });
  }

  std::string step(std::size_t i) {
    const Step& step = script_.steps[i];
    switch (step.kind) {
      case Step::Kind::sleep: sim::sleep_for(step.sleep); return "ok";
      case Step::Kind::pause: {
        Session& s = sessions_[step.session];
        s.lost = false;
        s.node->pause(pause_length(script_, i));
        return "ok";
      }
      case Step::Kind::resume: return resume(sessions_[step.session]);
      case Step::Kind::request: break;
    }
    Session& s = sessions_[step.session];
    if (s.closed) {
      s.closed = false;
      s.client->connect();
    }
    const std::string where = step.where + "/zk";
    try {
      return request(s, step.words, where);
    } catch (const models::zk::KeeperError& e) {
      return models::zk::to_string(e.code());
    } catch (const sim::Timeout&) {
      return "ConnectionLoss";
    }
  }

  std::string request(Session& s, const json& w, const std::string& where) {
    using models::zk::CreateMode;
    models::zk::Client& c = *s.client;
    const std::string op = text_at(w, 0, where);
    const auto version = [&](std::size_t at) { return w.size() > at ? static_cast<std::int32_t>(integer_at(w, at, where)) : -1; };
    const auto arity = [&](std::size_t least, std::size_t most) {
      if (w.size() < least || w.size() > most)
        throw BadInput(least == most ? fmt::format("{}: {} takes {} arguments", where, op, least - 1)
                                     : fmt::format("{}: {} takes {} to {} arguments", where, op, least - 1, most - 1));
    };
    if (op == "create") {
      arity(4, 4);
      static const std::map<std::string, CreateMode> kModes = {{"persistent", CreateMode::persistent},
                                                              {"ephemeral", CreateMode::ephemeral},
                                                              {"persistent_sequential", CreateMode::persistent_sequential},
                                                              {"ephemeral_sequential", CreateMode::ephemeral_sequential}};
      const auto mode = kModes.find(text_at(w, 3, where));
      if (mode == kModes.end()) throw BadInput(fmt::format("{}/3: expected persistent, ephemeral, persistent_sequential or ephemeral_sequential", where));
      return "ok " + c.create(text_at(w, 1, where), text_at(w, 2, where), mode->second);
    }
    if (op == "delete") {
      arity(2, 3);
      c.remove(text_at(w, 1, where), version(2));
      return "ok";
    }
    if (op == "exists") {
      arity(2, 3);
      models::zk::Watch* watch = watch_for(w, 2, where);
      const auto st = c.exists(text_at(w, 1, where), watch);
      take(s, watch);
      return st ? stat_text(*st) : "none";
    }
    if (op == "get") {
      arity(2, 3);
      models::zk::Stat st;
      models::zk::Watch* watch = watch_for(w, 2, where);
      const std::string data = c.get_data(text_at(w, 1, where), watch, &st);
      take(s, watch);
      return json(data).dump() + " " + stat_text(st);
    }
    if (op == "set") {
      arity(3, 4);
      return stat_text(c.set_data(text_at(w, 1, where), text_at(w, 2, where), version(3)));
    }
    if (op == "children") {
      arity(2, 3);
      models::zk::Watch* watch = watch_for(w, 2, where);
      auto names = c.get_children(text_at(w, 1, where), watch);
      take(s, watch);
      std::sort(names.begin(), names.end());
      return json(names).dump();
    }
    if (op == "events") {
      arity(1, 1);
      c.exists("/");         // a round trip: every event sent before its reply has come
      sim::sleep_for(1ms);   // and been taken by its watch's process
      std::stable_sort(s.events.begin(), s.events.end());
      std::string out;
      for (const auto& e : s.events) out += (out.empty() ? "" : ", ") + e.text;
      s.events.clear();
      return out.empty() ? "none" : out;
    }
    if (op == "close") {
      arity(1, 1);
      c.close();
      s.closed = true;
      return "ok";
    }
    throw BadInput(fmt::format("{}/0: operation '{}' (supported: create, delete, exists, get, set, children, events, close)", where, op));
  }

  std::string resume(Session& s) {
    while (s.node->is_paused()) sim::sleep_for(1ms);
    for (int tries = 0; tries < kResumeTries; ++tries) {
      try {
        if (!s.closed) s.client->exists("/");
        break;
      } catch (const models::zk::KeeperError&) {
      } catch (const sim::Timeout&) {
      }
      sim::sleep_for(kResumeRetry);
    }
    return s.lost ? "session expired" : "session kept";
  }

  /// The nodes left, by path, with their data (what the real side reads before closing).
  std::string tree() {
    models::Node& node = world_.node("reader");
    models::zk::Client reader(world_.net, node, server_);
    reader.connect();
    json nodes = json::object();
    std::vector<std::string> todo{"/"};
    while (!todo.empty()) {
      const std::string path = todo.back();
      todo.pop_back();
      for (const auto& child : reader.get_children(path)) {
        const std::string full = (path == "/" ? "/" : path + "/") + child;
        nodes[full] = reader.get_data(full);
        todo.push_back(full);
      }
    }
    reader.close();
    return nodes.dump();
  }

  const Script& script_;
  World world_;
  models::Node& server_node_ = world_.node("zk-1");
  models::zk::Server server_{world_.net, server_node_, models::zk::ServerConfig{.tick_time = kTick}};
  models::Node& driver_ = world_.node("script");
  std::map<std::string, Session> sessions_;
  std::map<models::zk::SessionId, std::string> owners_;
  std::deque<models::zk::Watch> watches_;
};

// --- etcd ------------------------------------------------------------------------

class EtcdRun {
 public:
  explicit EtcdRun(const Script& script) : script_(script) {
    server_.start();
    for (const auto& name : script.sessions) clients_.emplace(name, models::etcd::Client(world_.net, world_.node(name), server_));
  }

  json run() {
    std::vector<std::string> outcomes;
    std::string final;
    world_.run(driver_, [&] {
      for (const Step& step : script_.steps) outcomes.push_back(this->step(step));
      models::etcd::Client reader(world_.net, driver_, server_);
      json keys = json::object();
      for (const auto& kv : reader.range("/")) keys[kv.key] = fmt::format("{} {}", kv.value, attributes(kv));
      final = keys.dump();
    });
    return json{{"steps", outcomes}, {"final", final}};
  }

 private:
  std::string attributes(const models::etcd::KeyValue& kv) const {
    std::string lease = "none";
    for (const auto& [name, id] : leases_)
      if (id == kv.lease && kv.lease != 0) lease = name;
    return fmt::format("create={} mod={} version={} lease={}", relative(kv.create_revision, kEtcdBase), relative(kv.mod_revision, kEtcdBase),
                       kv.version, lease);
  }
  std::string kv_text(const models::etcd::KeyValue& kv) const { return fmt::format("{}={} {}", kv.key, json(kv.value).dump(), attributes(kv)); }
  std::string revision(const models::etcd::Response& r) const { return "ok rev " + relative(r.revision, kEtcdBase); }

  std::int64_t lease(const json& w, std::size_t at, const std::string& where) const {
    const auto it = leases_.find(text_at(w, at, where));
    if (it == leases_.end()) throw BadInput(fmt::format("{}/{}: no lease of that name was granted before", where, at));
    return it->second;
  }

  std::string step(const Step& step) {
    if (step.kind == Step::Kind::sleep) {
      sim::sleep_for(step.sleep);
      return "ok";
    }
    try {
      return request(clients_.at(step.session), step.words, step.where + "/etcd");
    } catch (const sim::Timeout&) {
      return "error timeout";
    }
  }

  models::etcd::Operation operation(const json& w, const std::string& where) const {
    using models::etcd::Operation;
    const std::string op = text_at(w, 0, where);
    if (op == "put" && (w.size() == 3 || w.size() == 4))
      return {Operation::Kind::put, text_at(w, 1, where), text_at(w, 2, where), w.size() == 4 ? lease(w, 3, where) : 0};
    if (op == "del" && w.size() == 2) return {.kind = Operation::Kind::del, .key = text_at(w, 1, where)};
    throw BadInput(where + ": expected [\"put\", key, value] or [\"put\", key, value, lease] or [\"del\", key]");
  }

  models::etcd::Compare compare(const json& w, const std::string& where) const {
    using models::etcd::Compare;
    if (!w.is_array() || w.size() != 4) throw BadInput(where + ": expected [target, key, op, value]");
    static const std::map<std::string, Compare::Target> kTargets = {{"create_revision", Compare::Target::create_revision},
                                                                    {"mod_revision", Compare::Target::mod_revision},
                                                                    {"version", Compare::Target::version},
                                                                    {"value", Compare::Target::value}};
    static const std::map<std::string, Compare::Result> kResults = {
        {"=", Compare::Result::equal}, {"<", Compare::Result::less}, {">", Compare::Result::greater}, {"!=", Compare::Result::not_equal}};
    const auto target = kTargets.find(text_at(w, 0, where));
    if (target == kTargets.end()) throw BadInput(where + "/0: expected create_revision, mod_revision, version or value");
    const auto result = kResults.find(text_at(w, 2, where));
    if (result == kResults.end()) throw BadInput(where + "/2: expected =, <, > or !=");
    Compare c{.target = target->second, .result = result->second, .key = text_at(w, 1, where)};
    if (c.target == Compare::Target::value) {
      c.value = text_at(w, 3, where);
    } else if (w[3].is_number_integer()) {
      c.number = w[3].get<std::int64_t>();
    } else if (c.target != Compare::Target::version && w[3].is_string() && w[3].get<std::string>().starts_with('+')) {
      try {
        c.number = kEtcdBase + std::stoll(w[3].get<std::string>().substr(1));
      } catch (const std::exception&) {
        throw BadInput(where + "/3: expected \"+N\", a revision after the script's first");
      }
    } else {
      throw BadInput(where + "/3: expected an integer, or \"+N\" for a revision");
    }
    return c;
  }

  std::string request(models::etcd::Client& c, const json& w, const std::string& where) {
    const std::string op = text_at(w, 0, where);
    const auto arity = [&](std::size_t n) {
      if (w.size() != n) throw BadInput(fmt::format("{}: {} takes {} arguments", where, op, n - 1));
    };
    if (op == "grant") {
      arity(2);
      const std::int64_t ttl = integer_at(w, 1, where);
      if (ttl < 1 || ttl > 3600) throw BadInput(where + "/1: expected a TTL of 1 to 3600 s");
      const std::string name = fmt::format("L{}", leases_.size() + 1);
      leases_[name] = c.grant(std::chrono::seconds(ttl));
      return fmt::format("lease {} ttl {}", name, ttl);
    }
    if (op == "keepalive") return arity(2), c.keep_alive(lease(w, 1, where)) ? "alive" : "gone";
    if (op == "revoke") {
      arity(2);
      const auto r = c.run({.kind = models::etcd::Request::Kind::revoke, .lease = lease(w, 1, where)});
      return r.ok ? revision(r) : "error lease not found";
    }
    if (op == "put") {
      if (w.size() != 3 && w.size() != 4) throw BadInput(where + ": put takes a key, a value and maybe a lease");
      const auto r = c.put(text_at(w, 1, where), text_at(w, 2, where), w.size() == 4 ? lease(w, 3, where) : 0);
      return r.error.empty() ? revision(r) : "error " + r.error;
    }
    if (op == "get") {
      arity(2);
      const auto kv = c.get(text_at(w, 1, where));
      return kv ? kv_text(*kv) : "none";
    }
    if (op == "range") {
      arity(2);
      std::string out;
      for (const auto& kv : c.range(text_at(w, 1, where))) out += (out.empty() ? "" : "; ") + kv_text(kv);
      return out.empty() ? "none" : out;
    }
    if (op == "del") return arity(2), revision(c.del(text_at(w, 1, where)));
    if (op == "txn") {
      arity(4);
      std::vector<models::etcd::Compare> compares;
      std::vector<models::etcd::Operation> branches[2];
      for (std::size_t part = 1; part <= 3; ++part)
        if (!w[part].is_array()) throw BadInput(fmt::format("{}/{}: expected a list", where, part));
      for (std::size_t i = 0; i < w[1].size(); ++i) compares.push_back(compare(w[1][i], fmt::format("{}/1/{}", where, i)));
      for (std::size_t part = 0; part < 2; ++part)
        for (std::size_t i = 0; i < w[part + 2].size(); ++i)
          branches[part].push_back(operation(w[part + 2][i], fmt::format("{}/{}/{}", where, part + 2, i)));
      const auto r = c.txn(std::move(compares), std::move(branches[0]), std::move(branches[1]));
      if (!r.error.empty()) return "error " + r.error;
      return fmt::format("{} rev {}", r.ok ? "succeeded" : "failed", relative(r.revision, kEtcdBase));
    }
    throw BadInput(fmt::format("{}/0: operation '{}' (supported: grant, keepalive, revoke, put, get, range, del, txn)", where, op));
  }

  const Script& script_;
  World world_;
  models::Node& server_node_ = world_.node("etcd-1");
  models::etcd::Server server_{world_.net, server_node_};
  models::Node& driver_ = world_.node("script");
  std::map<std::string, models::etcd::Client> clients_;
  std::map<std::string, std::int64_t> leases_;  // by the script's name for them
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: locksim_coord_script SCRIPT.json\n";
    return 2;
  }
  try {
    const Script script = load(argv[1]);
    const json out = script.service == "zk" ? ZooKeeperRun(script).run() : EtcdRun(script).run();
    std::cout << out.dump() << "\n";
    return 0;
  } catch (const BadInput& e) {
    std::cerr << "locksim_coord_script: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "locksim_coord_script: " << e.what() << "\n";
    return 1;
  }
}
