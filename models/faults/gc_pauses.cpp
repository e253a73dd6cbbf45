#include "models/faults/gc_pauses.hpp"

namespace models {

void inject_gc_pauses(Node& node, GcPausesConfig config) {
  inject_repeatedly(node.engine(), "faults.gc." + node.name(), std::move(config.interval), config.window,
                    [&node, length = std::move(config.length), on_pause = std::move(config.on_pause)](sim::Stream& stream) {
                      const sim::Duration d = length.sample_duration(stream);
                      if (on_pause) on_pause(d);
                      node.pause(d);
                      sim::sleep_for(d);
                    });
}

}  // namespace models
