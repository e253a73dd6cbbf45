// The sequence diagram of a replay (sequence_svg): a lane per client, worker or session, the
// messages between them, each statement with its outcome, and the holds and waits of locks.

#include "reports/explain.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "reports/html.hpp"
#include "reports/timeline_words.hpp"

namespace locksim::reports {

namespace {

// The first `n` bytes of `text`, backed off to a whole UTF-8 character.
std::string prefix(const std::string& text, std::size_t n) {
  n = std::min(n, text.size());
  while (n > 0 && n < text.size() && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n);
}

std::string cut(const std::string& text, std::size_t most) {
  return text.size() <= most ? text : prefix(text, most - 3) + "...";
}

// `text` cut to `most` bytes keeping its end `keep_end` (a statement's outcome) where it can.
std::string cut_keeping(const std::string& text, const std::string& keep_end, std::size_t most) {
  if (text.size() <= most) return text;
  if (keep_end.empty() || !text.ends_with(keep_end) || keep_end.size() + 8 > most) return cut(text, most);
  return prefix(text, most - 3 - keep_end.size()) + "..." + keep_end;
}

// The width of `text` in the diagram's font (11 px sans-serif), from DejaVu Sans's advance
// widths (the widest of the common sans-serif fonts), a little generous.
double text_width(const std::string& text) {
  double em = 0;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c & 0xC0) == 0x80) continue;  // a UTF-8 continuation byte
    if (c >= 0x80) em += 1.0;
    else if (std::strchr("iljI.,:;'|!", c) != nullptr) em += 0.34;
    else if (std::strchr(" tfr()[]{}-/\\", c) != nullptr) em += 0.42;
    else if (std::strchr("mwMW@%", c) != nullptr) em += 1.0;
    else if (std::isupper(c) || std::strchr("<>=+~#&", c) != nullptr) em += 0.84;
    else em += 0.66;
  }
  return em * 11.0 * 1.03;
}

// A line or an arrow's head, in the diagram's coordinates: the words of an event are laid out
// where none runs through them.
struct Segment {
  double x1, y1, x2, y2;
  bool box = false;  // the rectangle between the two corners (an arrow's head), not the line
};

struct Placed {
  std::vector<std::string> lines;  // empty: no room for any words
  int x = 0;
  bool anchor_end = false;  // x is where the words end (to the left of the mark)
  std::size_t shown() const {
    std::size_t n = 0;
    for (const auto& line : lines) n += line.size();
    return n;
  }
};

// An event's words: at most three lines of about a lane's width, the distance between two.
constexpr std::size_t kMostLines = 3;
constexpr int kLine = 13;
constexpr double kLineWidth = 240;
constexpr std::size_t kMostChars = 36 * kMostLines;

// `text` in lines of at most `room` pixels, broken between words (inside a word only where the
// word alone is wider).
std::vector<std::string> wrap(const std::string& text, double room) {
  std::vector<std::string> lines;
  std::string line;
  const auto put = [&](std::string word) {
    while (text_width(word) > room) {  // a word wider than a line: as much as fits, then the rest
      std::size_t n = word.size();
      while (n > 1 && text_width(prefix(word, n)) > room) --n;
      const std::string head = prefix(word, n);
      if (head.empty()) break;
      lines.push_back(head);
      word = word.substr(head.size());
    }
    line = std::move(word);
  };
  std::size_t from = 0;
  while (from <= text.size()) {
    std::size_t to = text.find(' ', from);
    if (to == std::string::npos) to = text.size();
    std::string word = text.substr(from, to - from);
    if (line.empty()) put(std::move(word));
    else if (text_width(line + " " + word) <= room) line += " " + word;
    else {
      lines.push_back(std::move(line));
      put(std::move(word));
    }
    from = to + 1;
  }
  if (!line.empty()) lines.push_back(std::move(line));
  return lines;
}

// The lines `text` takes at a lane's width, up to kMostLines: the room its row is given.
std::size_t lines_needed(const std::string& text, const std::string& keep_end) {
  if (text.empty()) return 1;
  return std::clamp<std::size_t>(wrap(cut_keeping(text, keep_end, kMostChars), kLineWidth).size(), 1, kMostLines);
}

