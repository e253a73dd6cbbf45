#include "models/faults/crashes.hpp"

namespace models {

void inject_crashes(Node& node, CrashesConfig config) {
  inject_repeatedly(node.engine(), "faults.crash." + node.name(), std::move(config.interval), config.window,
                    [&node, downtime = std::move(config.downtime)](sim::Stream& stream) {
                      if (!node.is_up()) return;
                      node.crash();
                      sim::sleep_for(downtime.sample_duration(stream));
                      node.restart();
                    });
}

}  // namespace models
