#pragma once
// What process code calls: the simulated time, sleeping, spawning. These act on the
// engine running on this thread and on the calling process; called outside a process
// (or outside Engine::run) they throw UsageError naming the call.

#include <functional>
#include <string>

#include "sim/engine.hpp"
#include "sim/errors.hpp"

namespace sim {

/// The engine running on this thread. Throws UsageError naming `call` if none is.
Engine& engine(const char* call = "sim::engine");

/// The current simulated (true) time. Models read node clocks; checkers read this.
inline Time now() { return engine("sim::now").now(); }

/// Suspends the calling process for `d` (zero yields to the other events of this instant).
inline void sleep_for(Duration d) { engine("sim::sleep_for").sleep_for(d, "sim::sleep_for"); }
/// Work done inside the current event (rows a statement visits), counted against the event
/// budget (Engine::work); nothing outside a running simulation.
inline void work(std::uint64_t units) {
  if (Engine* e = Engine::current()) e->work(units);
}
/// Suspends the calling process until `t` (at once if `t` has passed).
void sleep_until(Time t);

/// Starts a process on the caller's node (on the world node outside any process).
ProcessId spawn(std::string name, std::function<void()> body, SpawnOptions options = {});

/// The calling process's id, name and node.
ProcessId this_process();
const std::string& this_process_name();
NodeId this_node();
/// Whether the calling process has been killed (its node crashed, or the run is shutting
/// down): it is unwinding with sim::Killed, or will at its next wait. Code that would wait
/// in a destructor (a `finally`'s network call) asks this first: a wait there would throw
/// during the unwinding. False outside a process.
bool this_process_killed();

}  // namespace sim
