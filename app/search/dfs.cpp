// The dfs search: bounded exhaustive search over the tree of a run's enumerable choices
// (app/search/explore.hpp), with the reduction that skips reorderings of independent steps. A
// run is made by re-execution from time zero, or, where the trial can be restored in place
// (sim/restorable.hpp), from its parent's run saved at the choice where it deviates.

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/fault_kind.hpp"
#include "app/search/runs.hpp"
#include "app/trial.hpp"
#include "models/faults/placement.hpp"
#include "sim/footprints.hpp"
#include "sim/restorable.hpp"

namespace locksim::search {

namespace {

// The stream of the engine's tie choices (sim::Engine's ties_).
constexpr std::string_view kTieStream = "sim.ties";

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
  std::size_t parent = 0;            // its parent's place in the level above
  std::uint64_t trace_hash = 0;      // with ExploreOptions::check_branches only
  std::uint64_t trace_class = 0;     // with ExploreOptions::count_classes only

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

// Where a run stops for the search to branch it (run_dfs_group): at each choice of `points`
// (in order) it pauses, and goes on with the option the search hands back: 0, as itself;
// another, as the child that deviates there, which pauses no more and ends where its outcome
// is made, handed out into `ran`.
struct BranchPoints {
  const std::vector<std::uint32_t>& points;
  DfsNode& ran;                 // outside the arena
  std::uint32_t paused_at = 0;  // where it paused last

