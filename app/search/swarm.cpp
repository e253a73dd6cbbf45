#include "app/search/swarm.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace locksim::search {

using nlohmann::json;

Swarm::Swarm(const ExploreOptions& o, const Scenario& s) : o_(o) {
  const json faults = effective_config(s).value("faults", json::object());
  for (const auto& [kind, value] : faults.items()) {
    if (value.is_array())
      for (std::size_t i = 0; i < value.size(); ++i) features_.push_back({kind, i});
    else
      features_.push_back({kind, std::nullopt});
  }
  faults_ = faults;
}

std::shared_ptr<const Swarm::Run> Swarm::run(std::uint64_t seed) {
  std::uint64_t mask = ~std::uint64_t{0};
  if (!features_.empty()) {
    std::uint64_t x = seed ^ 0x5357'4152'4d00'0000ull;  // splitmix64 of the seed: its own bits, not the trial's draws
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    mask = (x ^ (x >> 31)) | ~((std::uint64_t{1} << std::min(features_.size(), kMaxFeatures)) - 1);
  }
  const std::lock_guard lock(mutex_);
  if (auto it = runs_.find(mask); it != runs_.end()) return it->second;
  auto r = std::make_shared<Run>();
  if (!features_.empty()) {
    json faults = json::object();
    for (std::size_t f = 0; f < features_.size(); ++f) {
      const auto& [kind, item] = features_[f];
      const bool on = ((mask >> std::min(f, std::size_t{63})) & 1) != 0;
      if (item) {
        if (!faults.contains(kind)) faults[kind] = json::array();
        if (on) faults[kind].push_back(faults_.at(kind).at(*item));
      } else if (on) {
        faults[kind] = faults_.at(kind);
      }
      if (on) r->on.push_back(item ? fmt::format("{}.{}", kind, *item) : kind);
    }
    r->set = "faults=" + faults.dump();
  }
  std::vector<std::string> sets = o_.sets;
  if (!r->set.empty()) sets.push_back(r->set);
  r->scenario = load_scenario(scenario_path(o_.scenario), sets, {o_.strategy});
  return runs_.emplace(mask, std::move(r)).first->second;
}

}  // namespace locksim::search
