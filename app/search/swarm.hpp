#pragma once
// Swarm testing (Groce et al., ISSTA 2012; TigerBeetle's VOPR): each run's seed also picks
// which of the scenario's faults are on, each listed fault and each other kind with
// probability 1/2, so that faults which mask one another are also tried apart. A run's faults
// are an override of "faults" in its token: it replays and shrinks as any other run.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/search/explore.hpp"

namespace locksim::search {

class Swarm {
 public:
  struct Run {
    Scenario scenario;              // loaded with `set`
    std::string set;                // "faults={...}"; empty: the scenario's own faults
    std::vector<std::string> on;    // the faults on, "pauses.0", "gc_pauses"
  };
  static constexpr std::size_t kMaxFeatures = 16;  // past these, faults are always on

  Swarm(const ExploreOptions& o, const Scenario& s);

  /// The run of seed `seed`: its faults, and the scenario loaded with them (once per set of faults).
  std::shared_ptr<const Run> run(std::uint64_t seed);

 private:
  const ExploreOptions& o_;
  nlohmann::json faults_;
  std::vector<std::pair<std::string, std::optional<std::size_t>>> features_;  // kind, and the item of a list
  std::mutex mutex_;
  std::map<std::uint64_t, std::shared_ptr<const Run>> runs_;  // by mask
};

}  // namespace locksim::search
