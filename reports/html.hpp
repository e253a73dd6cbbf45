#pragma once
// report.html: one self-contained page beside each report.md (run, sweep, replay). Inline CSS
// and SVG only: no script, no font, no image or style from elsewhere, so it opens from disk
// and reads the same offline. The plots are gnuplot's SVG, inlined; a trial is told and drawn
// from its Timeline (reports/explain.hpp).

#include <map>
#include <string>
#include <vector>

#include "reports/focus.hpp"
#include "reports/results.hpp"

namespace locksim::reports::html {

/// `text` as HTML text (or an attribute's value).
std::string escape(const std::string& text);

/// A whole page: `title`, and `body` (HTML) under the page's own style.
std::string page(const std::string& title, const std::string& body);

/// A gnuplot SVG file's text, ready to sit inside a page: its XML prolog dropped, its ids
/// prefixed with `prefix` so that several plots on one page do not share them.
std::string inline_svg(const std::string& svg_file, const std::string& prefix);

/// A trial explained through its story (reports/focus.hpp: a long trial told around its
/// finding): why each violation happened, its sequence diagram, and its events in order, under
/// `heading`. A story that leaves things out points to `data_file` (the trial's timeline as
/// JSON, beside the page), when one is named.
std::string trial_section(const Focus& story, const std::string& heading, const std::vector<std::string>& fired,
                          const std::map<std::string, std::string>& meanings = {}, const std::string& data_file = {});

}  // namespace locksim::reports::html
