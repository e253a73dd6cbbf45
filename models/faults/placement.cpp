#include "models/faults/placement.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "models/faults/schedule.hpp"

namespace models {
namespace {

enum class Kind : std::uint8_t { pause, crash, lose };

// One option of a point: what is placed, and whether before or after the send.
struct Placed {
  Kind kind = Kind::pause;
  bool after = false;
  sim::Duration length{};  // a pause's
};

bool has(const std::vector<sim::NodeId>& nodes, sim::NodeId node) {
  return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
}

class Placement final : public SendPoints {
 public:
  Placement(sim::Engine& engine, PlacementBudget budget, PlacedFaults* placed)
      : engine_(engine), budget_(std::move(budget)), placed_(placed) {}

  bool before(sim::NodeId from, sim::NodeId) override {
    if (!engine_.choices().exploring()) return true;
    options_.clear();
    if (budget_.pauses > 0 && has(budget_.pause_nodes, from))
      for (const sim::Duration length : budget_.pause_lengths) {
        options_.push_back({Kind::pause, false, length});
        options_.push_back({Kind::pause, true, length});
      }
    if (budget_.crashes > 0 && has(budget_.crash_nodes, from)) {
      options_.push_back({Kind::crash, false, {}});
      options_.push_back({Kind::crash, true, {}});
    }
    if (budget_.lost_messages > 0 && has(budget_.loss_nodes, from)) options_.push_back({Kind::lose, false, {}});
    if (options_.empty()) return true;
    if (!stream_) stream_ = engine_.stream(kPlacementStream);
    const std::uint64_t v = stream_.pick(options_.size() + 1);
    if (v == 0) return true;
    const Placed chosen = options_[v - 1];
    spend(chosen.kind);
    if (chosen.after) {
      pending_ = chosen;
      pending_from_ = from;
      return true;
    }
    if (chosen.kind == Kind::lose) return false;
    apply(chosen, from);
    return engine_.is_up(from);  // a node crashed here sends nothing
  }

  void after(sim::NodeId from, sim::NodeId) override {
    if (!pending_ || pending_from_ != from) return;
    const Placed chosen = *pending_;
    pending_.reset();  // a pause suspends here, and other sends are asked meanwhile
    apply(chosen, from);
  }

 private:
  void spend(Kind kind) {
    if (placed_ != nullptr) ++placed_->count;
    switch (kind) {
      case Kind::pause: --budget_.pauses; break;
      case Kind::crash: --budget_.crashes; break;
      case Kind::lose: --budget_.lost_messages; break;
    }
  }

  void apply(const Placed& p, sim::NodeId node) {
    if (p.kind == Kind::pause) {
      if (placed_ != nullptr) placed_->paused += p.length;
      engine_.pause(node, p.length);  // a process of `node` stops here until the pause ends
      return;
    }
    // The restart is arranged first: crashing its own node unwinds the calling process.
    inject_at(engine_, "faults.placed.restart." + engine_.node_name(node), engine_.now() + budget_.downtime,
              [this, node] { engine_.restart(node); });
    engine_.crash(node);
  }

  sim::Engine& engine_;
  PlacementBudget budget_;
  PlacedFaults* placed_;
  sim::Stream stream_;
  std::vector<Placed> options_;
  std::optional<Placed> pending_;
  sim::NodeId pending_from_ = 0;
};

}  // namespace

void place_faults(sim::Engine& engine, Network& network, PlacementBudget budget, PlacedFaults* placed) {
  network.watch_sends(std::make_unique<Placement>(engine, std::move(budget), placed));
}

}  // namespace models