// The words of an event whose mark is at x, from `baseline` (the first line's) down `lines`
// lines: beside the mark where no arrow or head in `drawn` runs through them, wrapped to the
// room found, cut (keeping `keep_end`) where they do not fit. Tried: right of the mark, right
// of each arrow crossing there, left of the mark; the one showing the most words wins.
Placed place_words(const std::string& text, const std::string& keep_end, int x, int offset, int baseline, std::size_t lines,
                   int lane_width, const std::vector<Segment>& drawn) {
  const double top = baseline - 10.5;  // DejaVu Sans at 11 px: ascent 10.2, descent 2.6
  const double bottom = baseline + kLine * static_cast<double>(lines - 1) + 2.8;
  std::vector<std::pair<double, double>> blocked;  // x intervals an arrow crosses at the words' height
  for (const Segment& g : drawn) {
    const double ya = std::min(g.y1, g.y2), yb = std::max(g.y1, g.y2);
    if (yb < top || ya > bottom) continue;
    double xa = std::min(g.x1, g.x2), xb = std::max(g.x1, g.x2);
    if (!g.box && g.y1 != g.y2) {  // the part of the line between the words' top and bottom
      const auto x_at = [&](double y) { return g.x1 + (g.x2 - g.x1) * (y - g.y1) / (g.y2 - g.y1); };
      const double u = x_at(std::max(ya, top)), v = x_at(std::min(yb, bottom));
      xa = std::min(u, v);
      xb = std::max(u, v);
    }
    blocked.emplace_back(xa - 3, xb + 3);
  }
  std::sort(blocked.begin(), blocked.end());
  const std::string natural = cut_keeping(text, keep_end, kMostChars);
  // The most of the words that fits in `lines` lines of `room` pixels.
  const auto fit = [&](double room) -> std::vector<std::string> {
    room = std::min(room, kLineWidth);
    if (auto whole = wrap(natural, room); whole.size() <= lines) return whole;
    for (std::size_t n = natural.size(); n > 4; --n) {
      std::string tried = cut_keeping(text, keep_end, n);
      if (tried.size() > n) tried = cut(text, n);
      if (auto wrapped = wrap(tried, room); wrapped.size() <= lines)
        return tried.size() <= 4 ? std::vector<std::string>{} : wrapped;
    }
    return {};
  };
  const double widest = text_width(natural) + 1;
  const auto free_from = [&](double start) {  // room to the right of `start`; < 0: start is blocked
    double room = widest;
    for (const auto& [a, b] : blocked) {
      if (a <= start && start <= b) return -1.0;
      if (a > start) room = std::min(room, a - start);
    }
    return room;
  };
  Placed best;
  const auto consider = [&](std::vector<std::string> words, int at, bool end) {
    Placed p{std::move(words), at, end};
    if (p.shown() > best.shown()) best = std::move(p);
  };
  std::vector<double> starts{double(x + offset)};
  for (const auto& [a, b] : blocked)
    if (b > x + offset && b < x + lane_width - 40) starts.push_back(std::ceil(b));
  for (const double start : starts)
    if (const double room = free_from(start); room > 0) consider(fit(room), static_cast<int>(start), false);
  // Left of the mark: from x - 7 leftwards to the nearest arrow, within the lane.
  const double end = x - 7;
  double room = lane_width - 20;
  bool open = true;
  for (const auto& [a, b] : blocked) {
    if (a <= end && end <= b) open = false;
    if (b < end) room = std::min(room, end - b);
  }
  if (open) consider(fit(room), static_cast<int>(end), true);
  return best;
}

// One row of the diagram: an event at its time, in its lane.
struct Row {
  double at_s = 0;
  std::string lane;
  std::string text;    // shown (cut to the lane's width)
  std::string full;    // the tooltip
  std::string colour;  // of its mark
  std::vector<std::string> arrows_to{};  // lanes it waits behind, or whose lock its DEL removed
  // A message's end: `link` numbers the message (a request or a reply), drawn as an arrow from
  // the row that sends it to the row that receives it.
  std::size_t link = kNoLink;
  bool receives = false;
  std::string to_lane{};  // set where a message's sending and receiving fell on one row
  bool round_trip = false;  // and its reply came back on it too
  std::string keep_end{};   // the words a cut keeps at the end (a statement's outcome)
  bool removes = false;     // a DEL that removed the lock of the lanes in arrows_to (else: it waited behind them)
  static constexpr std::size_t kNoLink = ~std::size_t{0};
};

// A message drawn as an arrow: from the sender's lane to the receiver's, dashed for a reply.
struct Link {
  std::string from, to;  // lanes
  std::string colour;
  bool reply = false;
  bool lost = false;  // never received: lost, held past the trial, or never taken up
  std::string title;  // the arrow's tooltip
};

}  // namespace

