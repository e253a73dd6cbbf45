#include "reports/html.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reports/explain.hpp"

namespace locksim::reports::html {

std::string escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string page(const std::string& title, const std::string& body) {
  return fmt::format(R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>{}</title>
<style>
body {{ font-family: system-ui, -apple-system, "Segoe UI", sans-serif; font-size: 16px; margin: 2em auto; max-width: 1200px; padding: 0 1em; color: #222; }}
h1 {{ margin-bottom: 0.2em; }}
h2 {{ border-bottom: 1px solid #ddd; padding-bottom: 0.2em; margin-top: 2em; }}
pre {{ background: #f6f6f6; padding: 0.8em; font-size: 14px; line-height: 1.35; white-space: pre-wrap; overflow-wrap: anywhere; }}
pre.wide {{ white-space: pre; overflow-x: auto; }}
.lesson {{ background: #fff8e0; border-left: 4px solid #e0a800; padding: 0.6em 1em; }}
.holds {{ color: #1a7f37; }}
.fails {{ color: #c01010; font-weight: bold; }}
.why {{ background: #fdf0f0; border-left: 4px solid #d02020; padding: 0.5em 1em; }}
.plot svg {{ max-width: 100%; height: auto; }}
/* A diagram keeps its size (scaled to the page, six lanes' words would be 6 px): wider than the
   page, it scrolls in its box. */
.diagram {{ overflow-x: auto; border: 1px solid #eee; }}
.diagram svg {{ display: block; }}
.muted {{ color: #666; }}
</style>
</head>
<body>
{}
</body>
</html>
)",
                     escape(title), body);
}

std::string inline_svg(const std::string& svg_file, const std::string& prefix) {
  const auto start = svg_file.find("<svg");
  std::string svg = start == std::string::npos ? std::string() : svg_file.substr(start);
  for (const std::string id : {"gpPt", "gpDot", "gnuplot_canvas", "gpPat"}) {
    std::string out;
    for (std::size_t from = 0;;) {
      const auto hit = svg.find(id, from);
      out += svg.substr(from, hit == std::string::npos ? std::string::npos : hit - from);
      if (hit == std::string::npos) break;
      out += prefix + id;
      from = hit + id.size();
    }
    svg = std::move(out);
  }
  return svg;
}

std::string trial_section(const Focus& f, const std::string& heading, const std::vector<std::string>& fired,
                          const std::map<std::string, std::string>& meanings, const std::string& data_file) {
  std::string out = fmt::format("<h3>{}</h3>\n", escape(heading));
  if (!fired.empty()) out += fmt::format("<p>Checkers that fired: <b>{}</b></p>\n", escape(fmt::format("{}", fmt::join(fired, ", "))));
  for (const auto& paragraph : explain(f.told, fired, meanings)) out += fmt::format("<p class=\"why\">{}</p>\n", escape(paragraph));
  if (!f.whole())
    out += fmt::format("<p class=\"muted\">The story of {}. {}{}</p>\n", escape(f.about), escape(fmt::format("{}", fmt::join(f.left_out, " "))),
                       data_file.empty() ? std::string()
                                         : fmt::format(" The trial's timeline, everything this story was chosen from, as data: "
                                                       "<a href=\"{0}\" download>{0}</a>.",
                                                       escape(data_file)));
  out += "<div class=\"diagram\">\n" + sequence_svg(f.told, heading, 10, 120, f.at_s) + "</div>\n";
  std::string story;
  for (const auto& line : narrate(f.told)) story += escape(line) + "\n";
  if (!story.empty())
    out += fmt::format("<details><summary>{}</summary>\n<pre>{}</pre>\n</details>\n",
                       f.whole() ? "Every event, in order" : "The story's events, in order", story);
  return out;
}

}  // namespace locksim::reports::html
