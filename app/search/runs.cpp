#include "app/search/runs.hpp"

#include <fmt/format.h>

namespace locksim::search {

FirstHit first_hit(int jobs, std::uint64_t limit, const std::function<bool()>& out_of_time,
                   const std::function<bool(std::uint64_t)>& attempt, const RemoteRuns& remote) {
  std::optional<std::uint64_t> hit;
  std::uint64_t ran = 0;
  const int threads = jobs + remote.ranks.threads();
  OrderedWork<bool> work(
      static_cast<std::size_t>(limit), 4 * static_cast<std::size_t>(threads) + kSearchAhead,
      [&](std::size_t i, bool fired) {
        if (hit) return;  // a run past the finding, taken before it was known
        ran = i + 1;
        if (fired) hit = i;
      },
      [&] { return hit.has_value() || out_of_time(); });
  remote.ranks.run<bool>(
      work, jobs, [&](std::size_t i) -> std::optional<bool> { return attempt(i); }, remote.request,
      [&](std::uint64_t i, std::string&& answer) { return remote.answered(i, std::move(answer)); });
  return {ran, hit};
}

std::string search_fingerprint(const ExploreOptions& o, const Scenario& s, const StrategyChoice& choice, std::uint64_t steps,
                               std::size_t agents) {
  return fmt::format("explore {} {:016x} {} {} {} {} {} {} {} {} {}", s.name, s.hash, choice.shown(), o.mode, o.property, o.depth,
                     o.bound, steps, agents, o.reduction, o.count_all);
}

}  // namespace locksim::search