std::string sequence_svg(const Timeline& t, const std::string& title, std::size_t max_lanes, std::size_t max_rows, double focus_s) {
  // The lanes involved in what went wrong come first: inserters of duplicated keys, sessions
  // on a deadlock cycle or waiting, holders whose lease ran out; then the rest in order of
  // first appearance.
  std::vector<std::string> order;
  std::map<std::string, int> weight;
  std::map<std::string, std::string> node_of_lane;
  const auto see = [&](const Timeline::Who& who, int w) {
    if (!weight.count(who.lane)) order.push_back(who.lane);
    weight[who.lane] += w;
    node_of_lane.try_emplace(who.lane, who.node);
  };
  const auto node_of = [&](const std::string& lane) {
    const auto it = node_of_lane.find(lane);
    return it == node_of_lane.end() ? lane : it->second;
  };
  for (const auto& m : t.inserts) see(m.who, 100);
  for (const auto& st : t.statements) {
    see(st.who, st.cycle.empty() && st.waits.empty() ? 1 : 50);
    for (const auto& w : st.waited_for) see(w, 20);
  }
  for (const auto& b : t.bars) {
    see(b.holder, lost_at(b) >= 0 ? 60 : 2);
    if (!b.deleted_by.empty()) see(b.deleted_by, 60);
  }
  for (const auto& b : t.bands) {
    bool any = false;
    for (const auto& lane : order) any = any || node_of(lane) == b.node;
    if (!any) see({b.node, b.node, b.node}, 10);
  }
  const std::vector<Folded> messages = fold_messages(t);
  std::set<std::string> services;  // lanes that only answer calls: Redis nodes, ZooKeeper, etcd
  for (const auto& f : messages) {
    const Timeline::Message& m = *f.message;
    see(m.from, is_attempt(m) ? 40 : 1);
    see(m.to, is_attempt(m) ? 1 : 30);
    if (!is_attempt(m)) services.insert(m.to.lane);
  }
  for (const auto& f : messages) services.erase(f.message->from.lane);
  std::vector<std::string> lanes = order;
  std::stable_sort(lanes.begin(), lanes.end(), [&](const auto& a, const auto& b) { return weight[a] > weight[b]; });
  const std::size_t folded_lanes = lanes.size() > max_lanes ? lanes.size() - max_lanes : 0;
  lanes.resize(std::min(lanes.size(), max_lanes));
  // Left to right as calls go: clients, then the workers and sessions, then the services they call.
  const auto place = [&](const std::string& lane) { return lane.starts_with("client ") ? 0 : services.count(lane) ? 2 : 1; };
  std::stable_sort(lanes.begin(), lanes.end(), [&](const auto& a, const auto& b) { return place(a) < place(b); });
  std::map<std::string, std::size_t> column;
  for (std::size_t i = 0; i < lanes.size(); ++i) column[lanes[i]] = i;

  std::vector<Row> rows;
  struct Busy {  // a statement under way in a lane, between two rows
    std::string lane;
    double from_s, to_s;
    bool waited;
    std::string title;
  };
  std::vector<Busy> busy;
  for (const auto& b : t.bars) {
    const std::string& lock = b.lock;
    const std::string& lane = b.holder.lane;
    rows.push_back({b.from_s, lane, "acquired " + lock, row_of(b) + " acquired", "#3060c0"});
    if (!b.deleted_by.empty()) {
      // The wrong unlock: the DEL in the deleter's lane, pointing at the holder it robbed.
      const std::string full =
          fmt::format("{}'s {} removed {}'s lock on {} (a wrong unlock)", b.deleted_by.lane, wrong_unlock_words(b), lane, lock);
      Row del{lost_at(b), b.deleted_by.lane, fmt::format("WRONG UNLOCK: {} {}", wrong_unlock_words(b), lock), full, "#d02020", {lane}};
      del.removes = true;
      rows.push_back(std::move(del));
      rows.push_back({lost_at(b), lane, "lock deleted by " + b.deleted_by.lane, full, "#d02020"});
    } else if (lost_at(b) >= 0) {
      const std::string what = b.service == "zookeeper" ? "session expired"
                               : b.service == "etcd"    ? "lease expired"
                               : b.service == "consul"  ? "session invalidated"
                                                        : "lease ran out";
      rows.push_back({lost_at(b), lane, what + ": " + lock, row_of(b) + ": " + lost_words(b), "#d08020"});
    }
    if (!b.renewals_s.empty())
      rows.push_back({b.renewals_s.front(), lane, fmt::format("renewed {} ({}x)", lock, b.renewals_s.size()),
                      fmt::format("{}: the lease renewed {} times", row_of(b), b.renewals_s.size()), "#3060c0"});
    const bool own_wrong_unlock = !b.removed.empty();
    const std::string ended = ended_words(b);
    rows.push_back({b.to_s, lane, own_wrong_unlock || ended.empty() || ended == "released" ? "let go of " + lock : "let go: " + ended,
                    row_of(b) + ": no longer believes it holds it" + (ended.empty() ? "" : " (" + ended + ")"), "#3060c0"});
  }
  for (const auto& st : t.statements) {
    const std::string outcome = outcome_words(st);
    std::string full = st.sql + " -> " + outcome;
    if (!st.undone.empty()) full += " (rolled back the " + undone_words(st) + ")";
    for (const auto& w : st.waits) full += "; waited for " + wait_words(w);
    if (!st.cycle.empty()) full += "; deadlock cycle: " + fmt::format("{}", fmt::join(texts_of(st.cycle), " -> "));
    const std::string colour = failed(st) ? "#d02020" : "#555555";
    // A statement that took a time the diagram shows (a lock wait, a slow write) is drawn from
    // its issue to its answer, with its outcome on the answer's row; a quick one is one row.
    const bool spans = st.to_s - st.from_s >= 0.0005;
    Row r{st.from_s, st.who.lane, spans ? st.sql : st.sql + " -> " + outcome, full, spans ? "#555555" : colour};
    r.keep_end = spans ? "" : " -> " + outcome;
    for (const auto& w : st.waited_for) r.arrows_to.push_back(w.lane);
    rows.push_back(std::move(r));
    if (spans) {
      Row answer{st.to_s, st.who.lane, "-> " + outcome, full, colour};
      answer.keep_end = answer.text;
      rows.push_back(std::move(answer));
      busy.push_back({st.who.lane, st.from_s, st.to_s, !st.waits.empty(), full});
    }
  }
  for (const auto& m : t.inserts)
    rows.push_back(m.first ? Row{m.at_s, m.who.lane, "INSERT: " + label(m), label(m) + ": the key's first row", "#208040"}
                           : Row{m.at_s, m.who.lane, "DUPLICATE: " + label(m), label(m) + ": a duplicated key", "#d02020"});
  // Messages: a client's attempt and its answer, a call to a lock service and its reply; a
  // client's timeout as a band from the attempt to when it gave up.
  std::vector<Link> links;
  struct Waiting {  // a caller waiting in vain, between two times
    std::string lane;
    double from_s, to_s;
    std::string title;
  };
  std::vector<Waiting> waits;
  for (const auto& f : messages) {
    const Timeline::Message& m = *f.message;
    const std::string times = f.times > 1 ? fmt::format(" (x{})", f.times) : "";
    const std::size_t request = links.size();
    const double received = is_attempt(m) && m.taken_s >= 0 ? m.taken_s : m.arrived_s;
    links.push_back({m.from.lane, m.to.lane, "#5070a0", false, received < 0, m.from.lane + " -> " + m.to.lane + ": " + m.request + times});
    if (!is_attempt(m) && answered_in_time(m) && m.returned_s - m.sent_s < 0.001) {
      // A call answered within a millisecond: one row, there and back.
      const std::string reply = reply_words(m).substr(0, reply_words(m).find(':')) + times;
      Row r{m.sent_s, m.from.lane, m.request + " -> " + reply,
            fmt::format("{} -> {}: {} -> {}{}", m.from.lane, m.to.lane, m.request, reply_words(m), times), "#5070a0", {}, request};
      r.to_lane = m.to.lane;
      r.round_trip = true;
      r.keep_end = " -> " + reply;
      rows.push_back(std::move(r));
      continue;
    }
    const std::string short_request = is_attempt(m) ? m.request.substr(0, m.request.find(" (")) : m.request;
    rows.push_back({m.sent_s, m.from.lane, (is_attempt(m) ? "sends " : "") + short_request + times,
                    fmt::format("{} sends {} to {}{}", m.from.lane, m.request, m.to.lane, times), "#5070a0", {}, request});
    if (received >= 0) {
      const bool taken = is_attempt(m) && m.taken_s >= 0;
      rows.push_back({received, m.to.lane, !is_attempt(m) ? "" : taken ? "takes up " + short_request : "receives " + short_request,
                      fmt::format("{} {} {} ({:.3f} s after it was sent){}", m.to.lane, taken ? "takes up" : "receives", m.request,
                                  received - m.sent_s, is_attempt(m) && !taken ? "; no worker takes it up" : ""),
                      "#5070a0", {}, request, true});
    }
    if (m.replied_s >= 0) {
      const std::size_t reply = links.size();
      const bool late = !answered_in_time(m);
      links.push_back({m.to.lane, m.from.lane, late ? "#d08020" : "#50a070", true, m.returned_s < 0, m.to.lane + " -> " + m.from.lane + ": " + m.reply});
      rows.push_back({m.replied_s, m.to.lane, is_attempt(m) ? "answers " + m.reply : "", fmt::format("{} answers {}: {}", m.to.lane, m.request, m.reply),
                      "#50a070", {}, reply});
      if (m.returned_s >= 0)
        rows.push_back({m.returned_s, m.from.lane, late ? "too late, unread: " + m.reply : "answer: " + reply_words(m),
                        fmt::format("{} gets the answer to {}: {}{}", m.from.lane, m.request, m.reply, late ? " (after it gave up: unread)" : ""),
                        late ? "#d08020" : "#50a070", {}, reply, true});
    }
    if (m.gave_up_s >= 0) {
      const std::string title = fmt::format("{}: no answer to {} in {:.3f} s", m.from.lane, m.request, m.gave_up_s - m.sent_s);
      rows.push_back({m.gave_up_s, m.from.lane, fmt::format("timed out after {:.3f} s", m.gave_up_s - m.sent_s), title, "#d08020"});
      waits.push_back({m.from.lane, m.sent_s, m.gave_up_s, title});
    }
  }
  struct Span {  // a band across a node's lanes, between two rows
    std::string node, kind;
    double from_s, to_s;
  };
  std::vector<Span> spans;
  for (const auto& b : t.bands) {
    std::string lane = b.node;
    for (const auto& l : lanes)
      if (node_of(l) == b.node) {
        lane = l;
        break;
      }
    rows.push_back({b.from_s, lane, b.node + (b.kind == "paused" ? " paused" : " crashed"), band_words(b), "#7070d0"});
    rows.push_back({b.to_s, lane, b.node + (b.kind == "paused" ? " resumes" : " restarts"), band_words(b), "#7070d0"});
    spans.push_back({b.node, b.kind, b.from_s, b.to_s});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.at_s < b.at_s; });
  // The rows in the lanes drawn; past max_rows, the window around the finding: a third of the
  // rows before it, the rest after.
  std::size_t folded_rows = 0;
  std::vector<Row> in_lanes;
  for (auto& r : rows) {
    if (!column.count(r.lane)) {
      ++folded_rows;
      continue;
    }
    in_lanes.push_back(std::move(r));
  }
  std::size_t earlier = 0;
  if (in_lanes.size() > max_rows && focus_s >= 0) {
    std::size_t at = 0;
    while (at < in_lanes.size() && in_lanes[at].at_s < focus_s) ++at;
    earlier = at > max_rows / 3 ? std::min(at - max_rows / 3, in_lanes.size() - max_rows) : 0;
  }
  const std::size_t end_row = std::min(in_lanes.size(), earlier + max_rows);
  folded_rows += in_lanes.size() - end_row;
  std::vector<Row> shown(std::make_move_iterator(in_lanes.begin() + static_cast<std::ptrdiff_t>(earlier)),
                         std::make_move_iterator(in_lanes.begin() + static_cast<std::ptrdiff_t>(end_row)));

  // A message received as it was sent (to the millisecond shown), with nothing shown between,
  // is one row with a level arrow.
  {
    std::vector<Row> merged;
    for (std::size_t i = 0; i < shown.size(); ++i) {
      Row r = std::move(shown[i]);
      if (r.link != Row::kNoLink && !r.receives && i + 1 < shown.size() && shown[i + 1].link == r.link && shown[i + 1].receives &&
          shown[i + 1].at_s - r.at_s < 0.0005) {
        r.to_lane = shown[i + 1].lane;
        if (r.text.empty()) r.text = shown[i + 1].text;
        r.full += "; " + shown[i + 1].full;
        ++i;
      }
      merged.push_back(std::move(r));
    }
    shown = std::move(merged);
  }

  constexpr int kLeft = 90, kLane = 230, kRow = 24, kTop = 58, kBreak = 16;
  // Words above a row whose arrow leaves level from it, below the mark's centre otherwise.
  const auto words_above = [](const Row& r) { return (r.link != Row::kNoLink && !r.receives) || !r.arrows_to.empty(); };
  // Rows are events, not time: where a second or more passes between two rows, a break says
  // how long (a 30 s pause is a break, not 30 s of page). A row whose words wrap is taller.
  constexpr double kBreakAfterS = 1.0;
  std::vector<int> ys, tops, bottoms;  // each row's mark, and the top and bottom of its room
  std::vector<std::size_t> lines;      // the lines its words are given
  std::vector<std::size_t> breaks;     // rows with a break before them
  int rows_end = kTop;
  for (std::size_t i = 0; i < shown.size(); ++i) {
    if (i > 0 && shown[i].at_s - shown[i - 1].at_s >= kBreakAfterS) {
      breaks.push_back(i);
      rows_end += kBreak;
    }
    lines.push_back(lines_needed(shown[i].text, shown[i].keep_end));
    const int extra = kLine * static_cast<int>(lines.back() - 1);
    tops.push_back(rows_end);
    ys.push_back(rows_end + (words_above(shown[i]) ? extra : 0) + kRow / 2);
    rows_end += kRow + extra;
    bottoms.push_back(rows_end);
  }
  std::string folded;
  if (folded_lanes > 0) folded += fmt::format("{} more lane{} folded", folded_lanes, folded_lanes == 1 ? "" : "s");
  if (folded_rows > 0) folded += fmt::format("{}{} event{} not shown", folded.empty() ? "" : "; ", folded_rows, folded_rows == 1 ? "" : "s");
  if (earlier > 0)
    folded += fmt::format("{}{} earlier event{} not shown: the diagram starts near the finding", folded.empty() ? "" : "; ", earlier,
                          earlier == 1 ? "" : "s");
  if (t.calls_left_out > 0)
    folded += fmt::format("{}{} call{} not kept", folded.empty() ? "" : "; ", t.calls_left_out, t.calls_left_out == 1 ? "" : "s");
  if (t.bands_left_out > 0)
    folded += fmt::format("{}{} shorter pauses or crashes not kept", folded.empty() ? "" : "; ", t.bands_left_out);
  if (shown.empty()) folded = "nothing to draw: no lock holds, statements, calls, pauses or duplicate inserts were recorded";
  // The last lane's words run past its column: room for them at the right, and for the note
  // below the diagram.
  const int width = std::max(kLeft + kLane * static_cast<int>(std::max<std::size_t>(1, lanes.size())) + 140,
                             16 + static_cast<int>(std::ceil(text_width(folded))));
  const int height = rows_end + kRow + 30;
  const auto x_of = [&](const std::string& lane) { return kLeft + kLane * static_cast<int>(column.at(lane)) + kLane / 2; };
  const auto y_of = [&](std::size_t row) { return row < ys.size() ? ys[row] : kTop + kRow / 2; };
  // The first and last rows at or after / before a time, for spans.
  const auto first_row_at = [&](double s) {
    std::size_t i = 0;
    while (i < shown.size() && shown[i].at_s < s) ++i;
    return i;
  };
  const auto last_row_at = [&](double s) {
    std::size_t i = shown.size();
    while (i > 0 && shown[i - 1].at_s > s) --i;
    return i == 0 ? std::size_t{0} : i - 1;
  };

  // Laid out in 11 px words, shown 14/11 as large: words of 14 px, which a projector shows.
  const auto opening = [&](int h) {
    return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"sequence\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
                       "font-family=\"sans-serif\" font-size=\"11\">\n",
                       (width * 14 + 10) / 11, (h * 14 + 10) / 11, width, h);
  };
  std::string svg = opening(height) +
                    fmt::format("<text x=\"8\" y=\"18\" font-size=\"14\" font-weight=\"bold\">{}</text>\n", html::escape(title));
  const std::size_t body_from = svg.size();  // the drawing, below the title
  // Breaks: a grey strip across the lanes, with the time that passed.
  for (const std::size_t i : breaks) {
    const int y = tops[i] - kBreak;
    svg += fmt::format("<rect class=\"break\" x=\"2\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#eeeeee\"><title>{:.3f} s with "
                       "nothing drawn here</title></rect>\n<text x=\"6\" y=\"{}\" fill=\"#666666\" font-size=\"9\">+{:.3f} s</text>\n",
                       y + 3, width - 4, kBreak - 2, shown[i].at_s - shown[i - 1].at_s, y + kBreak - 3,
                       shown[i].at_s - shown[i - 1].at_s);
  }
  // Only what overlaps the rows drawn is drawn: a hold outside them would be a sliver.
  const auto outside = [&](double from_s, double to_s) {
    return shown.empty() || to_s < shown.front().at_s || from_s > shown.back().at_s;
  };
  // Statements under way: a light band in the lane from issue to answer, orange where it waited.
  for (const auto& b : busy) {
    if (!column.count(b.lane) || outside(b.from_s, b.to_s)) continue;
    const int y0 = y_of(first_row_at(b.from_s)), y1 = y_of(last_row_at(b.to_s));
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"20\" height=\"{}\" fill=\"{}\" fill-opacity=\"0.3\"><title>{}</title></rect>\n",
                       x_of(b.lane) - 10, y0, std::max(2, y1 - y0), b.waited ? "#d08020" : "#999999", html::escape(b.title));
  }
  // Holds: a span in the holder's lane from its acquire to its end.
  for (const auto& b : t.bars) {
    const std::string lane = b.holder.lane;
    if (!column.count(lane) || outside(b.from_s, b.to_s)) continue;
    const int x = x_of(lane);
    const int y0 = y_of(first_row_at(b.from_s)), y1 = y_of(last_row_at(b.to_s));
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"8\" height=\"{}\" fill=\"#3060c0\" fill-opacity=\"0.35\"><title>{}</title></rect>\n",
                       x - 4, y0, std::max(2, y1 - y0), html::escape(row_of(b)));
    if (lost_at(b) >= 0) {
      const int yl = y_of(first_row_at(lost_at(b)));
      svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"8\" height=\"{}\" fill=\"#d08020\" fill-opacity=\"0.6\"><title>{}: held after "
                         "{}</title></rect>\n",
                         x - 4, yl, std::max(2, y1 - yl), html::escape(row_of(b)),
                         b.deleted_by.empty() ? "its lease ran out" : html::escape("its lock was deleted by " + b.deleted_by.lane));
    }
  }
  // Pauses and crashes: a band across the node's lanes.
  for (const auto& s : spans) {
    if (outside(s.from_s, s.to_s)) continue;
    const std::size_t first = first_row_at(s.from_s), last = last_row_at(s.to_s);
    const int y0 = first < tops.size() ? tops[first] : kTop, y1 = last < bottoms.size() ? bottoms[last] : kTop + kRow;
    for (const auto& lane : lanes)
      if (node_of(lane) == s.node || lane == s.node)
        svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" fill-opacity=\"0.35\"><title>{} {}</title></rect>\n",
                           x_of(lane) - kLane / 2 + 2, y0, kLane - 4, std::max(2, y1 - y0), s.kind == "down" ? "#f4a6a6" : "#c9c9f4",
                           html::escape(s.node), s.kind);
  }
  // A client waiting for an answer that did not come in time: a band in its lane.
  for (const auto& w : waits) {
    if (!column.count(w.lane) || outside(w.from_s, w.to_s)) continue;
    const int y0 = y_of(first_row_at(w.from_s)), y1 = y_of(last_row_at(w.to_s));
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f6d9a8\" fill-opacity=\"0.5\"><title>{}</title></rect>\n",
                       x_of(w.lane) - kLane / 2 + 10, y0, kLane - 20, std::max(2, y1 - y0), html::escape(w.title));
  }
  // Every arrow's line and head, kept to lay the words out around them.
  std::vector<Segment> drawn;
  // Messages: an arrow from the row that sends to the row that receives (a level one where they
  // share a row); one whose receiving is not shown stops short, crossed where it never arrived.
  {
    std::map<std::size_t, std::size_t> sent_at, received_at;
    for (std::size_t i = 0; i < shown.size(); ++i) {
      if (shown[i].link == Row::kNoLink) continue;
      if (shown[i].receives)
        received_at[shown[i].link] = i;
      else
        sent_at[shown[i].link] = i;
    }
    for (const auto& [link, from_row] : sent_at) {
      const Link& l = links[link];
      if (!column.count(l.to) || l.to == l.from) continue;
      const int x1 = x_of(l.from), y1 = y_of(from_row), x2 = x_of(l.to);
      int y2 = y1;
      bool arrives = true;
      if (shown[from_row].to_lane.empty()) {
        const auto it = received_at.find(link);
        if (it != received_at.end())
          y2 = y_of(it->second);
        else
          arrives = false;
      }
      const int dir = x2 > x1 ? 1 : -1;
      const int xe = arrives ? x2 - dir * 5 : x1 + dir * (kLane / 3);
      const int ye = arrives ? y2 : y1 + kRow / 3;
      svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1.2\"{}><title>{}</title></line>\n", x1,
                         y1, xe, ye, l.colour, l.reply ? " stroke-dasharray=\"5 3\"" : "", html::escape(l.title));
      drawn.push_back({double(x1), double(y1), double(xe), double(ye)});
      if (!arrives && l.lost)  // crossed where it never arrived; one received past the rows shown just stops short
        svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"{}\" text-anchor=\"middle\"><title>not received</title>x</text>\n", xe,
                           y1 + kRow / 3 + 4, l.colour);
      else if (arrives) {
        svg += fmt::format("<polygon points=\"{},{} {},{} {},{}\" fill=\"{}\"/>\n", x2 - dir * 4, y2, x2 - dir * 11, y2 - 4, x2 - dir * 11,
                           y2 + 4, l.colour);
        drawn.push_back({double(x2 - dir * 11), double(y2 - 4), double(x2 - dir * 4), double(y2 + 4), true});
      }
      if (shown[from_row].round_trip) {  // the reply, dashed, back on the same row just below
        const int yb = y1 + 4;
        svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#50a070\" stroke-width=\"1.2\" stroke-dasharray=\"5 3\"/>"
                           "<polygon points=\"{},{} {},{} {},{}\" fill=\"#50a070\"/>\n",
                           x2, yb, x1 + dir * 5, yb, x1 + dir * 4, yb, x1 + dir * 11, yb - 4, x1 + dir * 11, yb + 4);
        drawn.push_back({double(x2), double(yb), double(x1 + dir * 4), double(yb + 4), true});
      }
    }
  }
  // Lanes: a head and a line.
  // The sessions of an isolation anomaly's cycle: their heads in red, with the anomaly as their title.
  std::map<std::string, std::string> in_cycle;
  for (const auto& a : t.anomalies)
    for (const auto& lane : a.lanes) in_cycle.emplace(lane, a.text);
  std::string heads;
  for (const auto& lane : lanes) {
    const auto cycle = in_cycle.find(lane);
    heads += cycle == in_cycle.end()
                 ? fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-weight=\"bold\">{}</text>\n", x_of(lane), kTop - 12,
                               html::escape(cut(lane, 34)))
                 : fmt::format("<text class=\"anomaly\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-weight=\"bold\" fill=\"#c03030\">"
                               "<title>{}</title>{}</text>\n",
                               x_of(lane), kTop - 12, html::escape(cycle->second), html::escape(cut(lane, 34)));
  }
  svg += heads;
  for (const auto& lane : lanes) {
    const int x = x_of(lane);
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\" stroke-dasharray=\"4 3\"/>\n", x, kTop - 6,
                       height - 30, in_cycle.count(lane) ? "#c03030" : "#bbbbbb");
  }
  // Arrows to whom a row waited behind, or whose lock its DEL removed: level, on the row.
  std::string wait_arrows;
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const Row& r = shown[i];
    const int x = x_of(r.lane), y = y_of(i);
    for (const auto& to : r.arrows_to) {
      if (!column.count(to) || to == r.lane) continue;
      const int x2 = x_of(to);
      wait_arrows += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#d08020\" stroke-width=\"1.5\"/>"
                                 "<polygon points=\"{},{} {},{} {},{}\" fill=\"#d08020\"><title>{} {}</title></polygon>\n",
                                 x, y, x2, y, x2, y, x2 + (x2 > x ? -7 : 7), y - 4, x2 + (x2 > x ? -7 : 7), y + 4,
                                 r.removes ? "removed the lock of" : "waited behind", html::escape(to));
      drawn.push_back({double(x), double(y), double(x2), double(y)});
      drawn.push_back({double(x2 + (x2 > x ? -7 : 7)), double(y - 4), double(x2), double(y + 4), true});
    }
  }
  svg += wait_arrows;
  // Events: a time at the left, a mark, and its words beside it where no arrow runs through
  // them (cut to the room there is; the whole on hover and in the event list).
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const Row& r = shown[i];
    const int x = x_of(r.lane), y = y_of(i);
    svg += fmt::format("<text x=\"6\" y=\"{}\" fill=\"#666666\">{:.3f} s</text>\n", y + 4, r.at_s);
    svg += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\"/>\n", x, y, r.text.empty() ? 2 : 4, r.colour);
    if (r.text.empty()) {  // a mark without words: what it is on hover
      svg += fmt::format("<text x=\"{}\" y=\"{}\"><title>{}</title></text>\n", x + 7, y + 4, html::escape(r.full));
      continue;
    }
    // Above: the last line clear of the arrow's head; below: the first under the mark's centre.
    const int extra = kLine * static_cast<int>(lines[i] - 1);
    const bool above = words_above(r);
    const int baseline = above ? y - 7 - extra : y + 4;
    // A message arriving from the right ends at the mark, over where its words begin: they move on.
    const bool from_right = r.receives && column.count(links[r.link].from) && column.at(links[r.link].from) > column.at(r.lane);
    const Placed p = place_words(r.text, r.keep_end, x, from_right ? 14 : 7, baseline, lines[i], kLane, drawn);
    if (p.lines.empty()) {  // no room for any words beside it: what it is on hover
      svg += fmt::format("<text x=\"{}\" y=\"{}\"><title>{}</title></text>\n", x + 7, baseline, html::escape(r.full));
      continue;
    }
    // Fewer lines than given above the mark: they keep to the arrow, the room above stays empty.
    const int first = baseline + (above ? kLine * static_cast<int>(lines[i] - p.lines.size()) : 0);
    std::string words = html::escape(p.lines.front());
    for (std::size_t l = 1; l < p.lines.size(); ++l)
      words += fmt::format("<tspan x=\"{}\" dy=\"{}\">{}</tspan>", p.x, kLine, html::escape(p.lines[l]));
    svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"{}\"{}><title>{}</title>{}</text>\n", p.x, first,
                       r.colour == "#d02020" ? "#b01010" : "#222222", p.anchor_end ? " text-anchor=\"end\"" : "", html::escape(r.full),
                       words);
  }
  if (!folded.empty()) svg += fmt::format("<text x=\"8\" y=\"{}\" fill=\"#666666\">{}</text>\n", height - 10, html::escape(folded));
  // A long diagram in parts a screen can show, each with the lanes' names: cut before a break
  // where one falls in the last third of a part, else after kRowsPerPart rows. The drawing is
  // made once; each part shows its window of it.
  constexpr std::size_t kRowsPerPart = 40;
  if (shown.size() <= kRowsPerPart) return svg + "</svg>\n";
  std::vector<std::size_t> cuts{0};  // the first row of each part
  while (shown.size() - cuts.back() > kRowsPerPart) {
    std::size_t at = cuts.back() + kRowsPerPart;
    for (std::size_t i = at; i > cuts.back() + kRowsPerPart * 2 / 3; --i)
      if (std::binary_search(breaks.begin(), breaks.end(), i)) {
        at = i;
        break;
      }
    cuts.push_back(at);
  }
  // Words above a part's first mark reach a few pixels into the row before: each window starts
  // that much higher.
  constexpr int kAbove = 5;
  const auto cut_y = [&](std::size_t row) {
    return (row == 0 ? kTop : tops[row] - (std::binary_search(breaks.begin(), breaks.end(), row) ? kBreak : 0)) - kAbove;
  };
  const std::string drawing = svg.substr(body_from);
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a of the drawing: one id per drawing on a page
  for (const char c : title + drawing) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  const std::string id = fmt::format("sequence-{:016x}", hash);
  std::string out;
  for (std::size_t k = 0; k < cuts.size(); ++k) {
    const int from = cut_y(cuts[k]), to = k + 1 < cuts.size() ? cut_y(cuts[k + 1]) : height;
    const int part_height = kTop - kAbove + to - from;
    out += opening(part_height) + fmt::format("<text x=\"8\" y=\"18\" font-size=\"14\" font-weight=\"bold\">{} (part {} of {})</text>\n{}",
                                              html::escape(title), k + 1, cuts.size(), heads);
    // The first part draws it, the others use it.
    out += fmt::format("<svg x=\"0\" y=\"{}\" width=\"{}\" height=\"{}\" viewBox=\"0 {} {} {}\">{}</svg>\n</svg>\n", kTop - kAbove, width,
                       to - from, from, width, to - from,
                       k == 0 ? fmt::format("<g id=\"{}\">\n{}</g>", id, drawing) : fmt::format("<use href=\"#{}\"/>", id));
  }
  return out;
}

}  // namespace locksim::reports
