#include "app/explore.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <set>
#include <charconv>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cluster.hpp"
#include "app/fault_kind.hpp"
#include "app/metrics.hpp"
#include "app/ordered_work.hpp"
#include "app/trial.hpp"
#include "models/db/database.hpp"
#include "models/faults/placement.hpp"
#include "reports/report.hpp"

namespace locksim {

namespace {

// The stream of the engine's tie choices (sim::Engine's ties_).
constexpr std::string_view kTieStream = "sim.ties";

// The trial's findings, as the property asks: one metric, or any finding.
bool fired(const TrialOutcome& o, const std::string& property, const MetricInfo& finding) {
  if (property != "any" && property != finding.name) return false;
  auto it = o.counts.find(finding.name);
  return it != o.counts.end() && it->second > finding.fires_above;
}

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

const StrategyChoice& strategy_named(const Scenario& s, const std::string& name) {
  for (const auto& c : s.strategies)
    if (c.shown() == name) return c;
  throw InputError(fmt::format("--strategy {}: expected a strategy this scenario runs", quote_value(name)));
}

std::vector<std::string> fired_checkers(const TrialOutcome& o, const std::string& property) {
  std::vector<std::string> out;
  for (const MetricInfo* finding : findings())
    if (fired(o, property, *finding)) out.push_back(fmt::format("{} {:g}", finding->name, o.counts.at(finding->name)));
  return out;
}

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
      asked->push_back({stream, v, seconds(engine.now()), n, std::move(labels)});
    }
    return v;
  };
}

