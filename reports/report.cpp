#include "reports/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <map>
#include <set>

#include "reports/explain.hpp"
#include "reports/focus.hpp"
#include "reports/html.hpp"
#include "reports/report_folder.hpp"
#include "reports/timeline_json.hpp"

namespace locksim::reports {

namespace {

// The most lock holds a timeline picture draws, a row each: more would be taller than a screen.
constexpr std::size_t kMostPictureRows = 40;


std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::string escape(const std::string& text) {  // for a single-quoted gnuplot string
  std::string out;
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out;
}

// Each strategy's latency CDF: one data block per strategy (gnuplot's `index`).
std::string latency_data(const RunResults& r, std::vector<std::string>& names) {
  std::string out;
  for (const auto& s : r.strategies) {
    if (s.latency.count() == 0) continue;
    names.push_back(s.name);
    out += fmt::format("# {}\n", s.name);
    std::uint64_t seen = 0;
    for (const auto& [lower, n] : s.latency.buckets()) {
      seen += n;
      out += fmt::format("{:.6g} {:.6g}\n", std::max(lower * Histogram::kGrowth, 1e-3),
                         static_cast<double>(seen) / static_cast<double>(s.latency.count()));
    }
    out += "\n\n";
  }
  return out;
}

// The parts of an operation's time, as the metric registry lists them (time_ms.queue, ...).
std::vector<std::string> time_parts(const RunResults& r) {
  std::vector<std::string> out;
  for (const auto& note : r.metrics)
    if (note.name.starts_with("time_ms.")) out.push_back(note.name.substr(8));
  return out;
}

bool has_time(const StrategyResult& s, const std::vector<std::string>& parts) {
  return !parts.empty() && s.figures.count("time_ms." + parts.front()) > 0;
}

double failed_operations(const StrategyResult& s) {
  auto it = s.counts.find("failed_operations");
  return it == s.counts.end() ? 0 : it->second.total;
}

// "db_lock" -> "db lock"
std::string part_title(std::string part) {
  std::replace(part.begin(), part.end(), '_', ' ');
  return part;
}

// Per strategy with successful operations: its row, name and the cumulative ms per successful
// operation after each part, so each part is a box from one column to the next.
std::string time_data(const RunResults& r, const std::vector<std::string>& parts, std::vector<std::string>& names) {
  std::string out = "# row, strategy, then the ms per successful operation summed up to each part: 0";
  for (const auto& p : parts) out += " " + p;
  out += "\n";
  for (const auto& s : r.strategies) {
    if (!has_time(s, parts)) continue;
    out += fmt::format("{} {} 0", names.size(), quoted(s.name));
    double sum = 0;
    for (const auto& p : parts) out += fmt::format(" {:.6g}", sum += s.figures.at("time_ms." + p));
    out += "\n";
    const double failed = failed_operations(s);
    names.push_back(failed > 0 ? fmt::format("{} ({:g} failed, not drawn)", s.name, failed) : s.name);
  }
  return out;
}

// Per checker that fired anywhere: per strategy, the share of trials with its interval.
std::string violation_data(const RunResults& r, std::vector<std::string>& fired) {
  std::string out;
  for (const auto& note : r.metrics) {
    if (!note.finding) continue;
    const std::string& metric = note.name;
    bool any = false;
    for (const auto& s : r.strategies)
      if (auto it = s.counts.find(metric); it != s.counts.end() && it->second.fired > 0) any = true;
    if (!any) continue;
    fired.push_back(metric);
    out += fmt::format("# {}: strategy, % of trials, low, high\n", metric);
    int x = 0;
    for (const auto& s : r.strategies) {
      auto it = s.counts.find(metric);
      const Share sh = it == s.counts.end() ? Share{} : it->second.share;
      out += fmt::format("{} {} {:.4g} {:.4g} {:.4g}\n", x++, quoted(s.name), 100 * sh.value, 100 * sh.low, 100 * sh.high);
    }
    out += "\n\n";
  }
  return out;
}

// Writes the same plot as PNG and SVG: `body` is the plot command(s).
std::string both_formats(const std::string& name, const std::string& size_png, const std::string& size_svg,
                         const std::string& body) {
  // `reset` before each: settings of one plot (a log axis, say) must not leak into the next.
  return fmt::format("reset\nset terminal pngcairo size {} font ',10'\nset output '{}.png'\n{}\n"
                     "reset\nset terminal svg size {} dynamic font ',10'\nset output '{}.svg'\n{}\nunset output\n",
                     size_png, name, body, size_svg, name, body);
}

// A panel per family of strategies (database, Redis, ZooKeeper / etcd), at most 8 curves a
// panel, each curve its own colour and dash: 30 strategies stay readable.
std::string latency_script(const RunResults& r, const std::vector<std::string>& names) {
  static constexpr const char* kColours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f"};
  std::vector<std::pair<std::string, std::vector<std::size_t>>> panels;  // title, the data blocks drawn
  std::map<std::string, std::vector<std::size_t>> by_family;
  std::vector<std::string> families;  // in the order they first appear
  for (std::size_t i = 0; i < names.size(); ++i) {
    std::string family;
    for (const auto& s : r.strategies)
      if (s.name == names[i]) family = s.family.empty() ? "strategies" : s.family;
    if (!by_family.contains(family)) families.push_back(family);
    by_family[family].push_back(i);
  }
  for (const auto& family : families) {
    const auto& members = by_family[family];
    const std::size_t parts = (members.size() + 7) / 8;
    for (std::size_t p = 0; p < parts; ++p)
      panels.emplace_back(parts == 1 ? family : fmt::format("{} ({} of {})", family, p + 1, parts),
                          std::vector<std::size_t>(members.begin() + static_cast<std::ptrdiff_t>(8 * p),
                                                   members.begin() + static_cast<std::ptrdiff_t>(std::min(members.size(), 8 * p + 8))));
  }
  const std::size_t cols = panels.size() == 1 ? 1 : 2, rows = (panels.size() + cols - 1) / cols;
  std::string body = fmt::format(
      "set multiplot layout {},{} title 'Latency of successful logical operations (CDF; failed ones apart, in report.md)'\n"
      "set xlabel 'latency (ms, log scale)'\nset ylabel 'share of successes'\nset logscale x\nset yrange [0:1]\n"
      "set key bottom right font ',8' samplen 3\nset grid\n",
      rows, cols);
  for (const auto& [title, blocks] : panels) {
    body += fmt::format("set title '{}' noenhanced\nplot ", escape(title));
    for (std::size_t c = 0; c < blocks.size(); ++c)
      body += fmt::format("{}'latency.dat' index {} using 1:2 with steps lw 2 lc rgb '{}' dashtype {} title '{}' noenhanced",
                          c == 0 ? "" : ", ", blocks[c], kColours[c % std::size(kColours)], 1 + c % 4, escape(names[blocks[c]]));
    body += "\n";
  }
  body += "unset multiplot";
  const std::string size = fmt::format("{},{}", cols * 700, rows * 380 + 40);
  return both_formats("latency_cdf", size, size, body);
}

// One panel per checker that fired, up to three side by side: a horizontal bar per strategy
// (its name readable at the left, the first on top) with the interval as a whisker.
std::string violations_script(const std::vector<std::string>& fired, std::size_t strategies) {
  const std::size_t cols = std::min<std::size_t>(3, fired.size()), rows = (fired.size() + cols - 1) / cols;
  std::string body = fmt::format("set multiplot layout {},{} title 'Share of trials in which each checker fired (95% interval)'\n",
                                 rows, cols);
  body += fmt::format("set style fill solid 0.6\nset xrange [0:105]\nset xlabel '% of trials'\nset grid xtics\nunset key\n"
                      "set yrange [{:.1f}:-0.6]\nset ytics font ',8' noenhanced\n",
                      static_cast<double>(strategies) - 0.4);
  for (std::size_t i = 0; i < fired.size(); ++i)
    body += fmt::format("set title '{}' noenhanced\nplot 'violations.dat' index {} using (0):1:(0):3:($1-0.35):($1+0.35):ytic(2) "
                        "with boxxyerror lc rgb '#d0603a', '' index {} using 3:1:4:5 with xerrorbars lc rgb 'black' pt 0\n",
                        fired[i], i, i);
  body += "unset multiplot";
  const std::string size = fmt::format("{},{}", cols * 520, rows * (90 + 17 * strategies) + 40);
  return both_formats("violations", size, size, body);
}

// Each rollout's duplicate rows in the table at the start and at each phase's end (means over
// its trials): a data block per rollout, and how many there are.
std::string rollout_data(const RunResults& r, std::vector<std::string>& plans) {
  std::string out;
  for (const auto& s : r.strategies) {
    if (s.phases.empty()) continue;
    plans.push_back(s.name);
    out += fmt::format("# {}: time (s), duplicate rows in the table\n", s.name);
    // Sampled evenly over the plan where the rollout sampled (left_at_sample.<k>), so the lines
    // cross where they did; else at the start and the end of each phase.
    std::size_t samples = 0;
    while (s.counts.count("left_at_sample." + std::to_string(samples))) ++samples;
    if (samples > 1) {
      const double end = s.phases.back().to_s;
      for (std::size_t k = 0; k < samples; ++k)
        out += fmt::format("{:g} {:g}\n", end * static_cast<double>(k) / static_cast<double>(samples - 1),
                           mean_per_trial(s, "left_at_sample." + std::to_string(k)));
    } else {
      out += fmt::format("0 {:g}\n", mean_per_trial(s, "left_after_phase.0"));
      for (std::size_t k = 0; k < s.phases.size(); ++k)
        out += fmt::format("{:g} {:g}\n", s.phases[k].to_s, mean_per_trial(s, "left_after_phase." + std::to_string(k + 1)));
    }
    out += "\n\n";
  }
  return out;
}

std::string rollout_script(const std::vector<std::string>& plans) {
  static constexpr const char* kColours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f"};
  std::string body =
      "set title 'Duplicate rows in the table over the rollout (mean over trials)'\n"
      "set xlabel 'time (s)'\nset ylabel 'duplicate rows'\nset yrange [0:*]\nset grid\nset key top right font ',8' noenhanced\nplot ";
  for (std::size_t i = 0; i < plans.size(); ++i)
    body += fmt::format("{}'rollout.dat' index {} using 1:2 with linespoints lw 2 pt {} ps 0.6 lc rgb '{}' dashtype {} title '{}'",
                        i == 0 ? "" : ", ", i, 5 + i % 4, kColours[i % std::size(kColours)], 1 + i % 4, escape(plans[i]));
  return both_formats("rollout", "900,420", "900,420", body + "\n");
}

// A file-name-safe form of a strategy's name.
std::string slug(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
  return out;
}

// Where a strategy's first violating trial is kept as data, beside report.html, when its story
// leaves things out.
std::string trial_data_name(const std::string& strategy) { return "trial-" + slug(strategy) + ".json"; }


// Holds as bars (the lease as a thin bar beside it, to where the service really ended it),
// pauses and crashes as shaded bands, the inserts of duplicated keys as marks on their own
// row, wrong unlocks (a DEL that removed this holder's lock), renewals and the holder's
// COMMIT as marks on the hold's row.
std::string timeline_data(const Timeline& t) {
  // gnuplot skips an empty block, so a block with nothing to draw holds a row below the picture.
  std::string out = "# holds: row, from s, to s\n";
  for (std::size_t i = 0; i < t.bars.size(); ++i) out += fmt::format("{} {:.6f} {:.6f}\n", i, t.bars[i].from_s, t.bars[i].to_s);
  if (t.bars.empty()) out += "-10 0 0\n";
  out += "\n\n# leases granted: row, from s, end at the service s\n";
  bool any_lease = false;
  for (std::size_t i = 0; i < t.bars.size(); ++i)
    if (t.bars[i].lease_to_s >= 0) {
      out += fmt::format("{} {:.6f} {:.6f}\n", i, t.bars[i].from_s, t.bars[i].lease_to_s);
      any_lease = true;
    }
  if (!any_lease) out += "-10 0 0\n";
  out += "\n\n# duplicate inserts: s\n";
  bool any_duplicate = false;
  for (const auto& m : t.inserts)
    if (!m.first) {
      out += fmt::format("{:.6f}\n", m.at_s);
      any_duplicate = true;
    }
  if (!any_duplicate) out += "-1\n";
  out += "\n\n# wrong unlocks: s, row of the hold whose lock a DEL removed\n";
  bool any_wrong = false;
  for (std::size_t i = 0; i < t.bars.size(); ++i)
    if (!t.bars[i].deleted_by.empty()) {
      out += fmt::format("{:.6f} {}\n", t.bars[i].service_to_s, i);
      any_wrong = true;
    }
  if (!any_wrong) out += "-1 -10\n";
  out += "\n\n# renewals: s, row\n";
  bool any_renewal = false;
  for (std::size_t i = 0; i < t.bars.size(); ++i)
    for (const double at : t.bars[i].renewals_s) {
      out += fmt::format("{:.6f} {}\n", at, i);
      any_renewal = true;
    }
  if (!any_renewal) out += "-1 -10\n";
  // A commit on its holder's row: whether it came before the unlock is the lesson of a lock
  // released before the transaction committed.
  out += "\n\n# commits: s, row of the hold of the same attempt\n";
  bool any_commit = false;
  for (const auto& st : t.statements) {
    std::string word = st.sql;  // as written: "COMMIT", "commit"
    for (char& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (word != "COMMIT") continue;
    for (std::size_t i = 0; i < t.bars.size(); ++i)
      if (t.bars[i].holder == st.who) {
        out += fmt::format("{:.6f} {}\n", st.to_s, i);
        any_commit = true;
        break;
      }
  }
  if (!any_commit) out += "-1 -10\n";
  return out;
}

std::string timeline_script(const Timeline& t, const std::string& name, const std::string& strategy) {
  const double top = static_cast<double>(t.bars.size());
  // The axis spans the action: the first and last hold, pause, crash, insert or statement. A
  // lease's nominal end is left out (a 60 s TTL would squeeze 40 ms of action into a sliver);
  // a lease bar that reaches past the right edge is cut there, and the title says so.
  double first = t.end_s, last = 0;
  const auto span = [&](double from, double to) {
    first = std::min(first, from);
    last = std::max(last, to);
  };
  for (const auto& b : t.bars) span(b.from_s, b.to_s);
  for (const auto& b : t.bands) span(b.from_s, std::min(b.to_s, t.end_s));
  for (const auto& m : t.inserts) span(m.at_s, m.at_s);
  for (const auto& st : t.statements) span(st.from_s, st.to_s);
  if (first > last) first = last = 0;
  const double pad = std::max((last - first) * 0.05, 1e-3);
  const double from = std::max(0.0, first - pad), to = last + pad;
  const bool cut = std::any_of(t.bars.begin(), t.bars.end(), [&](const auto& b) { return b.lease_to_s > to; });
  // The key, six entries in two rows of three, is centred on the picture and not on the plot: long
  // row names push the plot to the right, and a key below it ran off the right edge. It sits in a
  // bottom margin kept for it, under the x axis's label.
  std::string body = fmt::format("set title 'One trial of {} (seed {}{}): who held which lock{}' noenhanced\n"
                                 "set xlabel 'time (s)'\nset xrange [{:.6f}:{:.6f}]\nset yrange [-1.7:{:.1f}]\nset grid xtics\n"
                                 "set key at screen 0.5, character 1 center bottom horizontal maxcols 3 font ',9' samplen 2 width -4\n"
                                 "set bmargin 6\n",
                                 escape(strategy), t.seed, t.schedule.empty() ? "" : "; " + escape(t.schedule),
                                 cut ? " (leases cut at the right edge)" : "", from, to, top - 0.3);
  std::string tics = "set ytics ('duplicate inserts' -1";
  for (std::size_t i = 0; i < t.bars.size(); ++i) tics += fmt::format(", '{}  {}' {}", escape(t.bars[i].lock), escape(t.bars[i].holder.text), i);
  body += tics + ") font ',8' noenhanced\n";
  int n = 0;
  for (const auto& b : t.bands) {
    const char* colour = b.kind == "down" ? "#f4a6a6" : "#c9c9f4";
    body += fmt::format("set object {} rect from {:.6f}, graph 0 to {:.6f}, graph 1 fc rgb '{}' fs solid 0.5 noborder behind\n",
                        ++n, b.from_s, b.to_s, colour);
    body += fmt::format("set label {} '{} {}' at {:.6f}, graph 0.97 font ',8' noenhanced\n", n, escape(b.node), b.kind, b.from_s);
  }
  for (std::size_t i = 0; i < t.bars.size(); ++i)  // who removed the lock, beside the mark
    if (!t.bars[i].deleted_by.empty())
      body += fmt::format("set label {} '{} by {}' at {:.6f}, {:.2f} font ',8' tc rgb '#d02020' noenhanced\n", ++n,
                          wrong_unlock_words(t.bars[i]), escape(t.bars[i].deleted_by.lane), t.bars[i].service_to_s,
                          static_cast<double>(i) + 0.45);
  body += fmt::format("plot '{0}.dat' index 1 using 2:($1+0.28):2:3:($1+0.2):($1+0.36) with boxxyerror fs solid 0.3 "
                      "lc rgb '#999999' title 'lease at the service (to its real end)', "
                      "'' index 0 using 2:1:2:3:($1-0.2):($1+0.2) with boxxyerror fs solid 0.8 lc rgb '#3060c0' "
                      "title 'believes it holds the lock', "
                      "'' index 2 using 1:(-1) with points pt 7 ps 1.5 lc rgb '#d02020' title 'insert of a duplicated key', "
                      "'' index 3 using 1:2 with points pt 3 ps 2 lc rgb '#d02020' title 'lock deleted by another (wrong unlock)', "
                      "'' index 4 using 1:($2+0.28) with points pt 9 ps 0.8 lc rgb '#404040' title 'lease renewed', "
                      "'' index 5 using 1:2 with points pt 5 ps 1.2 lc rgb '#208040' title 'COMMIT of the holder'",
                      name);
  const std::string size = fmt::format("1100,{}", 276 + 28 * static_cast<int>(t.bars.size()));  // 16 px for the key's margin
  return both_formats(name, size, size, body);
}

// One stacked horizontal bar per strategy: where a successful operation's time goes, part by part.
std::string time_script(const std::vector<std::string>& parts, const std::vector<std::string>& names) {
  static constexpr const char* kColours[] = {"#e15759", "#f28e2b", "#b07aa1", "#4e79a7", "#9c755f", "#bab0ac", "#59a14f"};
  std::string body = fmt::format(
      "set title 'Where the time of a successful operation goes (mean ms per operation)'\n"  // no x label: the key is below
      "set yrange [{:.1f}:-0.6]\nset xrange [0:*]\nset grid xtics\nset key outside bottom center horizontal maxcols 7 samplen 2\n"
      "set style fill solid 0.85 border rgb 'white'\n",
      static_cast<double>(names.size()) - 0.4);  // the first strategy on top
  std::string tics = "set ytics (";
  for (std::size_t i = 0; i < names.size(); ++i) tics += fmt::format("{}'{}' {}", i == 0 ? "" : ", ", escape(names[i]), i);
  body += tics + ") font ',9' noenhanced\nplot ";
  for (std::size_t k = 0; k < parts.size(); ++k)
    body += fmt::format("{}'time_breakdown.dat' using {}:1:{}:{}:($1-0.35):($1+0.35) with boxxyerror lc rgb '{}' title '{}'",
                        k == 0 ? "" : ", ", k + 4, k + 3, k + 4, kColours[k % std::size(kColours)], part_title(parts[k]));
  const std::string size = fmt::format("1100,{}", 170 + 34 * static_cast<int>(names.size()));
  return both_formats("time_breakdown", size, size, body);
}

// report.md's "Where time goes": per strategy, the mean ms per successful operation in each
// part (they sum to its mean latency), and its failed operations.
std::string time_table(const RunResults& r, const std::vector<std::string>& parts) {
  std::string head = "| strategy |", rule = "|---|", rows;
  for (const auto& p : parts) {
    head += " " + part_title(p) + " |";
    rule += "---:|";
  }
  head += " mean latency | failed ops | failed p50 ms |\n";
  rule += "---:|---:|---:|\n";
  for (const auto& s : r.strategies) {
    if (!has_time(s, parts) && failed_operations(s) == 0) continue;
    std::string row = "| " + s.name + " |";
    double sum = 0;
    for (const auto& p : parts) {
      auto it = s.figures.find("time_ms." + p);
      row += it == s.figures.end() ? " - |" : fmt::format(" {:.2f} |", it->second);
      if (it != s.figures.end()) sum += it->second;
    }
    auto failed_p50 = s.figures.find("failed_latency_ms.p50");
    row += has_time(s, parts) ? fmt::format(" {:.2f} |", sum) : std::string(" - |");
    row += fmt::format(" {:g} | {} |\n", failed_operations(s),
                       failed_p50 == s.figures.end() ? std::string("-") : fmt::format("{:.1f}", failed_p50->second));
    rows += row;
  }
  if (rows.empty()) return "";
  return "## Where time goes\n\n"
         "Mean milliseconds per successful logical operation, first attempt to the answer: waiting in an app server's "
         "accept *queue*, for a database *pool* connection, for row and gap locks in the database (*db lock*), acquiring "
         "locks at a *lock service* (retry loops, Redlock, ZooKeeper, etcd, Consul, the lock table, a local mutex), in attempts "
         "that *timed out* (where that time went is unknown to the client), in *backoff* between attempts, and the rest "
         "(*service network*: handler work, statements and commands served, network, pauses). The parts sum to the mean "
         "latency. Failed operations (an error, or every attempt failed) are counted apart and left out of the parts and "
         "of the latency percentiles and CDF.\n\n" +
         head + rule + rows + "\n";
}

std::string markdown(const RunResults& r, const std::vector<std::string>& pictures, const std::string& note) {
  std::string md = fmt::format("# {}\n\n{}\n\nSource: {}\n\n", r.scenario, r.description, r.source);
  if (!r.lesson.empty()) md += fmt::format("**Lesson.** {}\n\n", r.lesson);
  md += fmt::format("Seed {}, {} trials per strategy (seeds {}..{}), scenario hash `{:016x}`; every figure is in "
                    "`results.json`.\n\n",
                    r.seed, r.trials, r.seed, r.seed + r.trials - 1, r.scenario_hash);
  md += "## Comparison\n\n```\n" + table(r) + "```\n\n";
  if (const std::string steps = steps_table(r); !steps.empty()) md += "## Steps\n\n```\n" + steps + "```\n\n";
  if (const std::string phases = phases_table(r); !phases.empty()) md += "## Rollout phases\n\n```\n" + phases + "```\n\n";
  if (r.headline == "duplicate_rows")
    md += "What the columns mean: *ops*, the clients' logical operations over every trial; *dup rows*, rows beyond the "
          "first for one key, summed over trials; *per M ops*, dup rows per million operations with its exact 95% Poisson "
          "interval; *trials with dups*, the share of trials with at least one, and its 95% Wilson interval (\"1 outcome\" "
          "when every trial came to the same counts); *dup keys*, keys with more than one row; ";
  else
    md += fmt::format("What the columns mean: *ops*, the clients' logical operations over every trial; *{0}*, the workload's "
                      "first finding, summed over trials; *per M ops*, {0} per million operations with its exact 95% Poisson "
                      "interval; *trials with any*, the share of trials with at least one, and its 95% Wilson interval (\"1 "
                      "outcome\" when every trial came to the same counts); *dup keys*, account-bind's duplicated keys (none "
                      "here); ",
                      r.headline);
  md += "*dropped*, requests the strategy chose to drop; *p50 / p99 ms*, latency of successful logical operations (first "
        "attempt to the answer) from 1% log buckets; *db/op*, *redis*, statements and Redis commands per logical operation; "
        "*errors*, operations that ended in an error, by its kind. The other checkers are listed under the table where "
        "they fired.\n\n";
  md += time_table(r, time_parts(r));
  std::string notes;  // every metric measured here, from the registry
  {
    // The notes by name, families (errors.<kind>) apart: a lookup per count, not a scan of
    // every note per count (a Lua workload may declare thousands of metrics).
    std::map<std::string, const MetricNote*> by_name;
    std::vector<std::pair<std::string, const MetricNote*>> families;  // "errors." -> errors.<kind>
    for (const auto& note : r.metrics) {
      if (const auto family = note.name.find('<'); family != std::string::npos)
        families.emplace_back(note.name.substr(0, family), &note);
      else
        by_name.emplace(note.name, &note);
    }
    const auto note_of = [&](const std::string& name) -> const MetricNote* {
      if (const auto it = by_name.find(name); it != by_name.end()) return it->second;
      for (const auto& [prefix, note] : families)
        if (name.size() > prefix.size() && name.starts_with(prefix)) return note;
      return nullptr;
    };
    std::set<const MetricNote*> measured;
    for (const auto& s : r.strategies) {
      for (const auto& [name, m] : s.counts)
        if (const MetricNote* n = note_of(name)) measured.insert(n);
      for (const auto& [name, v] : s.figures)
        if (const auto it = by_name.find(name); it != by_name.end()) measured.insert(it->second);
    }
    for (const auto& note : r.metrics)
      if (measured.count(&note)) notes += fmt::format("- `{}` ({}): {}\n", note.name, note.unit, note.meaning);
  }
  if (!notes.empty()) md += "Metrics measured here (docs/metrics.md has them all):\n\n" + notes + "\n";
  for (const auto& e : r.expectations)
    md += e.skipped ? fmt::format("- expectation `{}`: skipped, its strategy was not run\n", e.text)
                    : fmt::format("- expectation `{}`: {} (measured {})\n", e.text, e.holds ? "holds" : "**does not hold**",
                                  e.measured);
  if (!r.expectations.empty()) md += "\n";
  md += "## Plots\n\n";
  for (const auto& p : pictures) md += fmt::format("![{}]({}.png)\n\n", p, p);
  if (!note.empty()) md += note + "\n";
  return md;
}

// A picture gnuplot wrote, inlined; "" when there is none.
std::string svg_of(const std::string& folder, const std::string& picture, std::size_t k) {
  std::ifstream in(folder + "/" + picture + ".svg");
  if (!in) return "";
  std::stringstream text;
  text << in.rdbuf();
  return html::inline_svg(text.str(), fmt::format("p{}", k));
}

// report.html: what report.md holds, the plots inlined, and each strategy that failed told
// and drawn through its first violating trial.
std::string html_report(const RunResults& r, const std::string& folder, const std::vector<std::string>& pictures,
                        const std::string& note) {
  using html::escape;
  std::string b = fmt::format("<h1>{}</h1>\n<p>{}</p>\n<p class=\"muted\">Source: {}</p>\n", escape(r.scenario),
                              escape(r.description), escape(r.source));
  if (!r.lesson.empty()) b += fmt::format("<p class=\"lesson\"><b>Lesson.</b> {}</p>\n", escape(r.lesson));
  b += fmt::format("<p class=\"muted\">Seed {}, {} trials per strategy (seeds {}..{}), scenario hash <code>{:016x}</code>; every "
                   "figure is in results.json, and report.md says what each column means.</p>\n",
                   r.seed, r.trials, r.seed, r.seed + r.trials - 1, r.scenario_hash);
  b += "<h2>Comparison</h2>\n<pre class=\"wide\">" + escape(table(r)) + "</pre>\n";  // its columns line up, whatever the width
  if (const std::string steps = steps_table(r); !steps.empty()) b += "<h2>Steps</h2>\n<pre>" + escape(steps) + "</pre>\n";
  if (const std::string phases = phases_table(r); !phases.empty()) b += "<h2>Rollout phases</h2>\n<pre>" + escape(phases) + "</pre>\n";
  if (!r.expectations.empty()) {
    b += "<h2>Expectations</h2>\n<ul>\n";
    for (const auto& e : r.expectations)
      b += e.skipped ? fmt::format("<li><code>{}</code>: skipped, its strategy was not run</li>\n", escape(e.text))
                     : fmt::format("<li><code>{}</code>: <span class=\"{}\">{}</span> (measured {:g})</li>\n", escape(e.text),
                                   e.holds ? "holds" : "fails", e.holds ? "holds" : "does not hold", e.measured);
    b += "</ul>\n";
  }
  std::map<std::string, std::string> meanings;
  for (const auto& m : r.metrics) meanings[m.name] = m.meaning;
  std::string explained;
  for (const auto& st : r.strategies) {
    if (!st.first_violation) continue;
    const auto& v = *st.first_violation;
    // The scenario's headline finding, where it fired first (a Lua workload's own): the story
    // follows it rather than another finding of the same trial.
    const bool headline_first = !v.fired.empty() && v.fired.front().substr(0, v.fired.front().find(' ')) == r.headline;
    const Focus story = focus(v.timeline, v.fired, headline_first ? r.headline : std::string());
    explained += html::trial_section(story, fmt::format("{}: its first violating trial, seed {}", st.name, r.seed + v.trial), v.fired,
                                     meanings, story.whole() ? std::string() : trial_data_name(st.name));
    explained += fmt::format("<p class=\"muted\">Run it alone: <code>locksim run {} --strategy {} --seed {} --trials 1</code></p>\n",
                             escape(r.file.empty() ? r.scenario : r.file), escape(st.name), r.seed + v.trial);
  }
  if (!explained.empty()) b += "<h2>Violations explained</h2>\n" + explained;
  // A safe strategy has its story too: its first trial, and why nothing fired in it.
  std::string safe;
  for (const auto& st : r.strategies) {
    if (st.first_violation || !st.steps.empty()) continue;  // a sessions run's steps are its story, above
    if (st.timeline.bars.empty() && st.timeline.statements.empty() && st.timeline.messages.empty()) continue;
    safe += html::trial_section(focus(st.timeline, {}), fmt::format("{}: its first trial, seed {}, had no finding", st.name, r.seed), {},
                                meanings, std::string());
  }
  if (!safe.empty()) b += "<h2>Safe trials told</h2>\n" + safe;
  b += "<h2>Plots</h2>\n";
  for (std::size_t k = 0; k < pictures.size(); ++k)
    if (const std::string svg = svg_of(folder, pictures[k], k); !svg.empty())
      b += fmt::format("<div class=\"plot\" id=\"{}\">\n{}</div>\n", escape(pictures[k]), svg);
  if (!note.empty()) b += "<p class=\"muted\">" + escape(note) + "</p>\n";
  return html::page(r.scenario + ": locksim report", b);
}

// What a failed gnuplot began.
void remove_pictures(const std::string& folder, const std::vector<std::string>& names) {
  std::error_code ignored;
  for (const auto& name : names)
    for (const char* ext : {".png", ".svg"}) std::filesystem::remove(folder + "/" + name + ext, ignored);
}

}  // namespace

std::string write_replay_report(const Timeline& t, const std::string& strategy, const std::string& folder,
                                const std::vector<std::string>& fired, const std::string& heading,
                                const std::map<std::string, std::string>& meanings, const std::string& claim,
                                const std::string& property) {
  StagedFolder staged(folder, FolderKind::part, {"timeline-", "report.html"});
  const std::string name = "timeline-" + slug(strategy);
  // The picture draws the holds of the trial's story, a row each: past kMostPictureRows rows it
  // would be taller than a screen, and is not asked for.
  const Focus story = focus(t, fired, property);
  const Timeline& told = story.told;
  Plotted drawn{false, fmt::format("{} lock holds in the story, more than the {} rows a picture shows", told.bars.size(),
                                   kMostPictureRows)};
  if (!story.whole()) write_atomically(staged.path() + "/" + name + ".json", nlohmann::json(t).dump());
  if (told.bars.size() <= kMostPictureRows) {
    write_atomically(staged.path() + "/" + name + ".dat", timeline_data(told));
    write_atomically(staged.path() + "/" + name + ".gp", timeline_script(told, name, strategy));
    drawn = run_gnuplot(staged.path(), name + ".gp");
    if (!drawn) remove_pictures(staged.path(), {name});
  }
  std::string body = fmt::format("<h1>{}</h1>\n", html::escape(heading.empty() ? "Replay of " + strategy : heading));
  if (!claim.empty()) body += fmt::format("<p class=\"verdict\">Search: {}</p>\n", html::escape(claim));
  body += html::trial_section(story, "One trial of " + strategy, fired, meanings, story.whole() ? std::string() : name + ".json");
  if (drawn && told.worth_drawing())
    body += "<h2>Who held which lock</h2>\n<div class=\"plot\">\n" + svg_of(staged.path(), name, 0) + "</div>\n";
  else if (!drawn && told.worth_drawing())
    body += fmt::format("<p class=\"muted\">No picture of who held which lock: {}.</p>\n", html::escape(drawn.why));
  write_atomically(staged.path() + "/report.html", html::page(heading.empty() ? "Replay of " + strategy : heading, body));
  staged.commit();
  if (drawn) return folder + "/" + name + ".png";
  return told.bars.size() <= kMostPictureRows ? fmt::format("no picture: {} ({}/{}.gp is there)", drawn.why, folder, name)
                                              : "no picture: " + drawn.why;
}

ReportFiles write_report(const RunResults& r, const std::string& folder) {
  StagedFolder staged(folder, FolderKind::scenario, {"results.json", "report.md"});
  ReportFiles f{folder, {}, false, {}};
  auto write = [&](const std::string& name, const std::string& text) {
    write_atomically(staged.path() + "/" + name, text);
    f.written.push_back(name);
  };
  write("results.json", to_json(r));
  std::vector<std::string> names, fired, pictures, timed;
  const std::string latency = latency_data(r, names);
  const std::vector<std::string> parts = time_parts(r);
  const std::string times = time_data(r, parts, timed);
  const std::string violations = violation_data(r, fired);
  std::string script;
  if (!names.empty()) {
    write("latency.dat", latency);
    script += latency_script(r, names);
    pictures.push_back("latency_cdf");
  }
  if (!timed.empty()) {
    write("time_breakdown.dat", times);
    script += time_script(parts, timed);
    pictures.push_back("time_breakdown");
  }
  std::vector<std::string> plans;
  if (const std::string rollout = rollout_data(r, plans); !plans.empty()) {
    write("rollout.dat", rollout);
    script += rollout_script(plans);
    pictures.push_back("rollout");
  }
  if (!fired.empty()) {
    write("violations.dat", violations);
    script += violations_script(fired, r.strategies.size());
    pictures.push_back("violations");
  }
  for (const auto& st : r.strategies)  // a story that leaves things out: the whole trial beside the page
    if (st.first_violation && !focus(st.first_violation->timeline, st.first_violation->fired).whole())
      write(trial_data_name(st.name), nlohmann::json(st.first_violation->timeline).dump());
  for (const auto& st : r.strategies) {  // the teaching picture, where one trial is small enough to read
    if (!st.timeline.worth_drawing() || st.timeline.bars.size() > kMostPictureRows || pictures.size() >= 8) continue;
    const std::string name = "timeline-" + slug(st.name);
    write(name + ".dat", timeline_data(st.timeline));
    script += timeline_script(st.timeline, name, st.name);
    pictures.push_back(name);
  }
  if (!script.empty()) {
    write("plots.gp", script);
    if (const Plotted plotted = run_gnuplot(staged.path(), "plots.gp")) {
      f.plotted = true;
      for (const auto& p : pictures)
        for (const char* ext : {".png", ".svg"}) f.written.push_back(p + ext);
    } else {
      remove_pictures(staged.path(), pictures);
      f.note = "No pictures: " + plotted.why + " (the data and plots.gp are here; run `gnuplot plots.gp` in this folder).";
    }
  }
  write("report.md", markdown(r, f.plotted ? pictures : std::vector<std::string>{}, f.note));
  write("report.html", html_report(r, staged.path(), f.plotted ? pictures : std::vector<std::string>{}, f.note));
  staged.commit();
  return f;
}

}  // namespace locksim::reports
