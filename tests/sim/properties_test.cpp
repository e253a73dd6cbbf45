// Properties over generated process programs: determinism, replay, seed sensitivity,
// and clean unwinding of processes killed wherever they wait.

#include <catch2/catch.hpp>
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <memory>
#include <ostream>
#include <vector>

#include "support.hpp"

using namespace test;

namespace {

// One step of a generated process.
struct Op {
  enum Kind { sleep_random, sleep_fixed, send, receive, receive_for, spawn_child } kind;
  int arg;  // microseconds, or the target process
};

// A generated world: processes on nodes, with pauses and crashes scheduled by the test.
struct Program {
  int nodes;
  std::vector<std::vector<Op>> processes;
  std::vector<std::pair<int, int>> pauses;  // (at us, node)
};

// Shown by RapidCheck when a property fails.
void showValue(const Op& op, std::ostream& os) {
  static const char* const names[] = {"sleep_random", "sleep_fixed", "send", "receive", "receive_for", "spawn_child"};
  os << names[op.kind] << "(" << op.arg << ")";
}
void showValue(const Program& p, std::ostream& os) {
  os << p.nodes << " nodes;";
  for (std::size_t i = 0; i < p.processes.size(); ++i) {
    os << " p" << i << ":";
    for (const auto& op : p.processes[i]) showValue(op, os << " ");
    os << ";";
  }
  for (const auto& [at_us, node] : p.pauses) os << " pause node-" << node << " at " << at_us << " us;";
}

rc::Gen<Op> gen_op(int process_count) {
  return rc::gen::oneOf(
      rc::gen::construct<Op>(rc::gen::just(Op::sleep_random), rc::gen::inRange(0, 500)),
      rc::gen::construct<Op>(rc::gen::just(Op::sleep_fixed), rc::gen::inRange(0, 3)),
      rc::gen::construct<Op>(rc::gen::just(Op::send), rc::gen::inRange(0, process_count)),
      rc::gen::construct<Op>(rc::gen::just(Op::receive), rc::gen::just(0)),
      rc::gen::construct<Op>(rc::gen::just(Op::receive_for), rc::gen::inRange(0, 300)),
      rc::gen::construct<Op>(rc::gen::just(Op::spawn_child), rc::gen::inRange(0, 100)));
}

rc::Gen<Program> gen_program() {
  return rc::gen::mapcat(rc::gen::pair(rc::gen::inRange(1, 4), rc::gen::inRange(1, 7)), [](std::pair<int, int> shape) {
    const auto [nodes, process_count] = shape;
    return rc::gen::map(
        rc::gen::pair(rc::gen::container<std::vector<std::vector<Op>>>(
                          static_cast<std::size_t>(process_count),
                          rc::gen::resize(12, rc::gen::container<std::vector<Op>>(gen_op(process_count)))),
                      rc::gen::container<std::vector<std::pair<int, int>>>(
                          rc::gen::pair(rc::gen::inRange(0, 2000), rc::gen::inRange(0, nodes)))),
        [nodes](auto parts) { return Program{nodes, std::move(parts.first), std::move(parts.second)}; });
  });
}

struct Guard {
  explicit Guard(int& live) : live_(live) { ++live_; }
  ~Guard() { --live_; }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;
  int& live_;
};

// Runs `program` and returns the trace hash. Every process draws its random sleeps
// from its own stream and records what it receives, so the trace shows the interleaving.
struct World {
  explicit World(const Program& program, sim::EngineConfig c) : engine(c) {
    for (int n = 0; n < program.nodes; ++n) nodes.push_back(engine.add_node("node-" + std::to_string(n)));
    for (std::size_t i = 0; i < program.processes.size(); ++i)
      inboxes.push_back(std::make_unique<sim::Mailbox<int>>("inbox-" + std::to_string(i)));
    received = engine.trace().kind("test.received");
    for (std::size_t i = 0; i < program.processes.size(); ++i) {
      const auto node = nodes[i % nodes.size()];
      engine.spawn(node, "p" + std::to_string(i), [this, &program, i] { body(program.processes[i], i); });
    }
    for (const auto& [at_us, node] : program.pauses)
      engine.after(std::chrono::microseconds(at_us), sim::kWorld,
                   [this, node = nodes[static_cast<std::size_t>(node)]] { engine.pause(node, 300us); });
  }