  void hand_out(const DfsNode& node) {
    const sim::OutsideArena outside;
    ran = node;
  }
};

// Runs `node` under its deviations: the options each choice offered, its events, its findings.
// With `branch`, the run pauses at its branch points, and ends as the run itself or as a child.
void run_dfs_node(const ExploreOptions& o, const Scenario& s, const StrategyChoice& choice, DfsNode& node,
                  BranchPoints* branch = nullptr) {
  std::size_t asked = 0;
  std::size_t next_point = 0;
  bool child = false;
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
    if (branch != nullptr && !child && next_point < branch->points.size() && branch->points[next_point] == at) {
      ++next_point;
      branch->paused_at = static_cast<std::uint32_t>(at);
      if (const std::uint64_t option = sim::Restorable::pause(); option != 0) {
        child = true;
        v = option;
        next_deviation = node.deviations.emplace_hint(next_deviation, at, static_cast<std::uint32_t>(option));
        ++next_deviation;
      }
    }
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
  const bool classes = o.count_classes && reducible(s, choice);
  sim::Footprints footprints;
  const auto take = [&](const TrialOutcome& outcome) {
    if (reduce)
      find_equivalent(footprints, tie_choices, node.deviations.empty() ? 0 : node.deviations.rbegin()->first + 1, node);
    if (classes) node.trace_class = footprints.trace_class();
    node.events = outcome.events;
    node.fired = fired_checkers(outcome, o.property);
    node.trace_hash = outcome.trace_hash;
    if (o.each_run && (branch == nullptr || child)) {
      const sim::OutsideArena outside;  // what the caller keeps of it
      o.each_run(outcome.counts);
    }
  };
  // A child ends where its workload has made its outcome: the world it leaves is the arena's,
  // which the next restore or start overwrites, so it is not torn down.
  const OutcomeTaker ends_child = [&](const TrialOutcome& outcome) {
    if (branch == nullptr || !child) return;
    take(outcome);
    branch->hand_out(node);
    sim::Restorable::finish();
  };
  const TakeOutcome taking(branch != nullptr ? &ends_child : nullptr);
  take(run_trial(s, choice, s.seed, o.check_branches ? TraceKept::hash : TraceKept::none, {}, chooser,
                 reduce || classes ? &footprints : nullptr));
}

// Whether run `n` ends the search (it fired), on whichever rank it ran. Counting, a run that
// fires is no reason to stop: the search takes it as a miss.
bool stops_search(const ExploreOptions& o, const DfsNode& n) { return !n.fired.empty() && !o.count_all; }

// What a run found, the same whether it ran from zero or was branched from its parent.
bool same_run(const DfsNode& a, const DfsNode& b) {
  return a.deviations == b.deviations && a.options == b.options && a.placing == b.placing && a.equivalent == b.equivalent &&
         a.events == b.events && a.fired == b.fired && a.trace_hash == b.trace_hash && a.trace_class == b.trace_class;
}

// A thread's trial that can be restored in place, and the point it saves, whose memory one
// group after another reuses (a fresh one would be zeroed and faulted in for each).
struct ThreadTrial {
  std::unique_ptr<sim::Arena> arena;
  std::unique_ptr<sim::Restorable> trial;
  sim::Restorable::Point saved;
};

// This thread's; nullptr where no arena is left to make one.
ThreadTrial* thread_trial() {
  thread_local ThreadTrial t;
  thread_local bool tried = false;
  if (!std::exchange(tried, true)) try {
      t.arena = std::make_unique<sim::Arena>();
      t.trial = std::make_unique<sim::Restorable>(*t.arena);
    } catch (const std::bad_alloc&) {
    }
  return t.trial ? &t : nullptr;
}

// run_dfs_group() with a restorable trial; `done` counts the children made.
std::size_t branch_children(const ExploreOptions& o, const Scenario& s, const StrategyChoice& choice, const DfsNode& parent,
                            std::span<DfsNode> children, const std::function<bool(const DfsNode&)>& stops, Finding::Branching& cost,
                            ThreadTrial& thread, std::size_t& done) {
  sim::Restorable& trial = *thread.trial;
  sim::Restorable::Point& saved = thread.saved;
  std::vector<std::uint32_t> points;
  std::vector<std::uint32_t> option_of(children.size());
  for (std::size_t i = 0; i < children.size(); ++i) {
    const auto& [at, option] = *children[i].deviations.rbegin();
    option_of[i] = option;
    if (points.empty() || points.back() != at) points.push_back(at);
  }
  DfsNode ran;  // what the body hands out
  BranchPoints branch{points, ran};
  const auto body = [&] {
    DfsNode node;
    node.deviations = parent.deviations;
    node.expected_choices = parent.options.size();
    run_dfs_node(o, s, choice, node, &branch);
    branch.hand_out(node);
  };
  // The trial's runs point the thread's TakeOutcome into the arena, and a child that ends
  // there never restores it: it is put back as it was when this returns.
  const TakeOutcome none(nullptr);
  const auto timed = [&](auto&& step) {
    const auto start = Clock::now();
    step();
    cost.save_restore_s += seconds_since(start);
  };
  std::size_t next = 0;
  bool paused = trial.start(body);
  for (const std::uint32_t at : points) {
    if (!paused || branch.paused_at != at)
      throw std::logic_error(fmt::format("dfs: the run with {} did not come to choice #{} again: the run is not a function of its choices",
                                         Schedule::dfs(parent.deviations).text(), at));
    // Saved for a second child, or for the parent's run to go on; at the last choice with one
    // child, the child goes on from where the run stands.
    const bool last = at == points.back();
    if (!last || (next + 1 < children.size() && children[next + 1].deviations.rbegin()->first == at)) {
      timed([&] { trial.save(saved); });
      ++cost.saves;
      cost.saved_bytes += saved.memory.copied();
      cost.arena_bytes = std::max<std::uint64_t>(cost.arena_bytes, saved.memory.size());
    }
    for (bool first = true; next < children.size() && children[next].deviations.rbegin()->first == at; first = false) {
      DfsNode& c = children[next++];
      if (!first) {
        timed([&] { trial.restore(saved); });
        ++cost.restores;
      }
      if (trial.resume(option_of[next - 1]))
        throw std::logic_error("dfs: a branched run paused again");
      if (ran.deviations != c.deviations)
        throw std::logic_error(fmt::format("dfs: the run branched for {} took {}", Schedule::dfs(c.deviations).text(),
                                           Schedule::dfs(ran.deviations).text()));
      const std::size_t expected = c.expected_choices, parent_at = c.parent;
      c = std::move(ran);
      c.expected_choices = expected;
      c.parent = parent_at;
      if (o.check_branches) {
        DfsNode fresh;
        fresh.deviations = c.deviations;
        fresh.expected_choices = expected;
        ExploreOptions uncounted = o;  // the run is counted once
        uncounted.each_run = nullptr;
        run_dfs_node(uncounted, s, choice, fresh);
        if (!same_run(c, fresh))
          throw std::logic_error(fmt::format("dfs: the run with {} branched from its parent differs from the same run from time zero",
                                             Schedule::dfs(c.deviations).text()));
      }
      done = next;
      if (stops(c)) return next;
    }
    if (last) break;  // the rest of the parent's run is known
    timed([&] { trial.restore(saved); });
    ++cost.restores;
    paused = trial.resume(0);
  }
  return next;
}

// The children of `parent` (`children`, in the level's order: by the choice where each
// deviates, then the option), each made from `parent`'s run saved at that choice instead of
// from time zero: the run goes once more up to each choice where a child deviates, is saved
// there, and each child goes on from the saved point. Returns how many ran: all of them, or
// up to the first that `stops`. Where the thread has no arena, or a trial outgrows it, from
// time zero.
std::size_t run_dfs_group(const ExploreOptions& o, const Scenario& s, const StrategyChoice& choice, const DfsNode& parent,
                          std::span<DfsNode> children, const std::function<bool(const DfsNode&)>& stops, Finding::Branching& cost) {
  // Each from zero, from the `from`th on.
  const auto from_zero = [&](std::size_t from) {
    for (std::size_t i = from; i < children.size(); ++i) {
      run_dfs_node(o, s, choice, children[i]);
      if (stops(children[i])) return i + 1;
    }
    return children.size();
  };
  ThreadTrial* thread = thread_trial();
  if (thread == nullptr) return from_zero(0);
  std::size_t done = 0;  // children made
  try {
    return branch_children(o, s, choice, parent, children, stops, cost, *thread, done);
  } catch (const std::bad_alloc&) {
    return from_zero(done);  // a trial larger than the arena: the rest from zero
  }
}

// A dfs run's answer from another rank: what run_dfs_node() found.
nlohmann::json dfs_answer(const DfsNode& node) {
  return nlohmann::json{{"options", node.options},
                        {"placing", node.placing},
                        {"equivalent", node.equivalent},
                        {"events", node.events},
                        {"fired", node.fired},
                        {"class", node.trace_class}};
}
void read_dfs_answer(const nlohmann::json& j, DfsNode& node) {
  j.at("options").get_to(node.options);
  j.at("placing").get_to(node.placing);
  j.at("equivalent").get_to(node.equivalent);
  j.at("events").get_to(node.events);
  j.at("fired").get_to(node.fired);
  j.at("class").get_to(node.trace_class);
}

// A group of runs handed to another rank (run_dfs_group there), as JSON: the parent's schedule
// and each child's (a single run's request is its schedule alone). Its answer: the children's
// answers up to the first that stops, and what branching them cost.
std::string group_request(const DfsNode& parent, std::span<const DfsNode> children) {
  nlohmann::json group = {{"parent", Schedule::dfs(parent.deviations).text()}, {"children", nlohmann::json::array()}};
  for (const DfsNode& c : children) group["children"].push_back(Schedule::dfs(c.deviations).text());
  return group.dump();
}

// Another rank's answer to a group: its runs read into `children`; how many ran.
std::size_t read_group_answer(const std::string& answer, std::span<DfsNode> children, Finding::Branching& cost) {
  const nlohmann::json j = nlohmann::json::parse(answer);
  const nlohmann::json& runs = j.at("runs");
  if (runs.size() > children.size()) throw std::runtime_error("dfs: a rank answered more runs than its group holds");
  for (std::size_t i = 0; i < runs.size(); ++i) read_dfs_answer(runs[i], children[i]);
  const nlohmann::json& c = j.at("cost");
  c.at("saves").get_to(cost.saves);
  c.at("restores").get_to(cost.restores);
  c.at("saved_bytes").get_to(cost.saved_bytes);
  c.at("arena_bytes").get_to(cost.arena_bytes);
  c.at("save_restore_s").get_to(cost.save_restore_s);
  return runs.size();
}

// The level below `level`: each run spawns the runs that add one deviation past its last one,
// at each choice its run asked, with each other option, skipping the reorderings the reduction
// found equivalent (counted in `f`).
std::vector<DfsNode> level_below(const std::vector<DfsNode>& level, const ExploreOptions& o, Finding& f) {
  std::vector<DfsNode> below;
  for (std::size_t parent = 0; parent < level.size(); ++parent) {
    const DfsNode& node = level[parent];
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
        below.back().parent = parent;
      }
    }
  }
  return below;
}

