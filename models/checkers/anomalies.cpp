// Isolation anomalies found from the history alone, as Jepsen's Elle finds them, but exactly:
// the database's history (models/db/history.hpp) says which version every read saw, so the
// dependency graph of the committed transactions needs no inference. Its edges (Adya's):
// - ww: a transaction wrote the next version of a row after another's;
// - wr: a transaction read a version another wrote (a row a statement only looked at and did not
//   match: where that version changed whether it matches);
// - rw, an anti-dependency: a transaction read a version of a row and another wrote the next one
//   (item), or wrote a later one that changes whether a row matches the WHERE it read with, a row
//   it did not see included (predicate).
// Each cycle is counted once, as its most specific class: G0 (ww edges alone), G1c (ww and wr),
// G-single (exactly one rw edge), G2-item (more than one, all of rows read), G2 (more than one,
// a WHERE's among them); with G1a (a committed transaction read a version that was rolled back)
// and G1b (it read a version its writer changed again before it committed). docs/anomalies.md.

#include "models/checkers/anomalies.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <tuple>

namespace models::checkers {
namespace {

using db::History;
using Txn = History::Txn;

enum Kind : unsigned { kWw = 1, kWr = 2, kRwItem = 4, kRwPredicate = 8 };
constexpr unsigned kRw = kRwItem | kRwPredicate;

// The work a history's graph may take (rows a WHERE is weighed on, reachability steps): past
// it a trial is counted as anomalies.unchecked rather than run for ever.
constexpr std::uint64_t kMostSteps = 20'000'000;

struct Metric {
  const char* name;
  const char* meaning;
};
constexpr Metric kMetrics[] = {
    {"anomalies.g0", "write cycles (G0): committed transactions each of which overwrote a row another of them wrote, in a cycle"},
    {"anomalies.g1a", "aborted reads (G1a): reads, by a committed transaction, of a version that was rolled back"},
    {"anomalies.g1b", "intermediate reads (G1b): reads, by a committed transaction, of a version its writer changed again"},
    {"anomalies.g1c",
     "circular information flow (G1c): cycles of committed transactions each of which read or overwrote "
     "another's write"},
    {"anomalies.g_single",
     "read skew (G-single): cycles with exactly one anti-dependency: a transaction missed another's write "
     "and yet depends on it (read skew, a lost update)"},
    {"anomalies.g2_item", "write skew (G2-item): cycles with more than one anti-dependency, each on a row read"},
    {"anomalies.g2",
     "anti-dependency cycles (G2): cycles with more than one anti-dependency, one of them a WHERE's "
     "(a row it did not see)"},
};

// The sessions that ran `txns`, each once, in order.
std::vector<std::string> who_of(const History& h, const std::vector<Txn>& txns) {
  std::vector<std::string> out;
  for (const Txn t : txns)
    if (std::string who = h.who(t); !who.empty() && std::find(out.begin(), out.end(), who) == out.end()) out.push_back(std::move(who));
  return out;
}

class Graph {
 public:
  explicit Graph(const History& h) : h_(h) {}

  void add(Txn from, Txn to, Kind kind, const std::function<std::string()>& why) {
    if (from == to) return;
    unsigned& mask = edges_[from][to];
    if ((mask & kind) == 0) reasons_.emplace(std::make_tuple(from, to, kind), why());
    mask |= kind;
    nodes_.insert(from);
    nodes_.insert(to);
  }
  const std::map<Txn, std::map<Txn, unsigned>>& edges() const { return edges_; }
  const std::set<Txn>& nodes() const { return nodes_; }
  std::string reason(Txn from, Txn to, unsigned mask) const {
    for (const Kind k : {kRwItem, kRwPredicate, kWr, kWw})
      if (mask & k)
        if (auto it = reasons_.find(std::make_tuple(from, to, k)); it != reasons_.end()) return it->second;
    return {};
  }

