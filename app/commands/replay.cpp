// `locksim replay`: a trial run again from its token, narrated, and its timeline drawn; also
// how `locksim explore` tells its finding.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <memory>
#include <optional>

#include "app/commands/commands.hpp"
#include "app/commands/options.hpp"
#include "app/deadline.hpp"
#include "app/metrics.hpp"
#include "app/search/replay.hpp"
#include "reports/explain.hpp"
#include "reports/focus.hpp"
#include "reports/report.hpp"
#include "reports/search.hpp"
#include "sim/errors.hpp"

namespace locksim::commands {

namespace {

// The story of the trial, centred on `property` (a long trial's is told around it).
void tell_story(const Replay& r, const std::string& property) {
  // Without a property asked for, a Lua workload's own finding, where it fired, is the one told.
  std::string centre = property;
  const std::string first = r.fired.empty() ? std::string() : r.fired.front().substr(0, r.fired.front().find(' '));
  if ((centre.empty() || centre == "any") && workload_finding(first)) centre = first;
  const reports::Focus story = reports::focus(r.outcome.timeline, r.fired, centre);
  if (!story.whole()) fmt::print("The story of {}. {}\n\n", story.about, fmt::join(story.left_out, " "));
  for (const auto& line : reports::narrate(story.told)) fmt::print("  {}\n", line);
  fmt::print("\n{}\n", r.fired.empty() ? reports::safe_story(r.outcome.timeline)
                                        : "checkers that fired: " + fmt::format("{}", fmt::join(r.fired, ", ")));
}

// The replay's page: its timeline, explained.
void draw(const Replay& r, const Token& token, const std::string& claim, const std::string& property) {
  const std::string folder = "reports/out/" + r.scenario.name + "/replay";
  const std::string heading = fmt::format("Replay: {}, strategy {}, seed {}{}", r.scenario.name, r.strategy.shown(), token.seed,
                                          r.outcome.timeline.schedule.empty() ? "" : "; " + r.outcome.timeline.schedule);
  std::map<std::string, std::string> meanings;
  for (const auto& m : metrics()) meanings[m.name] = m.meaning;
  fmt::print("timeline: {}\n",
             reports::write_replay_report(r.outcome.timeline, r.strategy.shown(), folder, r.fired, heading, meanings, claim, property));
  fmt::print("explained: {}/report.html\n", folder);
}

struct ReplayOptions {
  std::string token;
  bool check_determinism = false;
  std::string history;
};

}  // namespace

int show_replay(const Token& token, bool check_determinism, bool shrunk, const std::string& claim, const std::string& property,
                double time_s, const std::string& history_file) {
  const auto history = history_file.empty() ? std::nullopt : std::optional(history_format(history_file));
  std::optional<Replay> replayed;
  {
    const TrialsDeadline deadline(time_s);
    try {
      replayed = replay(token);
    } catch (const sim::Interrupted&) {
      fmt::print("not told: replaying it for its story passed --time; `locksim replay <token>` tells it\n");
      return 3;
    }
  }
  Replay& r = *replayed;
  if (shrunk) r.outcome.timeline.schedule += r.outcome.timeline.schedule.empty() ? "shrunk" : ", shrunk";
  if (check_determinism) {
    const Replay again = replay(token);
    if (again.outcome.trace_hash != r.outcome.trace_hash) {
      fmt::print(stderr, "determinism check failed: trace hashes {:016x} and {:016x}\n", r.outcome.trace_hash,
                 again.outcome.trace_hash);
      return 1;
    }
    fmt::print("determinism check: two runs, trace hash {:016x} both times\n", r.outcome.trace_hash);
  }
  fmt::print("replay: {} ({}), strategy {}, seed {}{}\n", r.scenario.name, r.scenario.file, r.strategy.shown(), token.seed,
             r.outcome.timeline.schedule.empty() ? "" : "; " + r.outcome.timeline.schedule);
  if (!r.scenario.lesson.empty()) fmt::print("lesson: {}\n", r.scenario.lesson);
  fmt::print("\n");
  tell_story(r, property);
  draw(r, token, claim, property);
  if (history) write_history(history_file, *history, r.outcome.timeline, r.strategy.shown());
  return r.fired.empty() ? 0 : 3;
}

Command replay_command(CLI::App& app) {
  auto o = std::make_shared<ReplayOptions>();
  auto* cli = app.add_subcommand("replay", "re-run a trial from its token, narrated, and draw its timeline");
  cli->add_option("token", o->token, "the token `explore` printed")->required();
  cli->add_flag("--check-determinism", o->check_determinism, "run it twice and compare trace hashes");
  cli->add_option("--history", o->history, "write the trial's client-visible history to FILE.edn or FILE.json, in Jepsen's form");
  return {cli, [o] { return show_replay(parse_token(o->token), o->check_determinism, false, "", "", 0, o->history); }};
}

}  // namespace locksim::commands