// The level's first `ran` runs counted in `f`; the first that fired kept in `found`.
void count_level(const std::vector<DfsNode>& level, std::uint64_t ran, Finding& f, std::optional<DfsNode>& found) {
  for (std::uint64_t i = 0; i < ran; ++i) {
    const DfsNode& n = level[i];
    if (f.classes_counted) f.classes.push_back(n.trace_class);
    f.events += n.events;
    f.choice_points = std::max<std::uint64_t>(f.choice_points, n.options.size());
    f.placement_points =
        std::max<std::uint64_t>(f.placement_points, static_cast<std::uint64_t>(std::count(n.placing.begin(), n.placing.end(), 1)));
    if (n.fired.empty()) continue;
    ++f.firing_runs;
    if (!found) found = n;
  }
  std::sort(f.classes.begin(), f.classes.end());  // each class once, whatever the order runs came in
  f.classes.erase(std::unique(f.classes.begin(), f.classes.end()), f.classes.end());
}

// How wide the bound is, from the default run's choices.
double estimated_schedules(const DfsNode& first, const ExploreOptions& o, const Scenario& s) {
  std::vector<std::uint32_t> reorder, place;
  for (std::size_t at = 0; at < first.options.size(); ++at) (first.placing[at] ? place : reorder).push_back(first.options[at]);
  int placeable = 0;
  for (const auto& fault : s.faults) placeable += fault.faults->placed_text().empty() ? 0 : fault.faults->count();
  return schedules_within(reorder, o.bound) * schedules_within(place, placeable);
}

