#pragma once
// The report folder of a run (reports/out/<scenario>/): results.json, report.md with the
// comparison table, the lesson and the plots, report.html (the same on one self-contained page,
// with each failing strategy's first violating trial told and drawn), and the plots themselves: gnuplot data and
// scripts, rendered to PNG (pngcairo) and SVG when gnuplot is installed. The folder is
// written aside and swapped in whole (reports/report_folder.hpp): an interrupted run leaves
// the last report as it was, and a narrower run leaves no files of a wider one.

#include <map>
#include <string>
#include <vector>

#include "reports/gnuplot.hpp"
#include "reports/results.hpp"

namespace locksim::reports {

struct ReportFiles {
  std::string folder;
  std::vector<std::string> written;  // file names within the folder
  bool plotted = false;              // gnuplot ran
  std::string note;                  // why there are no pictures, if there are none
};

/// Replaces the files of `folder` with the report of `results`; its subfolders (other
/// commands' reports) stay.
ReportFiles write_report(const RunResults& results, const std::string& folder);

/// Replaces `folder`, a replay's (<scenario folder>/replay), with one trial's timeline:
/// timeline-<strategy>.png and .svg, with its .dat and .gp, and report.html: the trial told
/// (`fired`: the checkers that fired), its sequence diagram and its timeline, under `heading`.
/// `claim`: the verdict of the search that found the trial, if one did (reports/search.hpp).
/// Returns the picture's path, or a note saying why there is none.
std::string write_replay_report(const Timeline& timeline, const std::string& strategy, const std::string& folder,
                                const std::vector<std::string>& fired = {}, const std::string& heading = "",
                                const std::map<std::string, std::string>& meanings = {}, const std::string& claim = "",
                                const std::string& property = "");


}  // namespace locksim::reports