  // Strongly connected components of the edges of `mask` (Kosaraju's, without recursion): a
  // component number per node.
  std::map<Txn, int> components(unsigned mask) const {
    std::vector<Txn> order;
    std::set<Txn> seen;
    for (const Txn start : nodes_) {
      if (!seen.insert(start).second) continue;
      std::vector<std::pair<Txn, std::map<Txn, unsigned>::const_iterator>> stack;
      const auto children = [&](Txn t) -> const std::map<Txn, unsigned>& {
        static const std::map<Txn, unsigned> none;
        const auto it = edges_.find(t);
        return it == edges_.end() ? none : it->second;
      };
      stack.emplace_back(start, children(start).begin());
      while (!stack.empty()) {
        auto& [t, it] = stack.back();
        if (it == children(t).end()) {
          order.push_back(t);
          stack.pop_back();
          continue;
        }
        const auto [next, m] = *it++;
        if ((m & mask) && seen.insert(next).second) stack.emplace_back(next, children(next).begin());
      }
    }
    std::map<Txn, std::vector<Txn>> reverse;
    for (const auto& [from, to_list] : edges_)
      for (const auto& [to, m] : to_list)
        if (m & mask) reverse[to].push_back(from);
    std::map<Txn, int> component;
    int count = 0;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      if (component.count(*it)) continue;
      std::vector<Txn> todo{*it};
      component[*it] = count;
      while (!todo.empty()) {
        const Txn t = todo.back();
        todo.pop_back();
        for (const Txn from : reverse[t])
          if (component.emplace(from, count).second) todo.push_back(from);
      }
      ++count;
    }
    return component;
  }

  // A path from `from` to `to` over the edges of `mask` (breadth first, so a shortest one),
  // each step's node; empty where there is none.
  std::vector<Txn> path(Txn from, Txn to, unsigned mask, std::uint64_t& steps) const {
    std::map<Txn, Txn> parent{{from, from}};
    std::deque<Txn> todo{from};
    while (!todo.empty()) {
      const Txn t = todo.front();
      todo.pop_front();
      if (t == to) {
        std::vector<Txn> out{to};
        while (out.back() != from) out.push_back(parent.at(out.back()));
        std::reverse(out.begin(), out.end());
        return out;
      }
      const auto it = edges_.find(t);
      if (it == edges_.end()) continue;
      for (const auto& [next, m] : it->second) {
        ++steps;
        if ((m & mask) && parent.emplace(next, t).second) todo.push_back(next);
      }
    }
    return {};
  }

  // The cycle `nodes` (the first again at the end implied), each step explained.
  Anomaly explain(const char* metric, const char* name, const std::vector<Txn>& cycle, unsigned mask) const {
    std::string text = fmt::format("{}: ", name);
    for (std::size_t i = 0; i < cycle.size(); ++i) text += h_.name(cycle[i]) + " -> ";
    text += h_.name(cycle.front()) + ": ";
    for (std::size_t i = 0; i < cycle.size(); ++i) {
      const Txn a = cycle[i], b = cycle[(i + 1) % cycle.size()];
      text += (i ? "; " : "") + reason(a, b, edges_.at(a).at(b) & mask);
    }
    return Anomaly{metric, std::move(text), who_of(h_, cycle)};
  }

 private:
  const History& h_;
  std::map<Txn, std::map<Txn, unsigned>> edges_;
  std::map<std::tuple<Txn, Txn, unsigned>, std::string> reasons_;
  std::set<Txn> nodes_;
};

std::string shown(const db::RowValues& values, bool deleted) {
  if (deleted) return "deleted";
  std::string out;
  for (const auto& [column, value] : values.to_values()) out += (out.empty() ? "" : ", ") + column + " = " + db::to_string(value);
  return "(" + out + ")";
}

// The committed versions of each row in the order they were written, which is the order they
// stand in (a writer holds the row until it commits, on both engines; a model that let two
// interleave would show as G0); of each writer's run of versions, the last is the one it left.
struct Versions {
  struct Row {
    std::vector<std::size_t> writes;  // in version order
  };
  std::map<std::pair<std::uint32_t, std::int64_t>, Row> rows;
  std::vector<std::ptrdiff_t> place;  // by write: its place in its row's list (-1: none)

