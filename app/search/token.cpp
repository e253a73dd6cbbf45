#include "app/search/token.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <memory>
#include <optional>
#include <sstream>

#include "app/input.hpp"
#include "app/trial.hpp"
#include "models/db/database.hpp"
#include "models/faults/placement.hpp"

namespace locksim {

namespace {

// Tokens carry --set overrides, which may hold any character: hex-encode each.
std::string hex(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out += fmt::format("{:02x}", c);
  return out;
}
std::optional<std::string> unhex(const std::string& s) {
  if (s.size() % 2 != 0) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < s.size(); i += 2) {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(s.data() + i, s.data() + i + 2, value, 16);
    if (ec != std::errc() || end != s.data() + i + 2) return std::nullopt;
    out += static_cast<char>(value);
  }
  return out;
}

// The check at a token's end: the first 32 bits of FNV-1a over the rest, so a token cut
// short or changed by hand is refused instead of replaying another run.
std::string checksum(const std::string& body) {
  return fmt::format("{:08x}", fnv1a(body) >> 32);
}

}  // namespace

std::string Token::text() const {
  std::string sets_part;
  for (const auto& s : sets) sets_part += (sets_part.empty() ? "" : ",") + hex(s);
  const std::string body =
      fmt::format("locksim:{}:{}:{:016x}:{}:{}:{}:{}", engine, scenario, scenario_hash, strategy, seed, sets_part, schedule);
  return body + ":" + checksum(body);
}

sim::TieBreak pct_schedule(int depth, std::uint64_t steps, std::uint64_t seed) {
  struct State {
    sim::Xoshiro256 rng;
    int depth;
    std::vector<std::uint64_t> change_points;  // the steps after which the running agent drops
    std::map<std::uint64_t, double> priority;  // by agent; initial ones >= depth
    std::uint64_t step = 0;
  };
  auto state = std::make_shared<State>(State{sim::Xoshiro256(seed), depth, {}, {}, 0});
  for (int i = 1; i < depth && steps > 0; ++i) state->change_points.push_back(1 + state->rng.next() % steps);
  return [state](const std::vector<std::uint64_t>& agents) {
    State& st = *state;
    ++st.step;
    std::size_t pick = 0;
    for (std::size_t i = 0; i < agents.size(); ++i) {
      auto [it, fresh] = st.priority.try_emplace(agents[i], 0.0);
      if (fresh) it->second = st.depth + static_cast<double>(st.rng.next() >> 11) * 0x1.0p-53;  // a random rank
      if (it->second > st.priority.at(agents[pick])) pick = i;
    }
    for (std::size_t j = 0; j < st.change_points.size(); ++j)
      if (st.change_points[j] == st.step) st.priority[agents[pick]] = static_cast<double>(st.depth) - 1.0 - static_cast<double>(j);
    return pick;
  };
}

Schedule Schedule::parse(const std::string& text) {
  if (text.empty()) return {};
  if (text == "dfs" || text.starts_with("dfs.")) {
    Deviations d;
    std::stringstream in(text.substr(3));
    std::string part;
    std::getline(in, part, '.');  // the empty piece before the first dot
    while (std::getline(in, part, '.')) {
      const auto eq = part.find('=');
      const auto i = eq == std::string::npos ? std::nullopt : parse_u64(part.substr(0, eq));
      const auto v = eq == std::string::npos ? std::nullopt : parse_u64(part.substr(eq + 1));
      if (!i || !v || *v == 0)
        throw InputError(fmt::format("{}: expected a schedule as dfs.<choice>=<option>... with options >= 1", quote_value(text)));
      d[*i] = *v;
    }
    return dfs(std::move(d));
  }
  std::vector<std::optional<std::uint64_t>> fields;  // d, k, n, seed
  if (text.starts_with("pct.")) {
    std::stringstream in(text.substr(4));
    for (std::string part; std::getline(in, part, '.');) fields.push_back(parse_u64(part));
  }
  if (fields.size() != 4 || !std::all_of(fields.begin(), fields.end(), [](const auto& f) { return f.has_value(); }) ||
      *fields[0] < 1 || *fields[0] > kMaxPctDepth)
    throw InputError(fmt::format("{}: expected a schedule as pct.<d>.<k>.<n>.<seed> with d from 1 to {}, or "
                                 "dfs[.<choice>=<option>...]",
                                 quote_value(text), kMaxPctDepth));
  return pct(static_cast<int>(*fields[0]), *fields[1], *fields[2], *fields[3]);
}

std::string Schedule::text() const {
  switch (kind) {
    case Kind::seed: return "";
    case Kind::pct: return fmt::format("pct.{}.{}.{}.{}", depth, steps, agents, seed);
    case Kind::dfs: {
      std::string out = "dfs";
      for (const auto& [i, v] : deviations) out += fmt::format(".{}={}", i, v);
      return out;
    }
  }
  return "";
}

std::pair<int, int> Schedule::deviating() const {
  if (kind == Kind::pct) return {depth - 1, depth - 1};
  int options = 0;
  for (const auto& [i, v] : deviations) options += static_cast<int>(v);
  return {static_cast<int>(deviations.size()), options};
}

