#include "reports/sweep_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reports/html.hpp"
#include "reports/report.hpp"
#include "reports/report_folder.hpp"

namespace locksim::reports {

namespace {
std::string cell(const SweepResults& s, const SweepPoint::Value& v) {
  if (!s.is_share && v.low != v.high) return fmt::format("{:.4g} [{:.4g}-{:.4g}]", v.value, v.low, v.high);  // a rate
  if (!s.is_share) return fmt::format("{:.4g}", v.value);
  if (v.low == v.high) return fmt::format("{:.1f}% (trials alike)", 100 * v.value);  // no interval: every trial ran alike
  return fmt::format("{:.1f}% [{:.1f}-{:.1f}]", 100 * v.value, 100 * v.low, 100 * v.high);
}
double shown(const SweepResults& s, double v) { return s.is_share ? 100 * v : v; }

std::string progress_folder(const std::string& folder) {
  std::filesystem::path f = std::filesystem::path(folder).lexically_normal();
  if (!f.has_filename()) f = f.parent_path();
  return f.string() + ".partial";
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Temporary files of points.json that writers left when they were killed.
void remove_dead_temporaries(const std::string& partial) {
  const std::string prefix = "points.json.tmp.";
  std::error_code ec;
  for (std::filesystem::directory_iterator it(partial, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(prefix)) continue;
    const std::string pid = name.substr(prefix.size(), name.find('.', prefix.size()) - prefix.size());
    if (pid.empty() || pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ignored;
    if (process_is_gone(std::stol(pid))) std::filesystem::remove(it->path(), ignored);
  }
}

std::vector<std::string> strategies_of(const SweepResults& s) {
  std::vector<std::string> names;
  if (!s.points.empty())
    for (const auto& v : s.points.front().values) names.push_back(v.strategy);
  return names;
}
}  // namespace

std::string sweep_table(const SweepResults& s) {
  std::string out;
  if (s.stopped == "time")
    out += fmt::format("stopped after {:.1f} s by --time: {} of {} points measured; the others were not run "
                       "(--resume runs them)\n\n",
                       s.stopped_after_s, s.points.size(), s.points.size() + s.not_run.size());
  for (const auto& path : s.varied) out += fmt::format("{:>22} ", path);
  const auto names = strategies_of(s);
  for (const auto& n : names) out += fmt::format("{:>26} ", n);
  out += "\n";
  for (const auto& p : s.points) {
    for (double x : p.at) out += fmt::format("{:>22g} ", x);
    for (const auto& v : p.values) out += fmt::format("{:>26} ", cell(s, v));
    out += "\n";
  }
  for (const auto& at : s.not_run) {
    for (double x : at) out += fmt::format("{:>22g} ", x);
    for (std::size_t k = 0; k < std::max<std::size_t>(names.size(), 1); ++k) out += fmt::format("{:>26} ", "not run");
    out += "\n";
  }
  return out;
}

void save_sweep_progress(const std::string& folder, const std::string& points_json) {
  const FolderLock lock(folder, FolderKind::part);  // a run's swap moves sweep.partial/
  const std::string partial = progress_folder(folder);
  remove_dead_temporaries(partial);
  write_atomically(partial + "/points.json", points_json);
}

std::vector<std::string> saved_sweep_points(const std::string& folder) {
  std::vector<std::string> files;
  for (const auto& file : {progress_folder(folder) + "/points.json", folder + "/points.json"})
    if (std::filesystem::exists(file)) files.push_back(file);
  return files;
}

std::string write_sweep_report(const SweepResults& s, const std::string& folder) {
  StagedFolder staged(folder, FolderKind::part, {"sweep.", "points.json", "report.html"});
  const std::string at = staged.path();
  const auto names = strategies_of(s);
  // Data: one block per strategy; rows x [y] value low high.
  std::string data;
  for (std::size_t k = 0; k < names.size(); ++k) {
    data += fmt::format("# {}\n", names[k]);
    double previous_x = s.points.empty() ? 0 : s.points.front().at.front();
    for (const auto& p : s.points) {
      if (s.varied.size() == 2 && p.at[0] != previous_x) data += "\n";  // a new scan line for the heat map
      previous_x = p.at[0];
      const auto& v = p.values[k];
      for (double x : p.at) data += fmt::format("{:.6g} ", x);
      data += fmt::format("{:.6g} {:.6g} {:.6g}\n", shown(s, v.value), shown(s, v.low), shown(s, v.high));
    }
    data += "\n\n";
  }
  write_atomically(at + "/sweep.dat", data);
  const std::string ylabel = s.is_share ? "% of trials with " + s.metric : s.metric;
  std::string body;
  std::string size = "1000,600";
  if (s.varied.size() == 1) {
    std::string titles;
    for (const auto& n : names) titles += (titles.empty() ? "" : " ") + n;
    body = fmt::format(
        "set title '{} against {}' noenhanced\nset xlabel '{}' noenhanced\nset ylabel '{}' noenhanced\nset grid\n"
        "set key outside right noenhanced\nset style fill transparent solid 0.2 noborder\nnames = '{}'\n"
        "plot for [i=0:{}] 'sweep.dat' index i using 1:3:4 with filledcurves lc i+1 notitle, "
        "for [i=0:{}] '' index i using 1:2 with linespoints lw 2 lc i+1 title word(names, i+1)",
        s.metric, s.varied[0], s.varied[0], ylabel, titles, names.size() - 1, names.size() - 1);
  } else {
    const std::size_t cols = std::min<std::size_t>(names.size(), 2), rows = (names.size() + 1) / 2;
    size = fmt::format("{},{}", cols * 560, rows * 460 + 40);
    body = fmt::format("set multiplot layout {},{} title '{}' noenhanced\nset xlabel '{}' noenhanced\n"
                       "set ylabel '{}' noenhanced\nset cblabel '{}' noenhanced\nset palette rgb 33,13,10\n{}",
                       rows, cols, s.metric, s.varied[0], s.varied[1], ylabel, s.is_share ? "set cbrange [0:100]\n" : "");
    for (std::size_t k = 0; k < names.size(); ++k)  // one cell per grid point, centred on it
      body += fmt::format("set title '{}' noenhanced\nplot 'sweep.dat' index {} using 1:2:3 with image notitle\n", names[k], k);
    body += "unset multiplot";
  }
  const std::string script =
      fmt::format("reset\nset terminal pngcairo size {} font ',10'\nset output 'sweep.png'\n{}\n"
                  "reset\nset terminal svg size {} dynamic font ',10'\nset output 'sweep.svg'\n{}\nunset output\n",
                  size, body, size, body);
  write_atomically(at + "/sweep.gp", script);
  std::string note;
  if (names.empty()) {  // no point ran to its end (--time): nothing to draw
    note = "No pictures: no point of the sweep ran to its end.";
  } else if (const Plotted plotted = run_gnuplot(at, "sweep.gp"); !plotted) {
    std::error_code ignored;  // what a failed gnuplot began
    for (const char* picture : {"sweep.png", "sweep.svg"}) std::filesystem::remove(at + "/" + picture, ignored);
    note = "No pictures: " + plotted.why + " (sweep.dat and sweep.gp are here).";
  }
  const std::string cells = s.is_share ? "Each cell: the share of trials in which the metric fired, with its 95% interval "
                                        "(none where every trial ran alike: nothing was left to chance)."
                            : s.metric.ends_with(".per_million") ? "Each cell: the count per million operations, with its 95% interval "
                                                                   "(none where every trial ran alike)."
                                                                 : "Each cell: the metric's value over all trials.";
  std::string md = fmt::format("# Sweep of {}: {}\n\n```\n{}```\n\n{}\n\n", s.scenario, s.metric, sweep_table(s), cells);
  md += note.empty() ? "![sweep](sweep.png)\n" : note + "\n";
  write_atomically(at + "/sweep.md", md);
  // report.html: the same on a page that opens from disk, the plot inlined.
  std::string page = fmt::format("<h1>Sweep of {}: {}</h1>\n<pre>{}</pre>\n<p>{}</p>\n", html::escape(s.scenario),
                                 html::escape(s.metric), html::escape(sweep_table(s)), html::escape(cells));
  if (note.empty()) {
    std::ifstream svg(at + "/sweep.svg");
    std::stringstream text;
    text << svg.rdbuf();
    page += "<div class=\"plot\">\n" + html::inline_svg(text.str(), "p0") + "</div>\n";
  } else {
    page += "<p class=\"muted\">" + html::escape(note) + "</p>\n";
  }
  write_atomically(at + "/report.html", html::page("Sweep of " + s.scenario + ": " + s.metric, page));
  if (!s.points_json.empty()) write_atomically(at + "/points.json", s.points_json);
  staged.commit();
  // The progress is this sweep's when it holds these points; another sweep's stays.
  const FolderLock lock(folder, FolderKind::part);
  const std::string partial = progress_folder(folder);
  if (!s.points_json.empty() && read(partial + "/points.json") == s.points_json) {
    std::error_code ignored;
    std::filesystem::remove_all(partial, ignored);
  }
  return note;
}

}  // namespace locksim::reports