  Versions(const History& h) : place(h.writes().size(), -1) {
    const auto& commits = h.commits();
    for (std::size_t w = 0; w < h.writes().size(); ++w) {
      const auto& write = h.writes()[w];
      if (!write.undone && commits.count(write.txn)) rows[{write.table, write.row}].writes.push_back(w);
    }
    for (auto& [key, row] : rows)
      for (std::size_t i = 0; i < row.writes.size(); ++i) place[row.writes[i]] = static_cast<std::ptrdiff_t>(i);
  }
};

class Anomalies : public Checker {
 public:
  std::vector<MetricInfo> metrics() const override {
    std::vector<MetricInfo> out;
    for (const Metric& m : kMetrics)
      out.push_back({.name = m.name,
                     .unit = "anomalies",
                     .meaning = std::string(m.meaning) + " (sessions and Lua workloads; docs/anomalies.md)",
                     .finding = true});
    out.push_back({.name = "anomalies.unchecked",
                   .unit = "trials",
                   .meaning = "trials whose history of transactions was too long to check for anomalies (sessions and Lua workloads; "
                              "docs/anomalies.md)",
                   .per_operation = false});
    return out;
  }

  void check(const Trial& trial, Findings& out) const override {
    if (trial.database != nullptr && trial.database->history() != nullptr) find_anomalies(*trial.database->history(), out);
  }
};

// Counts each cycle once, as its most specific class, and explains the first of each.
void classify(const Graph& g, std::uint64_t& steps, Findings& out, std::vector<Anomaly>& examples);

void analyse(const History& h, Findings& out, std::vector<Anomaly>& examples) {
  for (const Metric& m : kMetrics) out.set(m.name, 0);
  if (h.overflowed()) {
    out.set("anomalies.unchecked", 1);
    return;
  }
  std::uint64_t steps = 0;
  Graph g(h);
  const Versions versions(h);
  const auto& writes = h.writes();
  const auto& commits = h.commits();
  const auto committed = [&](Txn t) { return commits.count(t) > 0; };
  const auto row_name = [&](const History::Write& w) { return fmt::format("{} row id = {}", h.table_name(w.table), w.row); };

  const auto is_last_of_writer = [&](const Versions::Row& row, std::size_t place) {
    return place + 1 == row.writes.size() || writes[row.writes[place + 1]].txn != writes[row.writes[place]].txn;
  };
  // The version a writer's run of versions ends with, from one of them.
  const auto run_end = [&](const Versions::Row& row, std::size_t place) {
    while (!is_last_of_writer(row, place)) ++place;
    return row.writes[place];
  };
  // ww: each writer of a row after the one before it.
  for (const auto& [key, row] : versions.rows)
    for (std::size_t i = 1; i < row.writes.size(); ++i) {
      if (writes[row.writes[i - 1]].txn == writes[row.writes[i]].txn) continue;
      const auto &before = writes[row.writes[i - 1]], &after = writes[run_end(row, i)];
      g.add(before.txn, after.txn, kWw, [&] {
        return fmt::format("{} overwrote {} {} with {}", h.name(after.txn), row_name(before), shown(before.values, before.deleted),
                           shown(after.values, after.deleted));
      });
    }
  // The first version after `place` in the row's list by another writer than the one there.
  const auto next_writer = [&](const Versions::Row& row, std::ptrdiff_t place) -> std::optional<std::size_t> {
    const Txn writer = place < 0 ? History::kSeed : writes[row.writes[static_cast<std::size_t>(place)]].txn;
    for (std::size_t i = static_cast<std::size_t>(place + 1); i < row.writes.size(); ++i)
      if (place < 0 || writes[row.writes[i]].txn != writer) return run_end(row, i);
    return std::nullopt;
  };

  // Each statement's reading: the rows it looked at, then every row of its table.
  std::map<std::uint32_t, std::map<std::int64_t, std::size_t>> looked_at;  // by predicate: row -> write
  for (const auto& r : h.reads()) looked_at[r.predicate][r.row] = r.write;
  std::optional<Anomaly> g1a_example, g1b_example;
  for (std::uint32_t p = 0; p < h.predicates().size(); ++p) {
    const History::Predicate& pred = h.predicates()[p];
    if (!committed(pred.txn)) continue;
    const Txn reader = pred.txn;
    const auto matches = [&](const History::Write& w) { return !w.deleted && History::matches(pred, w.values); };
    const std::string reading = fmt::format("its {}", History::text(pred));
    const auto& seen = looked_at[p];
    // Reads of versions that did not stand.
    for (const auto& [id, w] : seen) {
      const auto& write = writes[w];
      if (write.txn == reader) continue;
      if (write.undone) {
        out.add("anomalies.g1a", 1);
        if (!g1a_example)
          g1a_example = Anomaly{"anomalies.g1a",
                                fmt::format("G1a: {} read {} {} in {}, which {} wrote and rolled back", h.name(reader), row_name(write),
                                            shown(write.values, false), reading, h.name(write.txn)),
                                who_of(h, {reader, write.txn})};
      } else if (versions.place[w] >= 0 &&
                 !is_last_of_writer(versions.rows.at({write.table, write.row}), static_cast<std::size_t>(versions.place[w]))) {
        out.add("anomalies.g1b", 1);
        if (!g1b_example)
          g1b_example = Anomaly{"anomalies.g1b",
                                fmt::format("G1b: {} read {} {} in {}, a version {} changed again before it committed", h.name(reader),
                                            row_name(write), shown(write.values, false), reading, h.name(write.txn)),
                                who_of(h, {reader, write.txn})};
      }
    }
    for (auto it = versions.rows.lower_bound({pred.table, std::numeric_limits<std::int64_t>::min()});
         it != versions.rows.end() && it->first.first == pred.table; ++it) {
      const Versions::Row& row = it->second;
      steps += row.writes.size() + 1;
      if (steps > kMostSteps) {
        out.set("anomalies.unchecked", 1);
        for (const Metric& m : kMetrics) out.set(m.name, 0);
        return;
      }
      // The version it saw: the one it looked at, else the last committed at its view.
      std::ptrdiff_t at = -1;
      bool item = false;
      if (const auto s = seen.find(it->first.second); s != seen.end() && versions.place[s->second] >= 0) {
        at = versions.place[s->second];
        item = matches(writes[s->second]);
      } else if (pred.rows_only) {
        continue;  // a row it did not return says nothing of it
      } else {
        for (std::size_t i = 0; i < row.writes.size(); ++i)
          if (commits.at(writes[row.writes[i]].txn) <= pred.view || writes[row.writes[i]].txn == History::kSeed)
            at = static_cast<std::ptrdiff_t>(i);
      }
      const auto match_at = [&](std::ptrdiff_t i) { return i >= 0 && matches(writes[row.writes[static_cast<std::size_t>(i)]]); };
      // The version's writer run begins where: the match before it is the previous writer's.
      const auto run_start = [&](std::ptrdiff_t i) {
        while (i > 0 && writes[row.writes[static_cast<std::size_t>(i - 1)]].txn == writes[row.writes[static_cast<std::size_t>(i)]].txn) --i;
        return i;
      };
      if (pred.rows_only && !item) continue;  // looked at on the way, not returned
      if (at >= 0) {
        const auto& write = writes[row.writes[static_cast<std::size_t>(at)]];
        if (item || match_at(at) != match_at(run_start(at) - 1))
          g.add(write.txn, reader, kWr, [&] {
            return fmt::format("{} read {} {} in {}, as {} wrote it", h.name(reader), row_name(write), shown(write.values, write.deleted),
                               reading, h.name(write.txn));
          });
      }
      if (item)
        if (const auto next = next_writer(row, at)) {
          const auto& w = writes[*next];
          g.add(reader, w.txn, kRwItem, [&] {
            return fmt::format("{} read {} in {} and {} wrote its next version {}", h.name(reader), row_name(w), reading, h.name(w.txn),
                               shown(w.values, w.deleted));
          });
        }
      if (pred.rows_only) continue;  // its answer was its rows: no later version changes it
      // Later versions that change whether the row matches: the last of each writer's run.
      for (std::size_t i = static_cast<std::size_t>(at + 1); i < row.writes.size(); ++i) {
        if (!is_last_of_writer(row, i)) continue;
        const std::ptrdiff_t before = run_start(static_cast<std::ptrdiff_t>(i)) - 1;
        if (match_at(static_cast<std::ptrdiff_t>(i)) == match_at(before)) continue;
        const auto& w = writes[row.writes[i]];
        g.add(reader, w.txn, kRwPredicate, [&] {
          return fmt::format("{} did not see {}'s version {} of {} in {}, which changes whether it matches", h.name(reader), h.name(w.txn),
                             shown(w.values, w.deleted), row_name(w), reading);
        });
      }
    }
  }
  if (g1a_example) examples.push_back(std::move(*g1a_example));
  if (g1b_example) examples.push_back(std::move(*g1b_example));
  classify(g, steps, out, examples);
}

}  // namespace

