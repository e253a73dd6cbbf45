#include "reports/search.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "reports/html.hpp"
#include "reports/report_folder.hpp"
#include "reports/results.hpp"

namespace locksim::reports {
namespace {

std::string plural(std::uint64_t n, const char* one, const char* many) { return grouped(n) + " " + (n == 1 ? one : many); }

// "with at most 2 reorderings and 1 pause of ... placed anywhere"
std::string space(const SearchClaim& c) {
  std::string out = fmt::format("with at most {}", c.bound == 1 ? std::string("1 reordering") : fmt::format("{} reorderings", c.bound));
  if (!c.placed.empty()) out += " and " + c.placed;
  return out;
}

std::string what(const SearchClaim& c) { return c.property == "any" ? std::string("checker firing") : c.property; }

// The dfs verdict's sentence.
std::string dfs_verdict(const SearchClaim& c) {
  const std::string schedules = plural(c.schedules, "schedule", "schedules");
  if (c.found && c.counted_all)
    return fmt::format("{} in {} of {} {}{}.", c.property == "any" ? "A checker fires" : c.property + " fires", grouped(c.firing),
                       schedules, space(c), c.exhausted ? " (exhaustive)" : "; the budget ran out before the space was covered");
  if (c.found)
    return fmt::format("{} found after {} {}: {}; the search stopped at the first finding.",
                       c.property == "any" ? "A checker firing" : c.property, schedules, space(c), fmt::join(c.fired, ", "));
  if (c.exhausted) return fmt::format("No {} in any of {} {} (exhaustive).", what(c), schedules, space(c));
  return fmt::format("No {} in {} {}; the budget ran out before the space was covered, so this is no proof.", what(c),
                     schedules, space(c));
}

}  // namespace

std::string verdict(const SearchClaim& c) {
  if (c.mode == "dfs") {
    std::string sentence = dfs_verdict(c);
    if (c.reduction != "none" && c.bound > 0) sentence += " Reorderings that only swap independent steps were skipped.";
    return sentence;
  }
  const std::string how = c.mode == "pct" ? fmt::format("a PCT search of depth {} (each run finds a depth-{} bug with probability at least {:.3g})",
                                                        c.depth, c.depth, c.pct_bound)
                         : c.mode == "swarm" ? std::string("a swarm search (a seed a run, which also picks the faults on)")
                                             : std::string("a random search (a seed a run)");
  if (c.found)
    return fmt::format("{} found in run {} of {}: {}.", c.property == "any" ? "A checker firing" : c.property, grouped(c.schedules), how,
                       fmt::join(c.fired, ", "));
  return fmt::format("No {} in {} of {}: a sample, not a proof.", what(c), plural(c.schedules, "run", "runs"), how);
}

std::string to_json(const SearchClaim& c) {
  nlohmann::json j = {{"scenario", c.scenario},   {"strategy", c.strategy},   {"mode", c.mode},
                      {"property", c.property},   {"schedules", c.schedules}, {"found", c.found},
                      {"fired", c.fired},         {"verdict", verdict(c)}};
  if (c.mode == "dfs") {
    j["bound"] = {{"reorderings", c.bound}, {"faults_placed", c.placed}};
    j["exhausted"] = c.exhausted;
    j["reduction"] = c.reduction;
    j["counted_all"] = c.counted_all;
    j["firing"] = c.firing;
  }
  if (c.mode == "pct") j["pct"] = {{"depth", c.depth}, {"probability_at_least", c.pct_bound}};
  if (c.found) j["token"] = c.token;
  return j.dump(2) + "\n";
}

void write_search_report(const SearchClaim& c, const std::string& folder) {
  StagedFolder staged(folder, FolderKind::part, {"search.json", "report.html"});
  write_atomically(staged.path() + "/search.json", to_json(c));
  const std::string title = fmt::format("Search: {}, strategy {}", c.scenario, c.strategy);
  std::string body = fmt::format("<h1>{}</h1>\n<p class=\"verdict\"><strong>{}</strong></p>\n<table>\n", html::escape(title),
                                 html::escape(verdict(c)));
  const auto row = [&](const std::string& key, const std::string& value) {
    body += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", html::escape(key), html::escape(value));
  };
  row("mode", c.mode);
  row("property", c.property == "any" ? "any checker" : c.property);
  row("schedules explored", grouped(c.schedules));
  if (c.mode == "dfs") {
    row("reorderings at most", std::to_string(c.bound));
    row("faults placed", c.placed.empty() ? "none" : c.placed);
    row("space", c.exhausted ? "exhausted" : (c.found && !c.counted_all ? "stopped at the first finding" : "not covered"));
    row("reduction", c.reduction);
    if (c.counted_all) row("schedules in which it fired", grouped(c.firing));
  }
  row("finding", c.found ? fmt::format("{}", fmt::join(c.fired, ", ")) : "none");
  if (c.found) row("replay token", c.token);
  body += "</table>\n";
  if (c.found) body += "<p>The finding is told and drawn on the replay page: <a href=\"../replay/report.html\">replay/report.html</a>.</p>\n";
  write_atomically(staged.path() + "/report.html", html::page(title, body));
  staged.commit();
}

}  // namespace locksim::reports