  void body(const std::vector<Op>& ops, std::size_t me) {
    Guard guard(live_guards);
    auto stream = engine.stream("p" + std::to_string(me));
    for (const Op& op : ops) {
      switch (op.kind) {
        case Op::sleep_random:
          sim::sleep_for(sim::uniform(0us, std::chrono::microseconds(op.arg)).sample_duration(stream));
          break;
        case Op::sleep_fixed: sim::sleep_for(std::chrono::microseconds(op.arg)); break;
        case Op::send: inboxes[static_cast<std::size_t>(op.arg)]->put(static_cast<int>(me)); break;
        case Op::receive:
          if (auto m = inboxes[me]->try_get()) engine.record(received, me, *m);
          break;
        case Op::receive_for:
          try {
            engine.record(received, me, inboxes[me]->get_for(std::chrono::microseconds(op.arg)));
          } catch (const sim::Timeout&) {
            engine.record(received, me, -1);
          }
          break;
        case Op::spawn_child:
          sim::spawn("child", [this, us = op.arg] {
            Guard g(live_guards);
            sim::sleep_for(std::chrono::microseconds(us));
          });
          break;
      }
    }
  }

  std::vector<std::unique_ptr<sim::Mailbox<int>>> inboxes;  // before the engine: outlives its processes
  int live_guards = 0;
  sim::Engine engine;
  std::vector<sim::NodeId> nodes;
  sim::TraceKind received = 0;
};

std::uint64_t run_hash(const Program& program, std::uint64_t seed) {
  World world(program, config(seed));
  return world.engine.run().trace_hash;
}

}  // namespace

TEST_CASE("properties of generated process programs") {
  rc::prop("the same seed gives the same trace hash", [] {
    const auto program = *gen_program();
    const auto seed = *rc::gen::arbitrary<std::uint64_t>();
    RC_ASSERT(run_hash(program, seed) == run_hash(program, seed));
  });

  rc::prop("a recorded run replays identically when the seed is changed", [] {
    const auto program = *gen_program();
    const auto seed = *rc::gen::arbitrary<std::uint64_t>();
    World original(program, config(seed));
    original.engine.choices().start_recording();
    const auto expected = original.engine.run().trace_hash;

    World replayed(program, config(seed + 1));
    replayed.engine.choices().replay(original.engine.choices().record(), sim::AfterRecord::fail);
    RC_ASSERT(replayed.engine.run().trace_hash == expected);
    RC_ASSERT(replayed.engine.choices().replayed() == original.engine.choices().record().answers.size());
  });

  rc::prop("different seeds give different traces", [] {
    auto program = *gen_program();
    // Something the seed decides that no pause can mask: after every pause has ended
    // (they start before 2 ms and last 0.3 ms), a sleep drawn from a 1 s range.
    program.processes[0].push_back(Op{Op::sleep_fixed, 3000});
    program.processes[0].push_back(Op{Op::sleep_random, 1'000'000});
    const auto seed = *rc::gen::arbitrary<std::uint64_t>();
    RC_ASSERT(run_hash(program, seed) != run_hash(program, seed + 1));
  });

  rc::prop("crashing every node, at any point, unwinds every process with nothing left behind", [] {
    const auto program = *gen_program();
    auto c = config(*rc::gen::arbitrary<std::uint64_t>());
    c.event_budget = static_cast<std::uint64_t>(*rc::gen::inRange(1, 60));
    World world(program, c);
    world.engine.run();
    for (auto node : world.nodes) world.engine.crash(node);
    // Run the kill events (each run() has the same small event budget).
    while (world.engine.live_processes() > 0 && world.engine.run().events > 0) {
    }
    RC_ASSERT(world.engine.live_processes() == 0u);
    RC_ASSERT(world.live_guards == 0);
  });
}
