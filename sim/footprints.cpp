#include "sim/footprints.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "sim/trace.hpp"

namespace sim {

bool Footprints::dependent(std::size_t a, std::size_t b) const {
  const Step &x = steps[a], &y = steps[b];
  if (x.node == y.node || x.node == 0 || y.node == 0) return true;  // node 0: the world (sim::kWorld)
  for (std::uint32_t i = x.touched; i < touched_end(a); ++i) {
    if (touched[i] == kEverything) return true;
    for (std::uint32_t j = y.touched; j < touched_end(b); ++j)
      if (touched[i] == touched[j] || touched[j] == kEverything) return true;
  }
  for (std::uint32_t j = y.touched; j < touched_end(b); ++j)
    if (touched[j] == kEverything) return true;
  return false;
}

std::uint64_t Footprints::trace_class() const {
  const std::size_t n = steps.size();
  // Each step's name (see the header), from its creator's, which ran before it.
  std::vector<std::uint64_t> name(n);
  std::vector<std::uint32_t> on_node;            // steps so far, by node
  // Events scheduled so far, by step; the last entry counts those scheduled before the first
  // step (the world's start, in the same order in every run).
  std::vector<std::uint32_t> scheduled(n + 1, 0);
  std::vector<std::uint32_t> place(creator.size(), 0);  // by sequence number: its place among its creator's events
  for (std::size_t seq = 0; seq < creator.size(); ++seq) place[seq] = scheduled[creator[seq] < n ? creator[seq] : n]++;
  for (std::size_t q = 0; q < n; ++q) {
    const Step& s = steps[q];
    if (on_node.size() <= s.node) on_node.resize(s.node + 1, 0);
    WordHash h;
    h << s.node << on_node[s.node]++ << static_cast<std::uint64_t>(s.at);
    const std::uint32_t c = s.seq < creator.size() ? creator[s.seq] : kNone;
    if (c != kNone && c < q) h << name[c];
    else h << kEverything;  // scheduled before the run's first step
    if (s.seq < place.size()) h << place[s.seq];
    name[q] = h.value;
  }
  // Everything touched, by thing: (thing, step) in the steps' order; a stream (no top bit) is
  // named by the first step that drew from it and its place in that step's entries. And each
  // step with the number of steps before it that depend on every other, which keep their place.
  WordHash out;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> touches;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> streams;  // stream id -> its name, as met
  std::vector<std::pair<std::uint64_t, std::uint64_t>> placed(n);   // (name, universal steps before it)
  std::uint64_t universals = 0;
  for (std::size_t q = 0; q < n; ++q) {
    placed[q] = {name[q], universals};
    bool universal = steps[q].node == 0;
    for (std::uint32_t i = steps[q].touched; i < touched_end(q); ++i) {
      std::uint64_t thing = touched[i];
      if (thing == kEverything) {
        universal = true;
        continue;
      }
      if ((thing >> 63) == 0) {
        auto it = std::find_if(streams.begin(), streams.end(), [&](const auto& e) { return e.first == thing; });
        if (it == streams.end()) {
          const std::uint64_t named = (WordHash{} << name[q] << (i - steps[q].touched)).value;
          it = streams.insert(streams.end(), {thing, named & ~(std::uint64_t{1} << 63)});  // never a model's object
        }
        thing = it->second;
      }
      touches.emplace_back(thing, static_cast<std::uint32_t>(q));
    }
    if (universal) ++universals;
  }
  std::stable_sort(touches.begin(), touches.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 0; i < touches.size(); ++i) {
    if (i == 0 || touches[i].first != touches[i - 1].first) out << touches[i].first;
    if (i == 0 || touches[i] != touches[i - 1]) out << name[touches[i].second];  // a step touching a thing twice counts once
  }
  std::sort(placed.begin(), placed.end());
  for (const auto& [step, before] : placed) out << step << before;
  return out.value;
}

}  // namespace sim