TrialOutcome run_token(const Scenario& s, const StrategyChoice& choice, const Token& t, TraceKept kept) {
  return run_trial(s, choice, t.seed, kept, schedule_of(t), chooser_of(t));
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

namespace {

using Clock = std::chrono::steady_clock;  // the wall budget only

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Runs handed to another rank per thread it runs: a search's runs take tens of microseconds,
// less than an answer takes to come back.
constexpr int kSearchAhead = 64;

// What a search over numbered runs found: how many runs count, and the first that fired.
struct FirstHit {
  std::uint64_t ran = 0;               // every run below the hit, and the hit; or every run claimed
  std::optional<std::uint64_t> hit{};  // the lowest-numbered run that fired
};

// The runs other ranks make of a search under mpirun: run i's request, and what its answer
// says (true: it fired).
struct RemoteRuns {
  cluster::Workers& workers;
  std::function<std::string(std::uint64_t)> request;
  std::function<bool(std::uint64_t, std::string&&)> answered;
};

// Runs `attempt(i)` for i = 0, 1, ... below `limit` on `jobs` threads (the runner's pool,
// OrderedWork), each number once, until `out_of_time()` or a run fires (`attempt` returns true).
// The finding is the lowest-numbered run that fired, and every run below it has run, whatever
// `jobs`: the runs are taken in order, and none is handed out once the lowest has fired. With
// `remote`, the caller's thread hands numbers to the other ranks by the same rule, beside `jobs`
// threads of this process.
FirstHit first_hit(int jobs, std::uint64_t limit, const std::function<bool()>& out_of_time,
                   const std::function<bool(std::uint64_t)>& attempt, const RemoteRuns* remote = nullptr) {
  std::optional<std::uint64_t> hit;
  std::uint64_t ran = 0;
  const int threads = jobs + (remote ? remote->workers.threads() : 0);
  OrderedWork<bool> work(
      static_cast<std::size_t>(limit), 4 * static_cast<std::size_t>(threads) + kSearchAhead,
      [&](std::size_t i, bool fired) {
        if (hit) return;  // a run past the finding, taken before it was known
        ran = i + 1;
        if (fired) hit = i;
      },
      [&] { return hit.has_value() || out_of_time(); });
  std::function<void()> lead;
  if (remote)
    lead = [&] {
      lead_workers<bool>(work, remote->workers, remote->request,
                         [&](std::uint64_t i, std::string&& answer) { return remote->answered(i, std::move(answer)); });
    };
  work.run(jobs, [&](std::size_t i) -> std::optional<bool> { return attempt(i); }, lead);
  return {ran, hit};
}

// Bounded exhaustive search over the tree of enumerable choices, by re-execution, level by
// level: first the default run, then every run with one choice off its default, then two,
// up to `bound`. A run with deviations D spawns the runs that add one deviation past D's
// last one, at each choice its own run asked, with each other option; so every schedule
// within the bound runs exactly once, and when a level spawns none the space is covered.
// A level's runs are independent and run on `jobs` threads; they are numbered in a fixed
// order (their parents' order, then the choice, then the option), so the finding is the one
// with the fewest deviations, and among those the first in that order, whatever `jobs`.
// A dfs run: the deviations it takes, and what it asked and found.
struct DfsNode {
  Deviations deviations;               // choice -> option, each != 0
  std::vector<std::uint32_t> options;  // how many options each choice of its run offered
  std::vector<std::uint8_t> placing;   // by choice: 1 where it places a fault (faults.explore)
  // With the reduction: the (choice, option) reorderings past its deviations that only commute
  // independent steps of its run; the runs they would spawn are equivalent to runs explored.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> equivalent;
  std::uint64_t events = 0;
  std::vector<std::string> fired;
  std::size_t expected_choices = 0;  // how many its parent's run asked (room kept for as many)

  // Its deviations that reorder or pick a delay: what the bound counts.
  int reorderings() const {
    return static_cast<int>(std::count_if(deviations.begin(), deviations.end(), [&](const auto& d) { return placing[d.first] == 0; }));
  }
  int placed() const { return static_cast<int>(deviations.size()) - reorderings(); }
};

// Whether the reduction applies to a strategy: a Lua script's state is shared by every app
// server's steps without a message, which no footprint shows.
bool reducible(const Scenario& s, const StrategyChoice& choice) { return choice.script == nullptr && !s.lua_workload; }

// Whether the run `f` took at tie `tie`, picking its first event, is equivalent to the run that
// picks its event `i` instead and otherwise its defaults: that event e ran later in `f`, and it
// commutes back to the tie. So it is independent of every step between the tie and it (the
// window), and so are the steps it started at that instant; and no later tie of `f` held both
// an event e scheduled and one the window scheduled, whose order (by sequence number) the swap
// would turn round.
// `ties_of[q]`: the ties (after q) whose events include one step q scheduled.
bool commutes_back(const sim::Footprints& f, std::size_t tie, std::size_t i, const std::vector<std::uint32_t>& step_of,
                   const std::vector<std::vector<std::uint32_t>>& ties_of) {
  constexpr std::uint32_t kNone = sim::Footprints::kNone;
  const sim::Footprints::Tie& t = f.ties[tie];
  const std::uint64_t seq = t.ready[i];
  if (seq >= step_of.size() || step_of[seq] == kNone || step_of[seq] < t.at) return false;  // it never ran: a stale wake-up, say
  const std::uint32_t q = step_of[seq];
  for (std::uint32_t w = t.at; w < q; ++w)
    if (f.dependent(w, q)) return false;
  const auto creator = [&](std::uint32_t step) { return f.steps[step].seq < f.creator.size() ? f.creator[f.steps[step].seq] : kNone; };
  for (std::uint32_t r = q + 1; r < f.steps.size() && f.steps[r].at == f.steps[q].at; ++r) {
    std::uint32_t c = creator(r);
    while (c != kNone && c > q) c = creator(c);
    if (c != q) continue;  // not started by e
    for (std::uint32_t w = t.at; w < q; ++w)
      if (f.dependent(w, r)) return false;
  }
  for (const std::uint32_t later : ties_of[q])
    for (const std::uint64_t x : f.ties[later].ready) {
      const std::uint32_t c = x < f.creator.size() ? f.creator[x] : kNone;
      if (c != kNone && c >= t.at && c < q) return false;
    }
  return true;
}

// The reorderings of `node`'s run, at its tie choices from `from` on, that commute_back().
void find_equivalent(const sim::Footprints& f, const std::vector<std::uint32_t>& tie_choices, std::size_t from, DfsNode& node) {
  if (tie_choices.size() != f.ties.size())
    throw std::logic_error(fmt::format("dfs: {} ties chosen, {} recorded: the footprints do not match the run", tie_choices.size(),
                                       f.ties.size()));
  std::vector<std::uint32_t> step_of;  // by sequence number
  for (std::uint32_t q = 0; q < f.steps.size(); ++q) {
    if (step_of.size() <= f.steps[q].seq) step_of.resize(f.steps[q].seq + 1, sim::Footprints::kNone);
    step_of[f.steps[q].seq] = q;
  }
  std::vector<std::vector<std::uint32_t>> ties_of(f.steps.size());
  for (std::uint32_t k = 0; k < f.ties.size(); ++k)
    for (const std::uint64_t x : f.ties[k].ready)
      if (const std::uint32_t c = x < f.creator.size() ? f.creator[x] : sim::Footprints::kNone;
          c != sim::Footprints::kNone && f.ties[k].at > c && (ties_of[c].empty() || ties_of[c].back() != k))
        ties_of[c].push_back(k);
  for (std::size_t k = 0; k < f.ties.size(); ++k) {
    if (tie_choices[k] < from) continue;
    for (std::size_t i = 1; i < f.ties[k].ready.size(); ++i)
      if (commutes_back(f, k, i, step_of, ties_of)) node.equivalent.emplace_back(tie_choices[k], static_cast<std::uint32_t>(i));
  }
}

// Runs `node` under its deviations: the options each choice offered, its events, its findings.
void run_dfs_node(const ExploreOptions& o, const Scenario& s, const StrategyChoice& choice, DfsNode& node) {
  std::size_t asked = 0;
  std::vector<std::uint32_t> tie_choices;  // the choice index of each tie, in order
  // A run asks about as many choices as its parent's did: room for them at once.
  tie_choices.reserve(node.expected_choices);
  node.options.reserve(node.expected_choices);
  node.placing.reserve(node.expected_choices);
  auto next_deviation = node.deviations.begin();  // choices come in order, and so do deviations
  const sim::Chooser chooser = [&](const std::string& stream, std::uint64_t n) -> std::uint64_t {
    const std::size_t at = asked++;
    std::uint64_t v = 0;
    if (next_deviation != node.deviations.end() && next_deviation->first == at) v = (next_deviation++)->second;
    if (v >= n)
      throw std::logic_error(fmt::format("dfs: choice #{} ({}) offers {} options where an earlier run had more: the "
                                         "run is not a function of its choices",
                                         at, stream, n));
    node.options.push_back(static_cast<std::uint32_t>(std::min<std::uint64_t>(n, std::numeric_limits<std::uint32_t>::max())));
    const std::string_view name = stream;
    node.placing.push_back(name == models::kPlacementStream ? 1 : 0);
    if (name == kTieStream) tie_choices.push_back(static_cast<std::uint32_t>(at));
    return v;
  };
  const bool reduce = o.reduction && reducible(s, choice);
  sim::Footprints footprints;
  const TrialOutcome outcome = run_trial(s, choice, s.seed, TraceKept::none, {}, chooser, reduce ? &footprints : nullptr);
  if (reduce)
    find_equivalent(footprints, tie_choices, node.deviations.empty() ? 0 : node.deviations.rbegin()->first + 1, node);
  node.events = outcome.events;
  node.fired = fired_checkers(outcome, o.property);
  if (o.each_run) o.each_run(outcome.counts);
}

// A dfs run's answer from another rank: what run_dfs_node() found.
std::string dfs_answer(const DfsNode& node) {
  return nlohmann::json{{"options", node.options},
                        {"placing", node.placing},
                        {"equivalent", node.equivalent},
                        {"events", node.events},
                        {"fired", node.fired}}
      .dump();
}
void read_dfs_answer(const std::string& answer, DfsNode& node) {
  const nlohmann::json j = nlohmann::json::parse(answer);
  j.at("options").get_to(node.options);
  j.at("placing").get_to(node.placing);
  j.at("equivalent").get_to(node.equivalent);
  j.at("events").get_to(node.events);
  j.at("fired").get_to(node.fired);
}

// What other ranks must agree on to share a search: the scenario as read, the strategy, and
// the search's settings.
std::string search_fingerprint(const ExploreOptions& o, const Scenario& s, const StrategyChoice& choice, std::uint64_t steps,
                               std::size_t agents) {
  return fmt::format("explore {} {:016x} {} {} {} {} {} {} {} {} {}", s.name, s.hash, choice.shown(), o.mode, o.property, o.depth,
                     o.bound, steps, agents, o.reduction, o.count_all);
}

// Bounded exhaustive search over the tree of enumerable choices, by re-execution, level by
// level: first the default run, then every run with one choice off its default, then two.
// A run with deviations D spawns the runs that add one deviation past D's last one, at each
// choice its own run asked, with each other option: a reordering (or a delay from a set) while
// D has fewer than `bound` of them, a fault placement (faults.explore) while the scenario's
// budget has one left, which the run's own choices already say. So every schedule within the
// bound runs exactly once, and when a level spawns none the space is covered.
// A level's runs are independent and run on `jobs` threads (and other ranks); they are
// numbered in a fixed order (their parents' order, then the choice, then the option), so the
// finding is the one with the fewest deviations, and among those the first in that order,
// whatever `jobs` and ranks. With `count_all` the search goes on past the first finding and
// counts every run that fires.
Finding explore_dfs(const ExploreOptions& o, const Scenario& s, const StrategyChoice& choice, Clock::time_point started) {
  using Node = DfsNode;
  std::optional<cluster::Workers> workers;
  if (cluster::distributed()) workers.emplace(search_fingerprint(o, s, choice, 0, 0), kSearchAhead);
  Finding f;
  for (const auto& fault : s.faults) f.placed += fault.faults->placed_text();
  f.reduced = o.reduction && reducible(s, choice);
  std::vector<Node> level(1);
  std::optional<Node> found;
  for (;;) {
    const std::uint64_t limit = std::min<std::uint64_t>(level.size(), static_cast<std::uint64_t>(o.budget) - f.runs);
    // Counting, a run that fires is no reason to stop: the search takes it as a miss.
    const auto stops = [&](const Node& n) { return !n.fired.empty() && !o.count_all; };
    std::optional<RemoteRuns> remote;
    if (workers)
      remote.emplace(RemoteRuns{*workers, [&](std::uint64_t i) { return Schedule::dfs(level[i].deviations).text(); },
                                [&](std::uint64_t i, std::string&& answer) {
                                  read_dfs_answer(answer, level[i]);
                                  return stops(level[i]);
                                }});
    const FirstHit hit = first_hit(
        o.jobs, limit, [&] { return seconds_since(started) > o.time_s; },
        [&](std::uint64_t i) {
          run_dfs_node(o, s, choice, level[i]);
          return stops(level[i]);
        },
        remote ? &*remote : nullptr);
    for (std::uint64_t i = 0; i < hit.ran; ++i) {
      const Node& n = level[i];
      f.events += n.events;
      f.choice_points = std::max<std::uint64_t>(f.choice_points, n.options.size());
      f.placement_points =
          std::max<std::uint64_t>(f.placement_points, static_cast<std::uint64_t>(std::count(n.placing.begin(), n.placing.end(), 1)));
      if (n.fired.empty()) continue;
      ++f.firing_runs;
      if (!found) found = n;
    }
    f.runs += hit.ran;
    if (f.runs == 1 && hit.ran == 1) {  // the default run: how wide the bound is
      const Node& first = level.front();
      std::vector<std::uint32_t> reorder, place;
      for (std::size_t at = 0; at < first.options.size(); ++at) (first.placing[at] ? place : reorder).push_back(first.options[at]);
      int placeable = 0;
      for (const auto& fault : s.faults) placeable += fault.faults->placed_text().empty() ? 0 : fault.faults->count();
      f.estimated_schedules = schedules_within(reorder, o.bound) * schedules_within(place, placeable);
    }
    if (hit.hit || (found && !o.count_all)) break;
    if (hit.ran < level.size()) break;  // out of budget or time: not covered
    std::vector<Node> below;
    for (const Node& node : level) {
      const std::size_t from = node.deviations.empty() ? 0 : node.deviations.rbegin()->first + 1;
      const bool may_reorder = node.reorderings() < o.bound;
      std::size_t skip = 0;  // node.equivalent, in (choice, option) order
      for (std::size_t at = from; at < node.options.size(); ++at) {
        if (node.placing[at] == 0 && !may_reorder) continue;
        for (std::uint32_t option = 1; option < node.options[at]; ++option) {
          while (skip < node.equivalent.size() && node.equivalent[skip] < std::pair<std::uint32_t, std::uint32_t>(at, option)) ++skip;
          if (skip < node.equivalent.size() && node.equivalent[skip] == std::pair<std::uint32_t, std::uint32_t>(at, option)) {
            ++f.equivalent_skipped;
            continue;
          }
          below.emplace_back();
          below.back().deviations = node.deviations;
          below.back().deviations[at] = option;
          below.back().expected_choices = node.options.size();
        }
      }
    }
    if (below.empty()) {
      f.exhausted = true;
      break;
    }
    level = std::move(below);
  }
  if (found) {
    f.found = true;
    f.fired = found->fired;
    f.token = Token{LOCKSIM_ENGINE_VERSION, o.scenario, s.hash, o.sets, choice.shown(), s.seed, Schedule::dfs(found->deviations).text()};
  }
  f.wall_s = seconds_since(started);
  return f;
}

// Swarm testing (Groce et al., ISSTA 2012; TigerBeetle's VOPR): each run's seed also picks
// which of the scenario's faults are on, each listed fault and each other kind with
// probability 1/2, so that faults which mask one another are also tried apart. A run's faults
// are an override of "faults" in its token: it replays and shrinks as any other run.
class Swarm {
 public:
  struct Run {
    Scenario scenario;              // loaded with `set`
    std::string set;                // "faults={...}"; empty: the scenario's own faults
    std::vector<std::string> on;    // the faults on, "pauses.0", "gc_pauses"
  };
  static constexpr std::size_t kMaxFeatures = 16;  // past these, faults are always on

  Swarm(const ExploreOptions& o, const Scenario& s) : o_(o) {
    const json faults = effective_config(s).value("faults", json::object());
    for (const auto& [kind, value] : faults.items()) {
      if (value.is_array())
        for (std::size_t i = 0; i < value.size(); ++i) features_.push_back({kind, i});
      else
        features_.push_back({kind, std::nullopt});
    }
    faults_ = faults;
  }

  /// The run of seed `seed`: its faults, and the scenario loaded with them (once per set of faults).
  std::shared_ptr<const Run> run(std::uint64_t seed) {
    std::uint64_t mask = ~std::uint64_t{0};
    if (!features_.empty()) {
      std::uint64_t x = seed ^ 0x5357'4152'4d00'0000ull;  // splitmix64 of the seed: its own bits, not the trial's draws
      x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
      x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
      mask = (x ^ (x >> 31)) | ~((std::uint64_t{1} << std::min(features_.size(), kMaxFeatures)) - 1);
    }
    const std::lock_guard lock(mutex_);
    if (auto it = runs_.find(mask); it != runs_.end()) return it->second;
    auto r = std::make_shared<Run>();
    if (!features_.empty()) {
      json faults = json::object();
      for (std::size_t f = 0; f < features_.size(); ++f) {
        const auto& [kind, item] = features_[f];
        const bool on = ((mask >> std::min(f, std::size_t{63})) & 1) != 0;
        if (item) {
          if (!faults.contains(kind)) faults[kind] = json::array();
          if (on) faults[kind].push_back(faults_.at(kind).at(*item));
        } else if (on) {
          faults[kind] = faults_.at(kind);
        }
        if (on) r->on.push_back(item ? fmt::format("{}.{}", kind, *item) : kind);
      }
      r->set = "faults=" + faults.dump();
    }
    std::vector<std::string> sets = o_.sets;
    if (!r->set.empty()) sets.push_back(r->set);
    r->scenario = load_scenario(scenario_path(o_.scenario), sets, {o_.strategy});
    return runs_.emplace(mask, std::move(r)).first->second;
  }

 private:
  const ExploreOptions& o_;
  json faults_;
  std::vector<std::pair<std::string, std::optional<std::size_t>>> features_;  // kind, and the item of a list
  std::mutex mutex_;
  std::map<std::uint64_t, std::shared_ptr<const Run>> runs_;  // by mask
};

}  // namespace

Finding explore(const ExploreOptions& o) {
  if (o.mode != "random" && o.mode != "pct" && o.mode != "dfs" && o.mode != "swarm")
    throw InputError(fmt::format("--mode {}: expected random, pct, dfs or swarm", quote_value(o.mode)));
  if (o.depth < 1 || o.depth > kMaxPctDepth) throw InputError(fmt::format("--depth {}: expected 1 to {}", o.depth, kMaxPctDepth));
  if (o.bound < 0 || o.bound > 10) throw InputError(fmt::format("--bound {}: expected 0 to 10", o.bound));
  if (o.jobs < 1 || o.jobs > 1024) throw InputError(fmt::format("--jobs {}: expected 1 to 1024", o.jobs));
  const Scenario s = load_scenario(scenario_path(o.scenario), o.sets, {o.strategy});
  // After the scenario: a Lua workload's findings are properties too.
  if (const auto& properties = findings();
      o.property != "any" && std::none_of(properties.begin(), properties.end(), [&](const MetricInfo* m) { return m->name == o.property; })) {
    std::string names;
    for (const MetricInfo* m : properties) names += (names.empty() ? "" : ", ") + m->name;
    throw InputError(fmt::format("--property {}: expected any or a finding: {} (docs/metrics.md)", quote_value(o.property), names));
  }
  const StrategyChoice& choice = strategy_named(s, o.strategy);
  const auto started = Clock::now();
  if (o.mode == "dfs" && !cluster::leader()) {  // under mpirun: the runs the leader hands out
    cluster::serve(search_fingerprint(o, s, choice, 0, 0), o.jobs, [&](std::uint64_t, const std::string& request) {
      DfsNode node;
      node.deviations = Schedule::parse(request).deviations;
      run_dfs_node(o, s, choice, node);
      return dfs_answer(node);
    });
    return {};
  }
  if (o.mode == "dfs") {
    Finding f = explore_dfs(o, s, choice, started);
    f.scenario = s.name;
    return f;
  }
  Finding f;
  f.scenario = s.name;
  // PCT needs k (tie decisions in a run) and n (agents): counted in one run first.
  std::uint64_t steps = 0;
  std::set<std::uint64_t> agents;
  if (o.mode == "pct") {
    run_trial(s, choice, s.seed, TraceKept::none, [&](const std::vector<std::uint64_t>& ready) {
      ++steps;
      agents.insert(ready.begin(), ready.end());
      return std::size_t{0};
    });
    const double n = static_cast<double>(std::max<std::size_t>(1, agents.size()));
    f.pct_bound = 1.0 / (n * std::pow(static_cast<double>(std::max<std::uint64_t>(1, steps)), o.depth - 1));
  }
  // Run i takes seed s.seed + i (and, for pct, its own schedule): the finding is the first
  // seed that fires, whatever --jobs.
  // Swarm: the seed's faults too; each run's token carries them as an override.
  std::optional<Swarm> swarm;
  if (o.mode == "swarm") swarm.emplace(o, s);
  const auto token_of = [&](std::uint64_t i) {
    const std::uint64_t seed = s.seed + i;
    Token token{LOCKSIM_ENGINE_VERSION, o.scenario, s.hash, o.sets, choice.shown(), seed, ""};
    if (o.mode == "pct") token.schedule = Schedule::pct(o.depth, steps, agents.size(), seed * 0x9e3779b97f4a7c15ull).text();
    if (swarm)
      if (const auto run = swarm->run(seed); !run->set.empty()) {
        token.sets.push_back(run->set);
        token.scenario_hash = run->scenario.hash;
      }
    return token;
  };
  const auto fired_in = [&](std::uint64_t i) {
    if (swarm) {
      const auto run = swarm->run(s.seed + i);
      return fired_checkers(run_token(run->scenario, strategy_named(run->scenario, o.strategy), token_of(i), TraceKept::none), o.property);
    }
    return fired_checkers(run_token(s, choice, token_of(i), TraceKept::none), o.property);  // the checkers only
  };
  const std::string fingerprint = search_fingerprint(o, s, choice, steps, agents.size());
  if (!cluster::leader()) {  // under mpirun: the runs the leader hands out
    cluster::serve(fingerprint, o.jobs, [&](std::uint64_t i, const std::string&) { return nlohmann::json(fired_in(i)).dump(); });
    return {};
  }
  std::mutex fired_mutex;
  std::map<std::uint64_t, std::vector<std::string>> fired;  // by run, the runs that fired
  const auto keep = [&](std::uint64_t i, std::vector<std::string>&& which) {
    if (which.empty()) return false;
    const std::lock_guard lock(fired_mutex);
    fired[i] = std::move(which);
    return true;
  };
  std::optional<cluster::Workers> workers;
  std::optional<RemoteRuns> remote;
  if (cluster::distributed()) {
    workers.emplace(fingerprint, kSearchAhead);
    remote.emplace(RemoteRuns{*workers, [](std::uint64_t) { return std::string(); }, [&](std::uint64_t i, std::string&& answer) {
                                return keep(i, nlohmann::json::parse(answer).get<std::vector<std::string>>());
                              }});
  }
  const FirstHit hit = first_hit(
      o.jobs, static_cast<std::uint64_t>(o.budget), [&] { return seconds_since(started) > o.time_s; },
      [&](std::uint64_t i) { return keep(i, fired_in(i)); }, remote ? &*remote : nullptr);
  f.runs = hit.ran;
  if (hit.hit) {
    f.found = true;
    f.token = token_of(*hit.hit);
    f.fired = fired.at(*hit.hit);
    if (swarm) f.faults_on = swarm->run(f.token.seed)->on;
  }
  f.wall_s = seconds_since(started);
  return f;
}

std::vector<std::string> swarm_faults(const ExploreOptions& o, std::uint64_t seed) {
  const Scenario s = load_scenario(scenario_path(o.scenario), o.sets, {o.strategy});
  Swarm swarm(o, s);
  return swarm.run(seed)->on;
}

Replay replay(const Token& t) {
  if (t.engine != LOCKSIM_ENGINE_VERSION)
    throw InputError(fmt::format("the token was made by engine version {}, this is version {}: its run cannot be "
                                 "reproduced here",
                                 t.engine, LOCKSIM_ENGINE_VERSION));
  // The token names the scenario, its overrides and the strategy: a mistake there is the token's.
  const auto of_token = [](const InputError& e) { return InputError(std::string("replay token: ") + e.what()); };
  Scenario s;
  try {
    s = load_scenario(scenario_path(t.scenario), t.sets, {t.strategy});
    strategy_named(s, t.strategy);
  } catch (const InputError& e) {
    throw of_token(e);
  }
  if (s.hash != t.scenario_hash)
    throw InputError(fmt::format("{}: the scenario{} has changed since the token was made (hash {:016x}, the token says "
                                 "{:016x}): its run cannot be reproduced",
                                 shown(s.file),
                                 std::any_of(s.strategies.begin(), s.strategies.end(), [](const auto& c) { return c.script != nullptr; })
                                     ? " or a script it runs"
                                     : "",
                                 s.hash, t.scenario_hash));
  Replay r{s, strategy_named(s, t.strategy), {}, {}, {}};
  r.outcome = run_trial(s, r.strategy, t.seed, TraceKept::timeline, schedule_of(t), chooser_of(t, &r.asked));
  r.outcome.timeline.schedule = describe_schedule(t.schedule, &r.asked, &r.outcome.timeline);
  r.fired = fired_checkers(r.outcome, "any");
  return r;
}

double schedules_within(const std::vector<std::uint32_t>& options, int most) {
  // e[k]: the runs with exactly k deviations among the choices seen so far.
  std::vector<double> e(static_cast<std::size_t>(std::max(most, 0)) + 1, 0.0);
  e[0] = 1;
  for (const std::uint32_t n : options)
    for (std::size_t k = e.size() - 1; k >= 1; --k) e[k] += e[k - 1] * (n > 0 ? n - 1.0 : 0.0);
  double out = 0;
  for (const double x : e) out += x;
  return out;
}

}  // namespace locksim