// A rank's share of a dfs search: the runs the leader hands out, each named by its deviations,
// or the groups of a branched search, each its parent's and its children's (group_request).
void serve_dfs(const ExploreOptions& o, const Scenario& s, const StrategyChoice& choice) {
  exec::serve(search_fingerprint(o, s, choice, 0, 0), o.jobs, [&](std::uint64_t, const std::string& request) {
    if (!request.starts_with('{')) {
      DfsNode node;
      node.deviations = Schedule::parse(request).deviations;
      run_dfs_node(o, s, choice, node);
      return dfs_answer(node).dump();
    }
    const nlohmann::json group = nlohmann::json::parse(request);
    DfsNode parent;
    parent.deviations = Schedule::parse(group.at("parent").get<std::string>()).deviations;
    std::vector<DfsNode> children;
    for (const nlohmann::json& child : group.at("children"))
      children.emplace_back().deviations = Schedule::parse(child.get<std::string>()).deviations;
    Finding::Branching cost;
    const std::size_t ran = run_dfs_group(o, s, choice, parent, children, [&](const DfsNode& n) { return stops_search(o, n); }, cost);
    nlohmann::json runs = nlohmann::json::array();
    for (std::size_t i = 0; i < ran; ++i) runs.push_back(dfs_answer(children[i]));
    return nlohmann::json{{"runs", std::move(runs)},
                          {"cost",
                           {{"saves", cost.saves},
                            {"restores", cost.restores},
                            {"saved_bytes", cost.saved_bytes},
                            {"arena_bytes", cost.arena_bytes},
                            {"save_restore_s", cost.save_restore_s}}}}
        .dump();
  });
}

}  // namespace

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
// Branched (ExploreOptions::branching, where the build gives arenas), a level's runs go by
// parent: a thread (of this rank or another) takes all the children of one run, which it makes
// by running the parent once more, saving it at each choice where a child deviates and
// restoring the saved state for each child (run_dfs_group). The runs, their order and what
// they find are the same.
Finding explore_dfs(const ExploreOptions& o, const Scenario& s, const StrategyChoice& choice, Clock::time_point started) {
  if (!exec::leader()) {
    serve_dfs(o, s, choice);
    return {};
  }
  exec::Ranks ranks(search_fingerprint(o, s, choice, 0, 0), kSearchAhead);
  Finding f;
  for (const auto& fault : s.faults) f.placed += fault.faults->placed_text();
  f.reduced = o.reduction && reducible(s, choice);
  f.branched = o.branching && sim::Arena::supported();
  f.classes_counted = o.count_classes && reducible(s, choice);
  std::vector<DfsNode> level(1), parents;
  std::optional<DfsNode> found;
  for (;;) {
    const std::uint64_t limit = std::min<std::uint64_t>(level.size(), static_cast<std::uint64_t>(o.budget) - f.runs);
    const auto stops = [&](const DfsNode& n) { return stops_search(o, n); };
    const auto out_of_time = [&] { return seconds_since(started) > o.time_s; };
    const RemoteRuns remote{ranks, [&](std::uint64_t i) { return Schedule::dfs(level[i].deviations).text(); },
                            [&](std::uint64_t i, std::string&& answer) {
                              read_dfs_answer(nlohmann::json::parse(answer), level[i]);
                              return stops(level[i]);
                            }};
    FirstHit hit;
    if (f.branched && !parents.empty()) {
      // The level's runs by parent ([first, end) each), each parent's run branched once for all
      // its children: numbered groups handed to the threads as runs are, the same runs counted.
      std::vector<std::pair<std::size_t, std::size_t>> groups;
      for (std::size_t i = 0; i < limit; ++i)
        if (groups.empty() || level[i].parent != level[groups.back().first].parent) groups.emplace_back(i, i + 1);
        else groups.back().second = i + 1;
      std::vector<std::size_t> ran_in(groups.size());
      std::vector<Finding::Branching> cost(groups.size());
      const auto children_of = [&](std::uint64_t g) {
        return std::span(level).subspan(groups[g].first, groups[g].second - groups[g].first);
      };
      // Other ranks take whole groups, which they branch as this process's threads do.
      const RemoteRuns remote_groups{ranks,
                                     [&](std::uint64_t g) { return group_request(parents[level[groups[g].first].parent], children_of(g)); },
                                     [&](std::uint64_t g, std::string&& answer) {
                                       ran_in[g] = read_group_answer(answer, children_of(g), cost[g]);
                                       return ran_in[g] > 0 && stops(level[groups[g].first + ran_in[g] - 1]);
                                     }};
      const FirstHit by_group = first_hit(
          o.jobs, groups.size(), out_of_time,
          [&](std::uint64_t g) {
            const std::size_t first = groups[g].first;
            ran_in[g] = run_dfs_group(o, s, choice, parents[level[first].parent], children_of(g), stops, cost[g]);
            return ran_in[g] > 0 && stops(level[first + ran_in[g] - 1]);
          },
          remote_groups);
      for (const Finding::Branching& c : cost) {
        f.branching.saves += c.saves;
        f.branching.restores += c.restores;
        f.branching.saved_bytes += c.saved_bytes;
        f.branching.arena_bytes = std::max(f.branching.arena_bytes, c.arena_bytes);
        f.branching.save_restore_s += c.save_restore_s;
      }
      if (by_group.hit) hit.hit = groups[*by_group.hit].first + ran_in[*by_group.hit] - 1;
      hit.ran = hit.hit ? *hit.hit + 1 : by_group.ran == 0 ? 0 : groups[by_group.ran - 1].second;
    } else {
      hit = first_hit(
          o.jobs, limit, out_of_time,
          [&](std::uint64_t i) {
            run_dfs_node(o, s, choice, level[i]);
            return stops(level[i]);
          },
          remote);
    }
    count_level(level, hit.ran, f, found);
    f.runs += hit.ran;
    if (f.runs == 1 && hit.ran == 1) f.estimated_schedules = estimated_schedules(level.front(), o, s);  // the default run
    if (hit.hit || (found && !o.count_all)) break;
    if (hit.ran < level.size()) break;  // out of budget or time: not covered
    std::vector<DfsNode> below = level_below(level, o, f);
    if (below.empty()) {
      f.exhausted = true;
      break;
    }
    parents = std::move(level);
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

}  // namespace locksim::search