void find_anomalies(const History& h, Findings& out) {
  std::vector<Anomaly> found;
  analyse(h, out, found);
  for (auto& a : found) out.examples.push_back(std::move(a.text));
}

std::vector<Anomaly> explain_anomalies(const History& h) {
  Findings counts;
  std::vector<Anomaly> found;
  analyse(h, counts, found);
  return found;
}

namespace {
void classify(const Graph& g, std::uint64_t& steps, Findings& out, std::vector<Anomaly>& examples) {
  const auto cyclic_components = [&](unsigned mask, unsigned needs) {
    // Components of `mask`'s edges with an edge of `needs` inside: one cycle each.
    const std::map<Txn, int> component = g.components(mask);
    std::map<int, std::pair<Txn, Txn>> found;  // a component -> an edge of `needs` inside it
    for (const auto& [from, to_list] : g.edges())
      for (const auto& [to, m] : to_list)
        if ((m & mask & needs) && component.at(from) == component.at(to)) found.emplace(component.at(from), std::make_pair(from, to));
    return found;
  };
  const auto cycle_through = [&](Txn from, Txn to, unsigned mask) {
    std::vector<Txn> cycle = g.path(to, from, mask, steps);
    std::rotate(cycle.begin(), cycle.end() - 1, cycle.end());  // from first, then to, ...
    return cycle;
  };
  const auto report = [&](const char* metric, const char* name, const std::map<int, std::pair<Txn, Txn>>& found, unsigned mask) {
    out.set(metric, static_cast<double>(found.size()));
    if (!found.empty())
      examples.push_back(g.explain(metric, name, cycle_through(found.begin()->second.first, found.begin()->second.second, mask), mask));
  };
  report("anomalies.g0", "G0", cyclic_components(kWw, kWw), kWw);
  const auto g1c = cyclic_components(kWw | kWr, kWr);
  report("anomalies.g1c", "G1c", g1c, kWw | kWr);
  // G-single: an anti-dependency a -> b that b's ww and wr edges lead back from. Only an edge
  // inside a component of every edge can close a cycle.
  const std::map<Txn, int> all = g.components(kWw | kWr | kRw);
  std::set<std::pair<Txn, Txn>> single;
  std::optional<Anomaly> single_example;
  for (const auto& [from, to_list] : g.edges())
    for (const auto& [to, m] : to_list) {
      if (!(m & kRw) || all.at(from) != all.at(to) || steps > kMostSteps) continue;
      std::vector<Txn> back = g.path(to, from, kWw | kWr, steps);
      if (back.empty()) continue;
      single.insert({from, to});
      if (!single_example) {
        back.pop_back();
        back.insert(back.begin(), from);
        single_example = g.explain("anomalies.g_single", "G-single", back, kWw | kWr | kRw);
      }
    }
  if (steps > kMostSteps) {
    out.set("anomalies.unchecked", 1);
    for (const Metric& m : kMetrics) out.set(m.name, 0);
    examples.clear();
    return;
  }
  out.set("anomalies.g_single", static_cast<double>(single.size()));
  if (single_example) examples.push_back(std::move(*single_example));
  // G2-item, G2: a component holding an anti-dependency that no G-single explains.
  const auto beyond_single = [&](unsigned mask) {
    const std::map<Txn, int> component = g.components(mask);
    std::map<int, std::pair<Txn, Txn>> found;
    for (const auto& [from, to_list] : g.edges())
      for (const auto& [to, m] : to_list)
        if ((m & mask & kRw) && component.at(from) == component.at(to) && !single.count({from, to}))
          found.emplace(component.at(from), std::make_pair(from, to));
    return std::make_pair(component, found);
  };
  const auto [item_components, item] = beyond_single(kWw | kWr | kRwItem);
  report("anomalies.g2_item", "G2-item", item, kWw | kWr | kRwItem);
  auto [every_components, every] = beyond_single(kWw | kWr | kRw);
  // A component that holds a G2-item cycle is counted there.
  std::set<int> counted;
  for (const auto& [c, edge] : item) counted.insert(every_components.at(edge.first));
  for (auto it = every.begin(); it != every.end();) it = counted.count(it->first) ? every.erase(it) : std::next(it);
  report("anomalies.g2", "G2", every, kWw | kWr | kRw);
}
}  // namespace

const Checker& anomalies() {
  static const Anomalies checker;
  return checker;
}
}  // namespace models::checkers