sim::Chooser chooser_of(const Token& t, std::vector<Asked>* asked) {
  Schedule schedule = Schedule::parse(t.schedule);
  if (schedule.kind != Schedule::Kind::dfs) return {};
  struct State {
    Deviations deviations;
    std::uint64_t asked = 0;
  };
  auto state = std::make_shared<State>(State{std::move(schedule.deviations), 0});
  return [state, asked](const std::string& stream, std::uint64_t n) -> std::uint64_t {
    const auto it = state->deviations.find(state->asked++);
    // An option beyond this run's choice (a token shrunk on a smaller scenario): the default.
    const std::uint64_t v = it == state->deviations.end() || it->second >= n ? 0 : it->second;
    if (asked != nullptr) {
      const sim::Engine& engine = *sim::Engine::current();
      std::vector<std::string> labels;  // what each option is, where the stream says
      if (stream == "sim.ties") labels = engine.tied();
      if (stream == models::db::kPurgeStream) labels = {"the woken waiters first", "InnoDB's purge first"};
      if (stream == models::db::kWakeStream) {
        labels = {"the latest granted waiter runs next"};
        for (std::uint64_t i = 1; i < n; ++i) labels.push_back(fmt::format("the queue's waiter #{} runs next", i));
      }
      asked->push_back({stream, v, seconds(engine.now()), n, std::move(labels)});
    }
    return v;
  };
}

sim::TieBreak schedule_of(const Token& t) {
  const Schedule schedule = Schedule::parse(t.schedule);
  if (schedule.kind != Schedule::Kind::pct) return {};
  return pct_schedule(schedule.depth, schedule.steps, schedule.seed);
}

namespace {

// A fault the search placed at `at_s`, as the trial's timeline shows it: a pause or a crash
// begun then; a message lost shows no band.
std::string placed_words(double at_s, const reports::Timeline& t) {
  for (const auto& b : t.bands)
    if (std::abs(b.from_s - at_s) < 1e-9)
      return b.kind == "paused" ? fmt::format("a {:.3f} s pause of {} at t={:.3f} s", b.to_s - b.from_s, b.node, at_s)
                                : fmt::format("a crash of {} at t={:.3f} s (back at t={:.3f} s)", b.node, at_s, b.to_s);
  return fmt::format("a lost message at t={:.3f} s", at_s);
}

}  // namespace

std::string describe_schedule(const std::string& text, const std::vector<Asked>* asked, const reports::Timeline* timeline) {
  const Schedule schedule = Schedule::parse(text);
  switch (schedule.kind) {
    case Schedule::Kind::pct: return fmt::format("pct, depth {}", schedule.depth);
    case Schedule::Kind::dfs: {
      if (schedule.deviations.empty()) return "dfs, every choice its default";
      std::vector<std::string> placed, choices;
      for (const auto& [choice, option] : schedule.deviations) {
        const Asked* a = asked != nullptr && choice < asked->size() ? &(*asked)[choice] : nullptr;
        if (a != nullptr && timeline != nullptr && a->stream == models::kPlacementStream && a->option != 0)
          placed.push_back(placed_words(a->at_s, *timeline));
        else if (a != nullptr && a->stream == models::db::kPurgeStream && option == 1)
          choices.push_back(fmt::format("choice {} (t={:.3f} s): InnoDB's purge runs before the waiters a commit woke", choice, a->at_s));
        else if (a != nullptr && a->stream == models::db::kWakeStream && option != 0)
          choices.push_back(fmt::format("choice {} (t={:.3f} s): of the waiters one release granted, InnoDB runs the queue's #{} "
                                        "next rather than the latest",
                                        choice, a->at_s, option));
        else if (a != nullptr)
          choices.push_back(fmt::format("choice {} (t={:.3f} s) takes option {}", choice, a->at_s, option));
        else
          choices.push_back(fmt::format("choice {} takes option {}", choice, option));
      }
      std::string out = "dfs: ";
      if (!placed.empty()) out += fmt::format("the search placed {}", fmt::join(placed, " and "));
      if (!placed.empty() && !choices.empty()) out += "; ";
      return out + fmt::format("{}", fmt::join(choices, ", "));
    }
    case Schedule::Kind::seed: break;
  }
  return "";
}

Token parse_token(const std::string& text) {
  check_length("the replay token", text);
  const auto fail = [&](const std::string& why) {
    throw InputError(fmt::format("replay token {}: {}; expected a token as `locksim explore` prints it "
                                 "(locksim:<engine>:<scenario>:<hash>:<strategy>:<seed>:<overrides>:<schedule>:<check>)",
                                 quote_value(text), why));
  };
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ':');) parts.push_back(part);
  if (!text.empty() && text.back() == ':') parts.push_back("");
  if (parts.size() != 9 || parts[0] != "locksim") fail(fmt::format("{} fields separated by ':', not 9", parts.size()));
  const std::string body = text.substr(0, text.size() - parts[8].size() - 1);
  if (parts[8] != checksum(body)) fail("its check does not match the rest (cut short or changed)");
  Token t;
  const auto engine = parse_u64(parts[1]);
  const auto seed = parse_u64(parts[5]);
  if (!engine || *engine > 1'000'000) fail("the engine version is not a number");
  if (!seed) fail("the seed is not a number from 0 to 18446744073709551615");
  if (parts[3].size() != 16) fail("the scenario hash is not 16 hex digits");
  const auto [end, ec] = std::from_chars(parts[3].data(), parts[3].data() + parts[3].size(), t.scenario_hash, 16);
  if (ec != std::errc() || end != parts[3].data() + parts[3].size()) fail("the scenario hash is not 16 hex digits");
  t.engine = static_cast<int>(*engine);
  t.scenario = parts[2];
  t.strategy = parts[4];
  t.seed = *seed;
  std::stringstream sets(parts[6]);
  for (std::string one; std::getline(sets, one, ',');) {
    auto set = unhex(one);
    if (!set) fail("an override is not hex");
    t.sets.push_back(std::move(*set));
  }
  t.schedule = parts[7];
  try {
    Schedule::parse(t.schedule);
  } catch (const InputError& e) {
    fail(std::string("its schedule ") + e.what());
  }
  return t;
}

}  // namespace locksim
