#include "sim/footprints.hpp"

#include <algorithm>

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

}  // namespace sim
